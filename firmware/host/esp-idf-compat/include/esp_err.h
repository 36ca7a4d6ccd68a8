/* esp_err.h (host stand-in) - the ESP-IDF error type and codes the ESP32 port's portable modules use. */
#ifndef HOST_COMPAT_ESP_ERR_H
#define HOST_COMPAT_ESP_ERR_H

typedef int esp_err_t;

#define ESP_OK 0
#define ESP_FAIL (-1)

/** Name of an error code ("ESP_OK", "ESP_FAIL", "UNKNOWN ERROR"), as ESP-IDF's function. */
const char *esp_err_to_name(esp_err_t code);

#endif /* HOST_COMPAT_ESP_ERR_H */
