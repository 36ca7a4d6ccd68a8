/*
 * ping.h - ICMP echo client on lwIP's raw API. Echo replies to others come from lwIP itself.
 *   ping <IP> [-c count] [-i interval_s] [-s size] [-W timeout_s] [-q]
 *   ping -a | --abort
 * Prints one line per reply or timeout (none with -q), then "RESULT ping target=... sent=...
 * received=... loss_pct=... min_ms=... avg_ms=... max_ms=... mdev_ms=... rejected=..." (a reply
 * counts only with a valid ICMP checksum and the payload the request carried; rejected: those
 * that did not; mdev: the standard
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

/** What a finished ping run measured (round-trip times in microseconds). */
struct ping_summary {
    const char *status; /* ok, aborted */
    uint32_t target;    /* host order */
    uint32_t size;
    uint32_t sent;
    uint32_t received;
    uint64_t min_us, mean_us, max_us, mdev_us;
    uint64_t elapsed_us; /* first request to the end */
    bool last_answered;  /* the last request got its reply */
    uint32_t rejected;   /* echo replies from the target with the run's id whose ICMP checksum or payload
                          * was wrong (corrupted or forged): never counted as received */
};

/**
 * How a run is printed: the project's console (the `ping` command) or a console personality's
 * (Espressif's `ping`, Zephyr's `net ping`). Every member may be NULL (nothing printed).
 */
struct ping_printer {
    void (*start)(const struct ping_config *cfg);
    void (*reply)(uint32_t bytes, uint32_t from, uint16_t seq, uint8_t ttl, uint64_t rtt_us);
    void (*timeout)(uint32_t target, uint16_t seq);
    void (*finish)(const struct ping_summary *summary);
};

/**
 * Starts a run printed by `out` (kept by pointer); false, with the reason in err, when the test
 * slot is taken or lwIP has no RAW PCB left. Runs from ping_engine's poll.
 */
bool ping_start(const struct ping_config *cfg, const struct ping_printer *out, char *err, unsigned err_size);

/** Ends a running run with status "aborted" (its finish is printed); false when none runs. */
bool ping_abort(void);

/** The `ping` command with its poll and deadline (fw_modules.c). */
extern const struct fw_module ping_module;

/** The ping engine's poll and deadline alone, for a console personality's module list. */
extern const struct fw_module ping_engine;

#endif /* PING_H */
