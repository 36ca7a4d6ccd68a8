/*
 * fw_platform.h - what a port (host, QEMU board, SAME70 board, ...) provides to the common
 * application. Everything is called from the single main loop; nothing here may block long.
 */
#ifndef FW_PLATFORM_H
#define FW_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/** Monotonic microseconds since boot. */
uint64_t fw_platform_time_us(void);

/** What fw_platform_busy_us returns when the port cannot tell its CPU's load. */
#define FW_PLATFORM_BUSY_UNKNOWN UINT64_MAX

/** Microseconds the CPU has spent working since boot (the rest of fw_platform_time_us was idle),
 * or FW_PLATFORM_BUSY_UNKNOWN: the host build's process CPU time, a board's main-loop iterations
 * that had something to do (board_common.c). */
uint64_t fw_platform_busy_us(void);

/** Writes console output (may drop bytes if the console cannot take them; never blocks long). */
void fw_platform_console_write(const char *data, size_t len);

/** Reboots the device (or re-executes the program); does not return. */
void fw_platform_restart(void);

/** A random number for lwIP (initial sequence numbers, ports). */
unsigned int fw_platform_random(void);

/** Name of the target the firmware was built for, e.g. "host" or "mps2-an500". */
const char *fw_platform_target(void);

#endif /* FW_PLATFORM_H */
