/*
 * test_platform.h - the platform functions (fw_platform.h) for unit tests that run the whole
 * application: console output captured in a buffer, a clock the test moves, and a netif whose
 * frames go nowhere.
 */
#ifndef TEST_PLATFORM_H
#define TEST_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "lwip/netif.h"

/** Everything the application printed since the last test_output_reset(), NUL-terminated. */
extern char test_output[65536];
extern size_t test_output_len;

void test_output_reset(void);

/** The clock fw_platform_time_us() returns (starts at 1 s); tests move it themselves. */
extern uint64_t test_now_us;

/** Adds and brings up an Ethernet netif with the given address (host order) whose frames go nowhere. */
void test_netif_add(struct netif *netif, uint32_t ip, uint32_t netmask);

/** Big-endian stores, as the wire has them. */
void test_put16(uint8_t *b, uint16_t v);
void test_put32(uint8_t *b, uint32_t v);

/**
 * Hands the netif an Ethernet frame to its own MAC from a peer's carrying one IPv4 packet from
 * `src` to `dst` (host order): protocol `proto`, identification `id`, the flags and fragment
 * offset field `frag` (0x2000: more fragments; the offset in 8-byte units), then `len` bytes of
 * `payload`; header checksum computed. A frame the netif refuses is freed. Returns 0 when no
 * receive pbuf could hold the frame (the caller's CHECK says so), 1 otherwise.
 */
int test_inject_ipv4(struct netif *netif, uint32_t src, uint32_t dst, uint8_t proto, uint16_t id, uint16_t frag,
                      const uint8_t *payload, uint16_t len);

#endif /* TEST_PLATFORM_H */
