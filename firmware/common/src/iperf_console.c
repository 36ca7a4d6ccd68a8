/* The `iperf` command: parses it, runs one of the four engines per slot (server, client) and
 * prints every line of the test: progress, interval reports and the RESULT line. */
#include "iperf.h"

#include "fw_inttypes.h"
#include <stdio.h>
#include <string.h>

#include "fw_muldiv.h"
#include "fw_out.h"
#include "fw_test_slot.h"
#include "iperf_cmd.h"
#include "iperf_engine.h"

#define CMD "iperf"

/* One server and one client may run at once (both directions); not two of a kind. */
struct iperf_slot {
    const char *name;                  /* test slot */
    unsigned index;                    /* interval report id */
    const struct iperf_engine *tcp;    /* the slot's engines */
    const struct iperf_engine *udp;
    const struct iperf_engine *engine; /* the running one; NULL: idle */
    struct iperf_config cfg;
    uint64_t interval_mark_us;
    uint64_t interval_mark_bytes;
    uint64_t next_interval_us;
};

static struct iperf_slot slots[2] = {
    {.name = "iperf-server", .index = 1, .tcp = &iperf_tcp_server, .udp = &iperf_udp_server},
    {.name = "iperf-client", .index = 2, .tcp = &iperf_tcp_client, .udp = &iperf_udp_client},
};

static void peer_str(const struct iperf_result *r, char *buf, size_t size)
{
    char a[IP4ADDR_STRLEN_MAX];
    ip4addr_ntoa_r(ip_2_ip4(&r->peer), a, sizeof a);
    snprintf(buf, size, "%s:%u", a, (unsigned)r->peer_port);
}

/* ---- Interval reports (human readable, in the style of iperf-cmd) ------------------------ */

static void interval_start(struct iperf_slot *s, uint64_t now)
{
    s->interval_mark_us = now;
    s->interval_mark_bytes = 0;
    s->next_interval_us = s->cfg.interval_ms ? now + (uint64_t)s->cfg.interval_ms * 1000u : 0;
    fw_printf("[ ID] Interval        Transfer     Bandwidth\r\n");
}

static void print_interval(const struct iperf_slot *s, uint64_t start_us, uint64_t from_us, uint64_t to_us,
                           uint64_t bytes)
{
    uint64_t t0 = (from_us - start_us) / 100000u; /* tenths of a second */
    uint64_t t1 = (to_us - start_us) / 100000u;
    uint64_t dur = to_us - from_us;
    uint64_t rate = dur ? fw_muldiv_u64(bytes, 8000000u, dur) : 0; /* bit/s, no overflow on long runs */
    char unit = s->cfg.format;
    uint64_t div = unit == 'b' ? 1u : unit == 'k' ? 1000u : 1000000u;
    const char *uname = unit == 'b' ? "bits/sec" : unit == 'k' ? "Kbits/sec" : "Mbits/sec";
    fw_printf("[  %u] %3" PRIu64 ".%" PRIu64 "-%3" PRIu64 ".%" PRIu64 " sec  %7" PRIu64
              " KBytes  %" PRIu64 ".%02" PRIu64 " %s\r\n",
              s->index, t0 / 10u, t0 % 10u, t1 / 10u, t1 % 10u, bytes / 1024u, rate / div,
              (rate % div) * 100u / div, uname);
}

static void interval_poll(struct iperf_slot *s, uint64_t now)
{
    const struct iperf_result *r = s->engine->progress();
    if (!r->counting || s->next_interval_us == 0 || now < s->next_interval_us) {
        return;
    }
    print_interval(s, r->start_us, s->interval_mark_us, s->next_interval_us, r->bytes - s->interval_mark_bytes);
    s->interval_mark_us = s->next_interval_us;
    s->interval_mark_bytes = r->bytes;
    s->next_interval_us += (uint64_t)s->cfg.interval_ms * 1000u;
}

/* ---- The RESULT line ------------------------------------------------------------------------ */

