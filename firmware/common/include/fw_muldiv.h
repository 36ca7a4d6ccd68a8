/*
 * fw_muldiv.h - a * b / d in 64-bit integers that cannot overflow: the firmware's rates, loss
 * percentages and pacing times multiply counters that may exceed 2^32 (bytes over a day at
 * Gbit/s rates, 64-bit iperf sequence numbers) by scale factors (8e6, 1e6). C11 and uint64_t
 * only: the Cortex-M7 boards' arm-none-eabi-gcc has no 128-bit integer type.
 */
#ifndef FW_MULDIV_H
#define FW_MULDIV_H

#include <stdint.h>

/**
 * floor(a * b / d), exact for every operand (the product is formed in 128 bits from 32-bit
 * halves). Saturates at UINT64_MAX when the quotient does not fit in 64 bits or d is 0.
 */
static inline uint64_t fw_muldiv_u64(uint64_t a, uint64_t b, uint64_t d)
{
    if (d == 0) {
        return UINT64_MAX;
    }
    if (a == 0 || b == 0) {
        return 0;
    }
    if (((a | b) >> 32) == 0 || a <= UINT64_MAX / b) {
        return a * b / d; /* the common case: the product fits */
    }
    /* a = q * d + r: a * b / d = q * b + r * b / d, exact, when r * b fits (it does whenever
     * d * b fits: pacing, 8e6 against at most 1e11 bit/s) */
    uint64_t q = a / d;
    uint64_t r = a % d;
    if (r == 0 || r <= UINT64_MAX / b) {
        if (q > UINT64_MAX / b) {
            return UINT64_MAX;
        }
        uint64_t whole = q * b;
        uint64_t part = r * b / d;
        return part > UINT64_MAX - whole ? UINT64_MAX : whole + part;
    }
    /* hi:lo = a * b */
    uint64_t al = (uint32_t)a;
    uint64_t ah = a >> 32;
    uint64_t bl = (uint32_t)b;
    uint64_t bh = b >> 32;
    uint64_t ll = al * bl;
    uint64_t lh = al * bh;
    uint64_t hl = ah * bl;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    uint64_t lo = (mid << 32) | (uint32_t)ll;
    uint64_t hi = ah * bh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    if (hi >= d) {
        return UINT64_MAX; /* the quotient needs more than 64 bits */
    }
    /* restoring division of hi:lo by d; the remainder (hi) stays below d, the quotient fills lo */
    for (int i = 0; i < 64; i++) {
        uint64_t carry = hi >> 63;
        hi = (hi << 1) | (lo >> 63);
        lo <<= 1;
        if (carry != 0 || hi >= d) {
            hi -= d; /* modulo 2^64: with carry set the true remainder is 2^64 + hi */
            lo |= 1u;
        }
    }
    return lo;
}

/** part / whole in parts per million (floor), 0 when whole is 0; no overflow for any counts. */
static inline uint64_t fw_ppm(uint64_t part, uint64_t whole)
{
    return whole != 0 ? fw_muldiv_u64(part, 1000000u, whole) : 0;
}

#endif /* FW_MULDIV_H */
