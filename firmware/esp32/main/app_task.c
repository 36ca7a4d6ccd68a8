#include "app_task.h"

#include <stdint.h>

#include "console_uart.h"
#include "esp32_config.h"
#include "esp_cmd.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#include "fw_app.h"
#include "fw_platform.h"
#include "hil_lock.h"
#include "wifi_cmd.h"

static StaticTask_t task_buf;
static StackType_t task_stack[HIL_APP_TASK_STACK_BYTES]; /* StackType_t is one byte on ESP-IDF */

/* Ticks to wait for console bytes: until the application's next deadline (rounded up to whole
 * ticks; the application catches up on late polls), at most HIL_APP_MAX_WAIT_MS. */
static TickType_t wait_ticks(uint64_t delay_us)
{
    const uint64_t tick_us = 1000000u / configTICK_RATE_HZ;
    const uint64_t max_us = (uint64_t)HIL_APP_MAX_WAIT_MS * 1000u;
    if (delay_us > max_us) {
        delay_us = max_us;
    }
    return (TickType_t)((delay_us + tick_us - 1) / tick_us);
}

static void app_task(void *arg)
{
    (void)arg;
    static char buf[HIL_CONSOLE_READ_CHUNK];
    uint64_t last_wait_us = fw_platform_time_us();
    for (;;) {
        hil_lock();
        uint64_t delay_us = fw_app_poll_delay_us();
        hil_unlock();

        TickType_t wait = wait_ticks(delay_us);
        uint64_t now = fw_platform_time_us();
        if (wait == 0 && now - last_wait_us >= (uint64_t)HIL_APP_MAX_BUSY_MS * 1000u) {
            wait = 1; /* let lower-priority tasks (and the idle task's watchdog feed) run */
        }
        if (wait > 0) {
            last_wait_us = now;
        }
        size_t n = console_uart_read(buf, sizeof buf, wait);

        hil_lock();
        if (n > 0) {
            fw_app_console_input(buf, n);
        }
        fw_app_poll();
        hil_unlock();

        wifi_cmd_service();
        esp_cmd_service();
    }
}

void app_task_start(void)
{
    TaskHandle_t task = xTaskCreateStatic(app_task, HIL_APP_TASK_NAME, HIL_APP_TASK_STACK_BYTES, NULL,
                                          HIL_APP_TASK_PRIORITY, task_stack, &task_buf);
    configASSERT(task != NULL);
}
