#include "fw_parse.h"

#include <stddef.h>

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parses leading decimal digits; *end points after them. Fails on overflow or no digits. */
static bool parse_digits(const char *s, uint64_t limit, uint64_t *value, const char **end)
{
    uint64_t v = 0;
    size_t n = 0;
    while (is_digit(s[n])) {
        uint64_t d = (uint64_t)(s[n] - '0');
        if (v > (limit - d) / 10u) {
            return false;
        }
        v = v * 10u + d;
        n++;
    }
    if (n == 0) {
        return false;
    }
    *value = v;
    *end = s + n;
    return true;
}

bool fw_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;
    const char *end;
    if (s == NULL || !parse_digits(s, UINT32_MAX, &v, &end) || *end != '\0') {
        return false;
    }
    if (v < min || v > max) {
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

bool fw_parse_scaled(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    const char *end;
    if (s == NULL || !parse_digits(s, UINT64_MAX, &v, &end)) {
        return false;
    }
    uint64_t mult = 1;
    switch (*end) {
    case '\0':
        break;
    case 'k': mult = 1000u; break;
    case 'm': mult = 1000u * 1000u; break;
    case 'g': mult = 1000u * 1000u * 1000u; break;
    case 'K': mult = 1024u; break;
    case 'M': mult = 1024u * 1024u; break;
    case 'G': mult = 1024u * 1024u * 1024u; break;
    default:
        return false;
    }
    if (*end != '\0' && end[1] != '\0') {
        return false;
    }
    if (v > UINT64_MAX / mult) {
        return false;
    }
    v *= mult;
    if (v < min || v > max) {
        return false;
    }
    *out = v;
    return true;
}

bool fw_parse_seconds_ms(const char *s, uint32_t min_ms, uint32_t max_ms, uint32_t *out)
{
    uint64_t whole;
    const char *end;
    if (s == NULL || !parse_digits(s, UINT32_MAX, &whole, &end)) {
        return false;
    }
    uint64_t frac_ms = 0;
    if (*end == '.') {
        const char *p = end + 1;
        unsigned digits = 0;
        uint64_t scale = 100;
        while (is_digit(*p)) {
            if (digits == 3) {
                return false; /* finer than a millisecond */
            }
            frac_ms += (uint64_t)(*p - '0') * scale;
            scale /= 10u;
            digits++;
            p++;
        }
        if (digits == 0) {
            return false;
        }
        end = p;
    }
    if (*end != '\0') {
        return false;
    }
    uint64_t ms = whole * 1000u + frac_ms;
    if (ms < min_ms || ms > max_ms) {
        return false;
    }
    *out = (uint32_t)ms;
    return true;
}

bool fw_parse_ipv4(const char *s, uint32_t *out)
{
    uint32_t addr = 0;
    const char *p = s;
    if (s == NULL) {
        return false;
    }
    for (int part = 0; part < 4; part++) {
        uint64_t v;
        const char *end;
        if (!parse_digits(p, 255, &v, &end) || end - p > 3) {
            return false;
        }
        addr = (addr << 8) | (uint32_t)v;
        if (part < 3) {
            if (*end != '.') {
                return false;
            }
            p = end + 1;
        } else if (*end != '\0') {
            return false;
        }
    }
    *out = addr;
    return true;
}
