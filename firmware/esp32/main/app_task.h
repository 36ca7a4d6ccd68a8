/*
 * app_task.h - the "hil_app" FreeRTOS task: the common application's single main loop on ESP-IDF.
 * It reads the console UART (waiting at most until the application's next deadline, and never
 * longer than HIL_APP_MAX_WAIT_MS), feeds the bytes and polls the application holding the lwIP
 * core lock, then runs the port's deferred work (Wi-Fi, esp_console) with the lock released.
 */
#ifndef APP_TASK_H
#define APP_TASK_H

/** Starts the task (static stack); fw_app_init must have run. */
void app_task_start(void);

#endif /* APP_TASK_H */
