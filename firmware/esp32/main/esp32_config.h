/*
 * esp32_config.h - static sizes of the ESP32 port (the common ones are in fw_config.h).
 */
#ifndef ESP32_CONFIG_H
#define ESP32_CONFIG_H

/* ---- The application task ("hil_app") ------------------------------------------------------ */
#define HIL_APP_TASK_NAME "hil_app"
#define HIL_APP_TASK_STACK_BYTES 8192 /* ESP-IDF stack sizes are in bytes */
#define HIL_APP_TASK_PRIORITY 5       /* below lwIP's tcpip thread (18) and the Wi-Fi task (23) */
#define HIL_APP_MAX_WAIT_MS 10        /* longest wait for console bytes between two polls */
#define HIL_APP_MAX_BUSY_MS 100       /* a loop that never waits yields one tick after this long */

/* ---- Console on UART0 (the ESP-IDF console UART; no echo, no line editing) --------------- */
#define HIL_CONSOLE_UART_NUM 0
#define HIL_CONSOLE_RX_BUFFER 1024 /* UART driver ring buffers (bytes; RX must exceed the 128-byte FIFO) */
#define HIL_CONSOLE_TX_BUFFER 4096
#define HIL_CONSOLE_READ_CHUNK 256 /* bytes handed to the console per read */

/* ---- Wi-Fi station -------------------------------------------------------------------------- */
#define HIL_WIFI_EVENT_QUEUE_LEN 16  /* Wi-Fi events from the event-loop task to the app task */
#define HIL_WIFI_REQUEST_QUEUE_LEN 4 /* `wifi` subcommands waiting for the app task */
#define HIL_WIFI_START_WAIT_MS 2000  /* boot: wait this long for the station interface to start */

/* ---- The `esp` command (Espressif's console commands through esp_console_run) ------------ */
#define HIL_ESP_CMDLINE_MAX 256 /* bytes of the command line handed to esp_console_run */
#define HIL_ESP_CMDLINE_ARGS 32 /* esp_console_config_t.max_cmdline_args */

#endif /* ESP32_CONFIG_H */
