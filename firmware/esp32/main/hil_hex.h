/*
 * hil_hex.h - hexadecimal byte strings for console tokens (an SSID or passphrase may hold
 * spaces, which a console token cannot).
 */
#ifndef HIL_HEX_H
#define HIL_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * Decodes `hex` (upper or lower case, an even number of digits, nothing else) into out. Returns
 * false, with *len untouched, when it is not valid hex or decodes to more than `size` bytes.
 */
bool hil_hex_decode(const char *hex, uint8_t *out, size_t size, size_t *len);

/** Encodes len bytes as lowercase hex into out (size >= 2 * len + 1); returns out. */
const char *hil_hex_encode(const uint8_t *data, size_t len, char *out, size_t size);

#endif /* HIL_HEX_H */
