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

#endif /* TEST_PLATFORM_H */
