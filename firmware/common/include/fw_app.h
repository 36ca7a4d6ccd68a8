/*
 * fw_app.h - the test application: the console's command table built from the registered
 * modules (fw_module.h), the boot banner, and the hooks a port's main loop calls.
 */
#ifndef FW_APP_H
#define FW_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw_module.h"
#include "fw_test_slot.h" /* fw_test_running: a port's main loop idles only without a test */

struct netif;
struct fw_cmd;

/**
 * Adds a port's module (e.g. Wi-Fi control, the link delay line): its commands join the table
 * after the common ones, its poll and deadline join fw_app_poll and fw_app_poll_delay_us. Call
 * before fw_app_init. The commands are copied (their strings and functions must stay valid), the
 * module is kept by pointer when it has a poll. Returns false, adding nothing, when the command
 * table (FW_APP_MAX_COMMANDS) or the poll table (FW_APP_MAX_PORT_POLLS) would overflow, a name is
 * already taken, or a command has no function.
 */
bool fw_app_add_module(const struct fw_module *module);

/** fw_app_add_module for a module that is only commands. */
bool fw_app_add_commands(const struct fw_cmd *cmds, size_t count);

/**
 * What a port adds to the device's reports: the role it plays on the network and its own
 * key=value fields in the identity (boot banner, `version`) and in `stats`. Every member may be
 * NULL. The field printers print " key=value" pairs (each with a leading space) on one line.
 */
struct fw_app_report {
    const char *role;           /* identity `role=`: NULL means "endpoint" (the DUT ends the traffic) */
    void (*identity)(void);     /* fields after the common identity fields */
    void (*stats_text)(void);   /* human-readable lines (each ending "\r\n") before `RESULT stats` */
    void (*stats_fields)(void); /* fields appended to `RESULT stats` */
    void (*stats_reset)(void);  /* `stats reset`: zero the port's own counters */
};

/** Sets the port's report (kept by pointer; NULL: none). Call before fw_app_init. */
void fw_app_set_report(const struct fw_app_report *report);

/** The port's report, or NULL. */
const struct fw_app_report *fw_app_report(void);

/**
 * A console personality: the host firmware speaking a stock test firmware's console (Espressif's
 * iperf example, Zephyr's zperf) over the same engines - test equipment for the suite's dialect
 * drivers. Its modules replace the common ones (commands and polls); a port's commands are left
 * out (the stock firmware has none of them), a port's polls still run.
 */
struct fw_personality {
    const char *name;
    const struct fw_module *const *modules;
    size_t module_count;
    const struct fw_console_style *console;
    void (*banner)(void); /* what the firmware prints at boot (no BOOT line) */
};

/** Commands a personality's console has after its own (kept by pointer; one table, at most
 *  FW_APP_MAX_COMMANDS / 2 commands): the host's Espressif Wi-Fi commands. Call before fw_app_init. */
bool fw_app_add_personality_commands(const struct fw_cmd *cmds, size_t count);

/** Sets the personality (kept by pointer; NULL: the project's own console). Call before fw_app_init. */
void fw_app_set_personality(const struct fw_personality *personality);

/** The netif the application runs on (after fw_app_init). */
struct netif *fw_app_netif(void);

/** Starts the application once lwIP and the netif are up; prints the boot banner. */
void fw_app_init(struct netif *netif);

/** Feeds console bytes: to the command line, or to the module that took the console's input. */
void fw_app_console_input(const char *data, size_t len);

/**
 * A module's handler of the console's raw bytes while it owns them: returns how many of `len`
 * bytes it took (at least one unless it released the console; what it did not take goes to the
 * command line again, e.g. the bytes after the end of a transfer).
 */
typedef size_t (*fw_console_owner_fn)(const char *data, size_t len);

/**
 * Called by a running command: every console byte after its line goes to `owner` until
 * fw_app_console_release (an LF completing the line's CR LF is dropped first). False when another
 * module owns the console already.
 */
bool fw_app_console_take(fw_console_owner_fn owner);

/** Gives the console's bytes back to the command line. */
void fw_app_console_release(void);

/** Runs due work (traffic pacing, timeouts, interval reports). */
void fw_app_poll(void);

/** Microseconds until fw_app_poll must run again (UINT64_MAX: no deadline). */
uint64_t fw_app_poll_delay_us(void);

#endif /* FW_APP_H */
