/* esp32_platform.c - the port functions of fw_platform.h on ESP-IDF. */
#include "fw_platform.h"

#include "console_uart.h"
#include "esp_random.h"
#include "esp_system.h"
#include "esp_timer.h"
#include "sdkconfig.h"

uint64_t fw_platform_time_us(void)
{
    return (uint64_t)esp_timer_get_time();
}

void fw_platform_console_write(const char *data, size_t len)
{
    console_uart_write(data, len);
}

void fw_platform_restart(void)
{
    console_uart_flush(pdMS_TO_TICKS(200)); /* let "RESULT restart" leave the UART first */
    esp_restart();
}

unsigned int fw_platform_random(void)
{
    return (unsigned int)esp_random();
}

uint64_t fw_platform_busy_us(void)
{
    return FW_PLATFORM_BUSY_UNKNOWN; /* ESP-IDF's idle tasks would tell, with FreeRTOS run-time stats: not wired */
}

const char *fw_platform_target(void)
{
    return CONFIG_IDF_TARGET;
}
