/*
 * main.c - hil-fw on ESP-IDF: the common test application over the Wi-Fi station, driven by the
 * "hil_app" task (app_task.c), with the port's own console commands `wifi` and `esp`.
 */
#include <stdlib.h>

#include "app_task.h"
#include "console_uart.h"
#include "esp32_config.h"
#include "esp_cmd.h"
#include "esp_err.h"
#include "esp_event.h"
#include "esp_log.h"
#include "esp_netif.h"
#include "fw_app.h"
#include "fw_console.h"
#include "hil_lock.h"
#include "nvs_flash.h"
#include "sdkconfig.h"
#include "wifi_cmd.h"
#include "wifi_sta.h"

static const struct fw_cmd port_commands[] = {
    {"wifi", WIFI_CMD_USAGE, "Wi-Fi station with a static IPv4 address; SSID and passphrase as hex", wifi_command},
    {"esp", ESP_CMD_USAGE, "run one of Espressif's console commands (their iperf and ping, for comparison)",
     esp_command},
};

/* The Wi-Fi driver keeps its PHY calibration in NVS (network credentials stay in RAM). */
static void init_nvs(void)
{
    esp_err_t err = nvs_flash_init();
    if (err == ESP_ERR_NVS_NO_FREE_PAGES || err == ESP_ERR_NVS_NEW_VERSION_FOUND) {
        ESP_ERROR_CHECK(nvs_flash_erase());
        err = nvs_flash_init();
    }
    ESP_ERROR_CHECK(err);
}

void app_main(void)
{
#if CONFIG_HIL_QUIET_LOGS
    esp_log_level_set("*", ESP_LOG_WARN); /* ESP-IDF's own log lines between protocol lines */
#endif
    init_nvs();
    ESP_ERROR_CHECK(esp_netif_init());
    ESP_ERROR_CHECK(esp_event_loop_create_default());
    ESP_ERROR_CHECK(console_uart_init());
    ESP_ERROR_CHECK(wifi_sta_init());
    ESP_ERROR_CHECK(esp_cmd_init());
    if (!fw_app_add_commands(port_commands, sizeof port_commands / sizeof port_commands[0])) {
        abort(); /* FW_APP_MAX_COMMANDS too small: a build error in effect */
    }
    (void)wifi_sta_wait_started(pdMS_TO_TICKS(HIL_WIFI_START_WAIT_MS)); /* the banner's MAC */

    hil_lock();
    fw_app_init(wifi_sta_lwip_netif());
    hil_unlock();

    app_task_start();
}