static void print_loss_fields(const char *prefix, const struct iperf_server_report *r)
{
    char pct[24];
    char jit[24];
    uint64_t ppm = fw_ppm(r->lost, r->datagrams); /* 64-bit counts (sequence jumps): no overflow */
    fw_printf(" %sdatagrams=%" PRIu64 " %slost=%" PRIu64 " %sloss_pct=%s %soutoforder=%" PRIu64 " %sjitter_ms=%s",
              prefix, r->datagrams, prefix, r->lost, prefix, fw_fmt_ppm_pct(pct, sizeof pct, ppm), prefix,
              r->outoforder, prefix, fw_fmt_ms(jit, sizeof jit, r->jitter_us));
}

static void print_result(const struct iperf_slot *s, const struct iperf_result *r)
{
    const struct iperf_config *cfg = &s->cfg;
    bool client = cfg->role == IPERF_ROLE_CLIENT;
    char peer[32] = "-";
    char mbps[24];
    uint64_t dur = r->start_us != 0 && r->end_us > r->start_us ? r->end_us - r->start_us : 0;
    if (r->start_us != 0 || client) {
        peer_str(r, peer, sizeof peer);
    }
    fw_printf("RESULT iperf role=%s proto=%s status=%s peer=%s bytes=%" PRIu64 " duration_us=%" PRIu64
              " mbps=%s len=%" PRIu32,
              client ? "client" : "server", cfg->udp ? "udp" : "tcp", r->status, peer, r->bytes, dur,
              fw_fmt_mbps(mbps, sizeof mbps, r->bytes, dur), cfg->len);
    if (cfg->udp && !client) {
        print_loss_fields("", &r->received);
    }
    if (cfg->udp && client) {
        char target[24];
        if (cfg->bandwidth) {
            fw_fmt_mbps(target, sizeof target, cfg->bandwidth / 8u, 1000000u);
        } else {
            strcpy(target, "max");
        }
        fw_printf(" sent_datagrams=%" PRIu64 " target_mbps=%s send_errors=%" PRIu64 " server_report=%d",
                  r->datagrams, target, r->send_errors, r->have_report ? 1 : 0);
        if (r->have_report) {
            char smbps[24];
            fw_printf(" server_bytes=%" PRIu64 " server_duration_us=%" PRIu64 " server_mbps=%s", r->report.total_bytes,
                      r->report.duration_us, fw_fmt_mbps(smbps, sizeof smbps, r->report.total_bytes, r->report.duration_us));
            print_loss_fields("server_", &r->report);
        }
    }
    fw_printf("\r\n");
}

/* ---- Engine events -------------------------------------------------------------------------- */

static void on_finished(struct iperf_slot *s, const struct iperf_result *r)
{
    if (r->start_us != 0 && r->end_us > s->interval_mark_us + 100000u && s->cfg.interval_ms) {
        print_interval(s, r->start_us, s->interval_mark_us, r->end_us, r->bytes - s->interval_mark_bytes);
    }
    if (r->start_us != 0) {
        print_interval(s, r->start_us, r->start_us, r->end_us, r->bytes);
    }
    print_result(s, r);
    s->engine = NULL;
    fw_test_release(s->name);
}

static void on_event(void *ctx, enum iperf_event event, const struct iperf_result *r)
{
    struct iperf_slot *s = (struct iperf_slot *)ctx;
    bool server = s->cfg.role == IPERF_ROLE_SERVER;
    char peer[32];
    peer_str(r, peer, sizeof peer);
    switch (event) {
    case IPERF_EVENT_LISTENING:
        fw_printf("iperf: %s server listening on port %u\r\n", s->cfg.udp ? "UDP" : "TCP", (unsigned)s->cfg.port);
        break;
    case IPERF_EVENT_CONNECTING:
        fw_printf("iperf: TCP client connecting to %s\r\n", peer);
        break;
    case IPERF_EVENT_STARTED:
        if (server && !s->cfg.udp) {
            fw_printf("iperf: accepted TCP connection from %s\r\n", peer);
        } else if (server) {
            fw_printf("iperf: UDP datagrams from %s\r\n", peer);
        } else if (s->cfg.udp) {
            fw_printf("iperf: UDP client sending to %s\r\n", peer);
        }
        interval_start(s, r->start_us);
        break;
    case IPERF_EVENT_FINISHED:
        on_finished(s, r);
        break;
    }
}

