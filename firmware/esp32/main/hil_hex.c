#include "hil_hex.h"

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

bool hil_hex_decode(const char *hex, uint8_t *out, size_t size, size_t *len)
{
    size_t n = 0;
    for (const char *p = hex; *p != '\0'; p += 2) {
        int hi = hex_digit(p[0]);
        int lo = p[1] != '\0' ? hex_digit(p[1]) : -1;
        if (hi < 0 || lo < 0 || n == size) {
            return false;
        }
        out[n++] = (uint8_t)(hi << 4 | lo);
    }
    *len = n;
    return true;
}

const char *hil_hex_encode(const uint8_t *data, size_t len, char *out, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    size_t n = 0;
    for (size_t i = 0; i < len && n + 2 < size; i++) {
        out[n++] = digits[data[i] >> 4];
        out[n++] = digits[data[i] & 0x0f];
    }
    if (size > 0) {
        out[n] = '\0';
    }
    return out;
}
