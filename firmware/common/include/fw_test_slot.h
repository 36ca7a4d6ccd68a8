/*
 * fw_test_slot.h - which tests run at once: a test claims a named slot before it starts and
 * releases it when its final line is printed.
 */
#ifndef FW_TEST_SLOT_H
#define FW_TEST_SLOT_H

#include <stdbool.h>

/**
 * Claims a test slot `name` (e.g. "iperf-client") of `group` (e.g. "iperf"). Tests of one group
 * may run together under different names (an iperf server and client: both directions at once),
 * and a ping beside iperf tests (latency under load from the DUT's console); anything else is refused with "ERR <cmd> busy: <running> running" (nothing printed when cmd is
 * NULL: a console personality says it its own way).
 */
bool fw_test_claim(const char *cmd, const char *name, const char *group);

/** Frees the slot `name` (nothing when it is not held). */
void fw_test_release(const char *name);

/** True while any test holds a slot. */
bool fw_test_running(void);

/** Frees every slot (application start). */
void fw_test_slots_reset(void);

#endif /* FW_TEST_SLOT_H */