/* ---- Command, poll, deadline ---------------------------------------------------------------- */

static void start_error(const struct iperf_config *cfg, enum iperf_start_error e)
{
    const char *proto = cfg->udp ? "UDP" : "TCP";
    switch (e) {
    case IPERF_START_OK:
        break;
    case IPERF_START_NO_TCP_PCB:
    case IPERF_START_NO_UDP_PCB:
        fw_err(CMD, "out of %s PCBs", proto);
        break;
    case IPERF_START_BIND_FAILED:
        fw_err(CMD, "cannot bind %s port %u", proto, (unsigned)cfg->port);
        break;
    case IPERF_START_LISTEN_FAILED:
        fw_err(CMD, "cannot listen on %s port %u", proto, (unsigned)cfg->port);
        break;
    case IPERF_START_CONNECT_FAILED:
        fw_err(CMD, "cannot connect %s socket", proto);
        break;
    }
}

static void abort_all(void)
{
    unsigned stopped = 0;
    for (unsigned i = 0; i < 2; i++) {
        const struct iperf_engine *running = slots[i].engine;
        if (running != NULL) {
            running->abort(); /* ends with FINISHED: RESULT ... status=aborted */
            stopped++;
        }
    }
    fw_printf("RESULT iperf action=abort stopped=%u\r\n", stopped);
}

static void iperf_command(int argc, char **argv)
{
    struct iperf_config cfg;
    char err[96];
    if (!iperf_cmd_parse(argc, argv, &cfg, err, sizeof err)) {
        fw_err(CMD, "%s", err);
        return;
    }
    if (cfg.abort) {
        abort_all();
        return;
    }
    struct iperf_slot *s = &slots[cfg.role == IPERF_ROLE_SERVER ? 0 : 1];
    if (!fw_test_claim(CMD, s->name, "iperf")) {
        return;
    }
    s->cfg = cfg;
    s->interval_mark_us = 0;
    s->interval_mark_bytes = 0;
    s->next_interval_us = 0;
    s->engine = cfg.udp ? s->udp : s->tcp;
    enum iperf_start_error e = s->engine->start(&cfg, on_event, s);
    if (e != IPERF_START_OK) {
        s->engine = NULL;
        start_error(&cfg, e);
        fw_test_release(s->name);
    }
}

static void iperf_poll(uint64_t now)
{
    for (unsigned i = 0; i < 2; i++) {
        if (slots[i].engine != NULL) {
            interval_poll(&slots[i], now);
        }
        slots[i].tcp->poll(now);
        slots[i].udp->poll(now);
    }
}

static uint64_t iperf_next_deadline_us(void)
{
    uint64_t next = UINT64_MAX;
    for (unsigned i = 0; i < 2; i++) {
        const struct iperf_slot *s = &slots[i];
        uint64_t t = s->tcp->next_deadline_us();
        uint64_t u = s->udp->next_deadline_us();
        next = t < next ? t : next;
        next = u < next ? u : next;
        if (s->engine != NULL && s->engine->progress()->counting) {
            next = iperf_earlier(next, s->next_interval_us);
        }
    }
    return next;
}

static const struct fw_cmd iperf_cmds[] = {
    {"iperf", "-s | -c IP [-u] [-p port] [-t s | -n bytes] [-l len] [-b bw[kKmMgG]] [-i s] [-S tos] | -a",
     "iperf 2 client/server (TCP, UDP); -a/--abort stops the running test", iperf_command},
};

const struct fw_module iperf_module = {iperf_cmds, sizeof iperf_cmds / sizeof iperf_cmds[0], iperf_poll, iperf_next_deadline_us};
