/*
 * console_uart.h - the test console on UART0 through ESP-IDF's UART driver: raw bytes in, raw
 * bytes out. No echo and no line editing (unlike esp_console's REPL), so a Wi-Fi passphrase sent
 * to `wifi connect` never comes back on the serial line.
 */
#ifndef CONSOLE_UART_H
#define CONSOLE_UART_H

#include <stddef.h>

#include "esp_err.h"
#include "freertos/FreeRTOS.h"

/** Installs the UART driver on the console UART and routes stdout (ESP-IDF logs) through it. */
esp_err_t console_uart_init(void);

/** Waits up to `wait` ticks for the first byte, then takes what else has arrived; returns the count. */
size_t console_uart_read(char *buf, size_t size, TickType_t wait);

/** Queues bytes for sending (blocks only while the driver's transmit buffer is full). */
void console_uart_write(const char *data, size_t len);

/** Waits up to `wait` ticks until everything queued has been sent (before a restart). */
void console_uart_flush(TickType_t wait);

#endif /* CONSOLE_UART_H */
