/*
 * fw_fault_hooks.h - where the common application lets a port plant a defect on purpose (the host
 * port's `fault` command, the suite's own test equipment: fault_inject.h): a table of hooks, none
 * set in a build that plants nothing (every board), so the common code pays one pointer test.
 */
#ifndef FW_FAULT_HOOKS_H
#define FW_FAULT_HOOKS_H

#include <stdint.h>

struct fw_fault_hooks {
    /* the share of the asked rate (-b) the UDP client paces at, in per cent; 0 or 100: as asked */
    uint32_t (*udp_rate_pct)(void);
    /* an iperf test ended (TCP or UDP, client or server), after its result was reported */
    void (*test_finished)(void);
};

/** Sets the port's hooks (NULL: none). Defined in fw_app.c. */
void fw_app_set_fault_hooks(const struct fw_fault_hooks *hooks);

/** The port's hooks, NULL when it plants nothing. */
const struct fw_fault_hooks *fw_app_fault_hooks(void);

#endif /* FW_FAULT_HOOKS_H */
