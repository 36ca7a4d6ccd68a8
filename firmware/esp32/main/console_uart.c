#include "console_uart.h"

#include <stdbool.h>

#include "driver/uart.h"
#include "esp_idf_version.h"
#include "esp32_config.h"

#if ESP_IDF_VERSION >= ESP_IDF_VERSION_VAL(5, 3, 0)
#include "driver/uart_vfs.h"
#define console_vfs_use_driver(port) uart_vfs_dev_use_driver(port)
#else
#include "esp_vfs_dev.h"
#define console_vfs_use_driver(port) esp_vfs_dev_uart_use_driver(port)
#endif

static bool installed;

esp_err_t console_uart_init(void)
{
    /* The bootloader and startup code already configured the console UART (pins, baud rate
     * CONFIG_ESP_CONSOLE_UART_BAUDRATE); installing the driver keeps that configuration. */
    esp_err_t err = uart_driver_install(HIL_CONSOLE_UART_NUM, HIL_CONSOLE_RX_BUFFER, HIL_CONSOLE_TX_BUFFER, 0,
                                        NULL, 0);
    if (err != ESP_OK) {
        return err;
    }
    installed = true;
    /* stdout/stderr (ESP_LOG, Espressif's console commands) through the same driver, so their
     * lines and the firmware's are queued whole instead of interleaving byte by byte. */
    console_vfs_use_driver(HIL_CONSOLE_UART_NUM);
    return ESP_OK;
}

size_t console_uart_read(char *buf, size_t size, TickType_t wait)
{
    if (!installed || size == 0) {
        return 0;
    }
    int n = uart_read_bytes(HIL_CONSOLE_UART_NUM, buf, 1, wait);
    if (n <= 0) {
        return 0;
    }
    size_t avail = 0;
    if (size > 1 && uart_get_buffered_data_len(HIL_CONSOLE_UART_NUM, &avail) == ESP_OK && avail > 0) {
        if (avail > size - 1) {
            avail = size - 1;
        }
        int more = uart_read_bytes(HIL_CONSOLE_UART_NUM, buf + 1, (uint32_t)avail, 0);
        if (more > 0) {
            n += more;
        }
    }
    return (size_t)n;
}

void console_uart_write(const char *data, size_t len)
{
    if (installed && len > 0) {
        uart_write_bytes(HIL_CONSOLE_UART_NUM, data, len);
    }
}

void console_uart_flush(TickType_t wait)
{
    if (installed) {
        uart_wait_tx_done(HIL_CONSOLE_UART_NUM, wait);
    }
}
