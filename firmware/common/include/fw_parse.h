/*
 * fw_parse.h - strict parsers for console arguments. Each returns true on success and leaves
 * *out untouched on failure; no parser accepts leading/trailing garbage, signs or overflow.
 */
#ifndef FW_PARSE_H
#define FW_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/** Decimal unsigned integer within [min, max]. */
bool fw_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/**
 * A count with an optional iperf suffix: lowercase k/m/g are powers of 10^3, uppercase K/M/G
 * powers of 2^10 (iperf 2 and Espressif's iperf-cmd). Used for byte sizes (-n, -l) and for
 * rates in bit/s (-b). The result must lie within [min, max].
 */
bool fw_parse_scaled(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** Seconds with up to three decimals ("10", "0.5", "1.25") to milliseconds within [min, max]. */
bool fw_parse_seconds_ms(const char *s, uint32_t min_ms, uint32_t max_ms, uint32_t *out);

/** Dotted-quad IPv4 address to host-order uint32 (each part 0..255, exactly four parts). */
bool fw_parse_ipv4(const char *s, uint32_t *out);

#endif /* FW_PARSE_H */
