/*
 * esp_cmd.h - the ESP32 port's `esp` console command: runs one of the console commands that
 * Espressif's components register with esp_console (esp_console_init, no REPL):
 *
 *   esp iperf ...   espressif/iperf-cmd (iperf 2 protocol, as ESP-IDF's Wi-Fi iperf example)
 *   esp ping ...    espressif/console_cmd_ping
 *   esp help        the list of registered commands
 *
 * The rest of the line (tokens joined with single spaces) goes to esp_console_run(); their
 * output is their own (stdout). Final line: "RESULT esp ret=<command's return code>", or
 * "ERR esp not found: <name>" / "ERR esp invalid arguments" / "ERR esp <esp_err_t name>".
 * `esp ping` blocks the console until the ping ends; `esp iperf` runs in its own task.
 */
#ifndef ESP_CMD_H
#define ESP_CMD_H

#include "esp_err.h"

#define ESP_CMD_USAGE "COMMAND [ARGS...]  (iperf, ping, help)"

/** esp_console_init and the registration of Espressif's iperf and ping commands. */
esp_err_t esp_cmd_init(void);

/** The console command (app task, lwIP core lock held): only queues the command line. */
void esp_command(int argc, char **argv);

/** Runs a queued command line; app task, lwIP core lock NOT held (the commands use sockets). */
void esp_cmd_service(void);

#endif /* ESP_CMD_H */
