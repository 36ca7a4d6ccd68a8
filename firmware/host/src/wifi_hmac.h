/*
 * wifi_hmac.h - SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) for the simulated air's
 * association (wifi_link.h): a station proves it holds the SoftAP's passphrase without the
 * passphrase crossing the link, as WPA2's handshake does with its MIC.
 */
#ifndef WIFI_HMAC_H
#define WIFI_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define WIFI_SHA256_BYTES 32
#define WIFI_SHA256_BLOCK 64

/** SHA-256 of `len` bytes at `data` into `out`. */
void wifi_sha256(const uint8_t *data, size_t len, uint8_t out[WIFI_SHA256_BYTES]);

/** HMAC-SHA256 of the message made of `parts` pieces (`data[i]`, `len[i]`) under `key`. */
void wifi_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *const *data, const size_t *len, size_t parts,
                      uint8_t out[WIFI_SHA256_BYTES]);

#endif /* WIFI_HMAC_H */
