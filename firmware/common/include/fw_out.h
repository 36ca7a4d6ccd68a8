/*
 * fw_out.h - formatted console output and the two final-line forms of the console protocol:
 *   RESULT <cmd> key=value ...      (success)
 *   ERR <cmd> <reason>              (failure)
 */
#ifndef FW_OUT_H
#define FW_OUT_H

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

/** Formats a rate of `bytes` over `duration_us` as Mbit/s with 3 decimals into buf. */
const char *fw_fmt_mbps(char *buf, unsigned size, uint64_t bytes, uint64_t duration_us);

/** Formats a value in microseconds as milliseconds with 3 decimals. */
const char *fw_fmt_ms(char *buf, unsigned size, uint64_t us);

/** Formats parts-per-million as a percentage with 4 decimals. */
const char *fw_fmt_ppm_pct(char *buf, unsigned size, uint64_t ppm);

#endif /* FW_OUT_H */
