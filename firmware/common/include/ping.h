/*
 * ping.h - ICMP echo client on lwIP's raw API. Echo replies to others come from lwIP itself.
 *   ping <IP> [-c count] [-i interval_s] [-s size] [-W timeout_s] [-q]
 *   ping -a | --abort
 * Prints one line per reply or timeout (none with -q), then "RESULT ping target=... sent=...
 * received=... loss_pct=... min_ms=... avg_ms=... max_ms=... mdev_ms=..." (mdev: the standard
 * deviation of the round-trip times, as ping(8)). An interval of 0 sends the next request as soon
 * as the previous one is answered or timed out; with -q such a flood is not slowed down by the
 * console (a 115200-baud UART carries ~200 reply lines a second).
 */
#ifndef PING_H
#define PING_H

#include <stdbool.h>
#include <stdint.h>

#include "fw_module.h"

struct ping_config {
    bool abort;
    uint32_t target; /* host order */
    uint32_t count;
    uint32_t interval_ms;
    uint32_t size;   /* ICMP payload bytes */
    uint32_t timeout_ms;
    bool quiet; /* -q: no line per reply or timeout, only the final line */
};

bool ping_cmd_parse(int argc, char **argv, struct ping_config *cfg, char *err, unsigned err_size);

/** The `ping` command with its poll and deadline (fw_modules.c). */
extern const struct fw_module ping_module;

#endif /* PING_H */
