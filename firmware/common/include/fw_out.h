/*
 * fw_out.h - formatted console output and the two final-line forms of the console protocol:
 *   RESULT <cmd> key=value ...      (success)
 *   ERR <cmd> <reason>              (failure)
 * While a command owns the console's bytes (a file transfer, serial_xfer.h), everything printed
 * through fw_printf / fw_err is held back (FW_OUT_HOLD_BYTES) and printed after it, so nothing is
 * interleaved with its data; its own output goes out at once (fw_out_direct, fw_out_raw).
 */
#ifndef FW_OUT_H
#define FW_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define FW_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FW_PRINTF(a, b)
#endif

/** Prints formatted text as is (lines must carry their own "\r\n"). */
void fw_printf(const char *fmt, ...) FW_PRINTF(1, 2);

/** Prints "ERR <cmd> <reason>\r\n"; the reason is formatted. */
void fw_err(const char *cmd, const char *fmt, ...) FW_PRINTF(2, 3);

/** From now on, fw_printf and fw_err keep their text (up to FW_OUT_HOLD_BYTES) instead of printing it. */
void fw_out_hold(void);

/** True while output is held. */
bool fw_out_held(void);

/** Bytes of held output kept so far, and those that did not fit (lost). */
uint32_t fw_out_held_bytes(void);
uint32_t fw_out_held_lost(void);

/** Prints the held output (what fitted) and ends holding. */
void fw_out_release(void);

/** Prints formatted text now, even while output is held (the holder's own lines). */
void fw_out_direct(const char *fmt, ...) FW_PRINTF(1, 2);

/** Writes raw bytes to the console now, even while output is held (the holder's data). */
void fw_out_raw(const void *data, size_t len);

/** Formats a rate of `bytes` over `duration_us` as Mbit/s with 3 decimals into buf. */
const char *fw_fmt_mbps(char *buf, unsigned size, uint64_t bytes, uint64_t duration_us);

/** Formats a value in microseconds as milliseconds with 3 decimals. */
const char *fw_fmt_ms(char *buf, unsigned size, uint64_t us);

/** Formats parts-per-million as a percentage with 4 decimals. */
const char *fw_fmt_ppm_pct(char *buf, unsigned size, uint64_t ppm);

#endif /* FW_OUT_H */
