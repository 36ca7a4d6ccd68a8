/*
 * test_wifi_loop.h - the host's main loop for the Wi-Fi unit tests (test_wifi_cmd.c,
 * test_wifi_air.c): console input and the application under the core lock, then the Wi-Fi work
 * without it, on the clock the test moves (test_platform.h).
 */
#ifndef TEST_WIFI_LOOP_H
#define TEST_WIFI_LOOP_H

#include <stdbool.h>

/** One pass of the loop; `input`: console bytes to feed first (NULL: none). */
void wifi_loop_once(const char *input);

/** Moves the clock by `ms` in 10 ms steps, running the loop at each. */
void wifi_run_ms(unsigned ms);

/** Sends one console line (CR LF added) and runs the loop once. */
void wifi_command_line(const char *line);

/** Whether the application printed `text` since the last test_output_reset(). */
bool wifi_output_has(const char *text);

#endif /* TEST_WIFI_LOOP_H */
