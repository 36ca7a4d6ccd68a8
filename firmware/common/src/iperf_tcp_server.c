/* iperf TCP server: listens on -p, takes one connection and counts what it receives until the
 * client closes (or -t ends the wait or the test).
 *
 * A connection is not a test until its first byte: one that sends nothing (a port scanner, a
 * hostile client holding the server) is displaced by the next connection, and when it closes or
 * resets before a byte the server just listens on; no result is reported for it. The test (its
 * STARTED event, its time) begins with the connection that sends. */
#include "iperf_engine.h"

#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "fw_platform.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"

enum state {
    ST_IDLE,
    ST_LISTEN,
    ST_ACCEPTED, /* a connection that has sent no byte yet: not a test, displaced by the next one */
    ST_RUNNING,
};

static struct {
    struct iperf_run run;
    enum state state;
    struct tcp_pcb *listen_pcb;
    struct tcp_pcb *pcb;
    struct tcp_pcb *closing_pcb; /* a close that lwIP could not do yet (outlives the test) */
    uint64_t deadline_us;        /* -t: end of the wait or the test; 0 = none */
    uint64_t accepted_us;        /* when the ST_ACCEPTED connection was accepted */
} sv;

static void finish(const char *status)
{
    iperf_tcp_close(&sv.pcb, &sv.closing_pcb);
    iperf_tcp_close(&sv.listen_pcb, &sv.closing_pcb);
    sv.state = ST_IDLE;
    iperf_run_finish(&sv.run, status);
}

/* The silent connection is gone (closed, reset, displaced): listen on for a client. */
static void back_to_listening(void)
{
    sv.state = ST_LISTEN;
    ip_addr_set_zero(&sv.run.result.peer);
    sv.run.result.peer_port = 0;
}

/* A test's session begins: the peer, STARTED at `start_us`. */
static void session_started(struct tcp_pcb *pcb, uint64_t start_us)
{
    ip_addr_copy(sv.run.result.peer, pcb->remote_ip);
    sv.run.result.peer_port = pcb->remote_port;
    sv.state = ST_RUNNING;
    iperf_run_started(&sv.run, start_us);
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    (void)err;
    if (p == NULL) {
        if (sv.state == ST_ACCEPTED) { /* closed before its first byte: not a test */
            iperf_tcp_close(&sv.pcb, &sv.closing_pcb);
            back_to_listening();
            return ERR_OK;
        }
        sv.run.result.end_us = fw_platform_time_us();
        finish("ok");
        return ERR_OK;
    }
    if (sv.state == ST_ACCEPTED) { /* its first byte: the test begins, timed from the accept */
        session_started(pcb, sv.accepted_us);
    }
    sv.run.result.bytes += p->tot_len;
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static void on_err(void *arg, err_t err)
{
    (void)arg;
    sv.pcb = NULL; /* already freed by lwIP */
    if (sv.state == ST_IDLE) {
        return;
    }
    if (sv.state == ST_ACCEPTED) { /* reset before its first byte: not a test */
        back_to_listening();
        return;
    }
    sv.run.result.end_us = fw_platform_time_us();
    finish(err == ERR_RST ? "reset" : "error");
}

static err_t on_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK || newpcb == NULL) {
        return ERR_VAL;
    }
    bool keep_silent = !fw_guard_on(FW_GUARD_TCP_SILENT_CLIENT); /* a planted defect (fw_fault_hooks.h) */
    if (sv.state == ST_ACCEPTED && !keep_silent) {
        iperf_tcp_abort(&sv.pcb); /* silent so far: the new connection displaces it */
        sv.state = ST_LISTEN;
    }
    if (sv.state != ST_LISTEN) {
        tcp_abort(newpcb); /* one session per test */
        return ERR_ABRT;
    }
    sv.pcb = newpcb;
    newpcb->tos = sv.run.cfg.tos;
    tcp_arg(newpcb, NULL);
    tcp_recv(newpcb, on_recv);
    tcp_err(newpcb, on_err);
    uint64_t now = fw_platform_time_us();
    if (keep_silent) {
        session_started(newpcb, now); /* the defect: a connection is the test from its accept */
    } else {
        sv.state = ST_ACCEPTED;
        sv.accepted_us = now;
    }
    return ERR_OK;
}

static enum iperf_start_error start(const struct iperf_config *cfg, iperf_event_fn on_event, void *ctx)
{
    iperf_run_begin(&sv.run, cfg, on_event, ctx);
    sv.deadline_us = cfg->duration_ms ? fw_platform_time_us() + (uint64_t)cfg->duration_ms * 1000u : 0;
    struct tcp_pcb *pcb = iperf_tcp_new();
    ip_addr_t bind_addr;
    ip_addr_set_ip4_u32(&bind_addr, lwip_htonl(cfg->bind_ip));
    if (pcb == NULL) {
        return IPERF_START_NO_TCP_PCB;
    }
    /* the previous test's connection may still be closing on this port (LAST_ACK: the client's
     * final ACK is on its way, e.g. through the link delay line); accepted pcbs inherit it */
    ip_set_option(pcb, SOF_REUSEADDR);
    if (tcp_bind(pcb, &bind_addr, cfg->port) != ERR_OK) {
        tcp_close(pcb);
        return IPERF_START_BIND_FAILED;
    }
    /* room for a few half-open connections: a SYN that finds them all taken makes room by aborting
     * the oldest (fw_tcp_guard.c), so a SYN flood delays a real client at most by its RTT */
    sv.listen_pcb = tcp_listen_with_backlog(pcb, FW_IPERF_TCP_BACKLOG);
    if (sv.listen_pcb == NULL) {
        tcp_close(pcb);
        return IPERF_START_LISTEN_FAILED;
    }
    tcp_arg(sv.listen_pcb, NULL);
    tcp_accept(sv.listen_pcb, on_accept);
    sv.state = ST_LISTEN;
    iperf_run_event(&sv.run, IPERF_EVENT_LISTENING);
    return IPERF_START_OK;
}

static void poll_test(uint64_t now)
{
    iperf_tcp_retry_close(&sv.closing_pcb);
    if (sv.state != ST_IDLE && sv.deadline_us && now >= sv.deadline_us) {
        sv.run.result.end_us = now;
        if (sv.state == ST_ACCEPTED) {
            iperf_tcp_abort(&sv.pcb); /* a connection that never sent: no test took place */
        }
        finish(sv.state == ST_RUNNING ? "time_limit" : "timeout");
    }
}

static uint64_t next_deadline_us(void)
{
    uint64_t next = sv.closing_pcb != NULL ? 1 : UINT64_MAX;
    return sv.state != ST_IDLE ? iperf_earlier(next, sv.deadline_us) : next;
}

static void abort_test(void)
{
    iperf_tcp_abort(&sv.pcb);
    finish("aborted");
}

static const struct iperf_result *progress(void)
{
    return &sv.run.result;
}

const struct iperf_engine iperf_tcp_server = {start, poll_test, next_deadline_us, abort_test, progress};
