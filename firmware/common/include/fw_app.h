/*
 * fw_app.h - the test application: console commands, the single test slot, and the hooks a
 * port's main loop calls.
 */
#ifndef FW_APP_H
#define FW_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct netif;
struct fw_cmd;

/**
 * Adds a port's own console commands (e.g. Wi-Fi control) after the built-in ones; call before
 * fw_app_init. The entries are copied (the strings and functions must stay valid). Returns false,
 * adding nothing, when the table (FW_APP_MAX_COMMANDS) would overflow or a name is already taken.
 */
bool fw_app_add_commands(const struct fw_cmd *cmds, size_t count);

/** A port module's periodic work, run by fw_app_poll; its deadline joins fw_app_poll_delay_us. */
struct fw_poller {
    void (*poll)(uint64_t now_us);
    uint64_t (*next_deadline_us)(void); /* UINT64_MAX: nothing due */
};

/**
 * Adds a port module's poll (kept by pointer) to the application's; call before fw_app_init.
 * Returns false when FW_APP_MAX_POLLERS are registered already.
 */
bool fw_app_add_poller(const struct fw_poller *poller);

/** Starts the application once lwIP and the netif are up; prints the boot banner. */
void fw_app_init(struct netif *netif);

/** Feeds console bytes. */
void fw_app_console_input(const char *data, size_t len);

/** Runs due work (traffic pacing, timeouts, interval reports). */
void fw_app_poll(void);

/** Microseconds until fw_app_poll must run again (UINT64_MAX: no deadline). */
uint64_t fw_app_poll_delay_us(void);

/* ---- Test slots: what runs at once ------------------------------------------------------ */

/**
 * Claims a test slot `name` (e.g. "iperf-client") of `group` (e.g. "iperf"). Tests of one group
 * may run together under different names (an iperf server and client: both directions at once);
 * anything else is refused with "ERR <cmd> busy: <running> running".
 */
bool fw_test_claim(const char *cmd, const char *name, const char *group);
void fw_test_release(const char *name);

/** True while any test holds a slot. */
bool fw_test_running(void);

#endif /* FW_APP_H */
