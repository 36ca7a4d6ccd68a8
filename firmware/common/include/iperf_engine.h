/*
 * iperf_engine.h - the four iperf 2 test engines (TCP/UDP x client/server) on lwIP's raw API,
 * and what they share. An engine runs one test at a time and prints nothing: it tells its caller
 * (the console layer, iperf_console.c) what happens through an event callback and hands over an
 * iperf_result, live while the test runs (interval reports) and final when it ends.
 */
#ifndef IPERF_ENGINE_H
#define IPERF_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "iperf_cmd.h"
#include "iperf_wire.h"
#include "lwip/ip_addr.h"

struct tcp_pcb;

enum iperf_event {
    IPERF_EVENT_LISTENING,  /* a server is bound to its port and waits for a client */
    IPERF_EVENT_CONNECTING, /* a TCP client is connecting to result->peer */
    IPERF_EVENT_STARTED,    /* traffic began at result->start_us, with result->peer */
    IPERF_EVENT_FINISHED,   /* the result is final (status set); the engine is idle again */
};

/** Why a test did not start (no event follows). */
enum iperf_start_error {
    IPERF_START_OK,
    IPERF_START_NO_TCP_PCB,
    IPERF_START_NO_UDP_PCB,
    IPERF_START_BIND_FAILED,
    IPERF_START_LISTEN_FAILED,
    IPERF_START_CONNECT_FAILED,
};

struct iperf_result {
    const char *status; /* FINISHED: ok, aborted, timeout, time_limit, refused, reset, ... */
    ip_addr_t peer;
    uint16_t peer_port;
    uint64_t start_us;  /* 0: traffic never started */
    uint64_t end_us;
    uint64_t bytes;     /* client: acked (TCP) / sent (UDP); server: received */
    bool counting;      /* traffic is being counted (interval reports run) */
    /* UDP server: its own accounting, as it reports it to the client */
    struct iperf_server_report received;
    /* UDP client */
    uint64_t datagrams;
    uint64_t send_errors;
    bool have_report; /* the server answered the FIN with its report */
    struct iperf_server_report report;
};

typedef void (*iperf_event_fn)(void *ctx, enum iperf_event event, const struct iperf_result *result);

struct iperf_engine {
    /** Starts a test with cfg; events go to on_event(ctx, ...) until FINISHED. */
    enum iperf_start_error (*start)(const struct iperf_config *cfg, iperf_event_fn on_event, void *ctx);
    /** The test's due work, and the clean-up after one (runs when idle too). */
    void (*poll)(uint64_t now_us);
    /** Absolute time (us) of the next due work, UINT64_MAX if none. */
    uint64_t (*next_deadline_us)(void);
    /** Ends a running test with status "aborted". */
    void (*abort)(void);
    /** The running test's result so far. */
    const struct iperf_result *(*progress)(void);
};

extern const struct iperf_engine iperf_tcp_client;
extern const struct iperf_engine iperf_tcp_server;
extern const struct iperf_engine iperf_udp_client;
extern const struct iperf_engine iperf_udp_server;

/** Runs the due work of all four engines (a console that starts one at a time: the personalities). */
void iperf_engines_poll(uint64_t now_us);

/** The earliest deadline of all four engines (UINT64_MAX: none). */
uint64_t iperf_engines_next_deadline_us(void);

/* ---- Shared by the engines ----------------------------------------------------------------- */

/** One engine's test: its configuration, its caller and its result. */
struct iperf_run {
    struct iperf_config cfg;
    iperf_event_fn on_event;
    void *ctx;
    struct iperf_result result;
};

/** A new test: the result cleared, the peer from cfg (a client's target). */
void iperf_run_begin(struct iperf_run *run, const struct iperf_config *cfg, iperf_event_fn on_event, void *ctx);

/** Reports an event other than STARTED and FINISHED. */
void iperf_run_event(struct iperf_run *run, enum iperf_event event);

/** Traffic starts at now_us: counting begins, STARTED is reported. */
void iperf_run_started(struct iperf_run *run, uint64_t now_us);

/** Ends the test with status (end time now unless set): FINISHED is reported. */
void iperf_run_finish(struct iperf_run *run, const char *status);

/** Bytes the bandwidth limit (-b) allows to be sent by now_us beyond `sent` (UINT64_MAX: no limit). */
uint64_t iperf_paced_allowance(const struct iperf_run *run, uint64_t sent, uint64_t now_us);

/** When the bandwidth limit lets the next byte after `sent` go (at least 1; UINT64_MAX: no limit). */
uint64_t iperf_paced_next_us(const struct iperf_run *run, uint64_t sent);

/**
 * Closes *pcb (callbacks detached) and clears it; a connection lwIP cannot close yet (no memory
 * for the FIN) is left in *closing for iperf_tcp_retry_close.
 */
void iperf_tcp_close(struct tcp_pcb **pcb, struct tcp_pcb **closing);

/** Retries a close that failed; clears *closing once done. */
void iperf_tcp_retry_close(struct tcp_pcb **closing);

/** Aborts *pcb without its error callback and clears it (nothing when NULL). */
void iperf_tcp_abort(struct tcp_pcb **pcb);

/** A new IPv4 TCP PCB; where the pool is full of half-open connections (a SYN flood), the oldest is
 *  aborted to make room (fw_tcp_guard.h, the project's own lwIP builds). NULL: none to be had. */
struct tcp_pcb *iperf_tcp_new(void);

/** Picks the earlier of next and t, where t = 0 means "no deadline". */
static inline uint64_t iperf_earlier(uint64_t next, uint64_t t)
{
    return t != 0 && t < next ? t : next;
}

#endif /* IPERF_ENGINE_H */
