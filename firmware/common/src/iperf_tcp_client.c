/* iperf TCP client: connects, writes -l sized chunks (paced by -b) for -t seconds or -n bytes,
 * then waits for the last ack; bytes counts what the server acknowledged. A peer that stops
 * reading (its window closed, nothing acknowledged for FW_IPERF_PEER_STALL_MS) ends the test with
 * `peer_not_reading`: with -n as soon as that happens, with -t once the time is up. */
#include "iperf_engine.h"

#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "fw_platform.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"

enum state {
    ST_IDLE,
    ST_CONNECTING,
    ST_RUNNING,
    ST_DRAINING, /* stopped writing, waiting for the last ack */
};

static const uint8_t tx_payload[FW_IPERF_TCP_TX_BUF]; /* zeros: no iperf client header flags */

static struct {
    struct iperf_run run;
    enum state state;
    struct tcp_pcb *pcb;
    struct tcp_pcb *closing_pcb; /* a close that lwIP could not do yet (outlives the test) */
    uint64_t deadline_us;        /* end of writing (time mode); 0 = none */
    uint64_t drain_deadline_us;  /* connect timeout, then the last ack's */
    uint64_t written;            /* handed to lwIP */
    uint32_t write_offset;       /* position inside the current -l write */
    uint64_t last_ack_us;        /* the connect, then the last time the peer acknowledged data */
} c;

static void finish(const char *status)
{
    iperf_tcp_close(&c.pcb, &c.closing_pcb);
    c.state = ST_IDLE;
    iperf_run_finish(&c.run, status);
}

static bool done_writing(uint64_t now)
{
    if (c.run.cfg.amount) {
        return c.written >= c.run.cfg.amount;
    }
    return now >= c.deadline_us;
}

/*
 * When a peer that stopped reading (window closed, nothing acknowledged for FW_IPERF_PEER_STALL_MS)
 * ends the test: while draining, and with -n while writing too (-t ends the writing itself); 0: not
 * now (the window is open: a lossy link's late acks are waited for as before).
 */
static uint64_t peer_stall_due_us(void)
{
    if (c.pcb == NULL || c.pcb->snd_wnd != 0 || !fw_guard_on(FW_GUARD_TCP_PEER_STALL)) {
        return 0;
    }
    if (c.state != ST_DRAINING && !(c.state == ST_RUNNING && c.run.cfg.amount)) {
        return 0;
    }
    return c.last_ack_us + FW_IPERF_PEER_STALL_MS * 1000u;
}

static void drain_check(uint64_t now)
{
    if (c.pcb != NULL && c.pcb->unacked == NULL && c.pcb->unsent == NULL) {
        c.run.result.end_us = now;
        finish(c.run.result.bytes > 0 ? "ok" : "stalled"); /* connected but could not send a byte */
    }
}

static void push(void)
{
    uint64_t now = fw_platform_time_us();
    const struct iperf_config *cfg = &c.run.cfg;
    if (c.state == ST_RUNNING && done_writing(now)) {
        c.state = ST_DRAINING;
        c.drain_deadline_us = now + FW_IPERF_DRAIN_TIMEOUT_US;
        /* Nothing more to write: the last partial segment goes now and the FIN right behind it,
         * as a socket client's close sends them. Nagle would hold that segment until everything
         * before it is acknowledged, and a receiver that delays a lone segment's ACK (lwIP: up to
         * its 250-ms timer) then added that to the receiver's test, which ends with the FIN: DUT
         * to DUT, 2-s tests measured 89 % of the link where the data moved at 100 %. The acks are
         * still waited for: they are this side's count. (A FIN that finds no memory now goes with
         * the close at the end, as before.) */
        tcp_nagle_disable(c.pcb);
        (void)tcp_shutdown(c.pcb, 0, 1);
    }
    if (c.state == ST_DRAINING) {
        tcp_output(c.pcb);
        drain_check(now);
        return;
    }
    if (c.state != ST_RUNNING) {
        return;
    }
    uint64_t allowance = iperf_paced_allowance(&c.run, c.written, now);
    bool wrote = false;
    while (allowance > 0) {
        uint32_t space = tcp_sndbuf(c.pcb);
        uint32_t queued = tcp_sndqueuelen(c.pcb);
        if (space == 0 || queued >= TCP_SND_QUEUELEN - 1) {
            break;
        }
        /* a referenced write costs up to two pbufs per segment of the peer's MSS */
        uint32_t by_queue = ((TCP_SND_QUEUELEN - queued) / 2u) * tcp_mss(c.pcb);
        uint64_t chunk = cfg->len - c.write_offset;
        if (chunk > space) {
            chunk = space;
        }
        if (chunk > by_queue) {
            chunk = by_queue;
        }
        if (chunk > sizeof tx_payload) {
            chunk = sizeof tx_payload;
        }
        /* Paced (-b), a write goes out whole once its first byte is due, as iperf's token bucket
         * sends a whole buffer while it has tokens: the allowance gates writes, it does not cut
         * them (cut to the allowance, a slow pace sent slivers: 60-byte writes at 2,000/s went
         * out as 13,632 segments of a few bytes). */
        if (cfg->amount && chunk > cfg->amount - c.written) {
            chunk = cfg->amount - c.written;
        }
        if (chunk == 0) {
            break;
        }
        /* Writes shorter than a segment are copied, as a socket layer does, so lwIP can fill
         * full segments; longer ones are sent by reference from the constant payload. */
        u8_t flags = TCP_WRITE_FLAG_MORE | (chunk < TCP_MSS ? TCP_WRITE_FLAG_COPY : 0);
        err_t err = tcp_write(c.pcb, tx_payload, (u16_t)chunk, flags);
        if (err != ERR_OK) {
            break; /* ERR_MEM: queue full, retried from the sent callback */
        }
        wrote = true;
        c.written += chunk;
        allowance = allowance > chunk ? allowance - chunk : 0;
        c.write_offset = (uint32_t)((c.write_offset + chunk) % cfg->len);
        if (cfg->amount && c.written >= cfg->amount) {
            break;
        }
    }
    if (wrote) {
        tcp_output(c.pcb);
    }
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)arg;
    (void)pcb;
    c.run.result.bytes += len;
    if (c.run.result.bytes > c.written) { /* the ACK of the FIN counts its sequence number: not a byte */
        c.run.result.bytes = c.written;
    }
    c.last_ack_us = fw_platform_time_us();
    push();
    return ERR_OK;
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    (void)err;
    if (p == NULL) {
        /* peer closed its side */
        if (c.state == ST_RUNNING || c.state == ST_DRAINING) {
            c.run.result.end_us = fw_platform_time_us();
            finish(c.state == ST_DRAINING ? "ok" : "peer_closed");
        }
        return ERR_OK;
    }
    tcp_recved(pcb, p->tot_len); /* the server sends nothing of interest: discarded */
    pbuf_free(p);
    return ERR_OK;
}

static void on_err(void *arg, err_t err)
{
    (void)arg;
    c.pcb = NULL; /* already freed by lwIP */
    if (c.state == ST_IDLE) {
        return;
    }
    c.run.result.end_us = fw_platform_time_us();
    if (c.state == ST_CONNECTING) {
        finish(err == ERR_RST ? "refused" : "connect_failed");
    } else {
        finish(err == ERR_RST ? "reset" : "error");
    }
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    (void)pcb;
    if (err != ERR_OK) {
        return err;
    }
    uint64_t now = fw_platform_time_us();
    c.state = ST_RUNNING;
    c.last_ack_us = now;
    if (c.run.cfg.duration_ms) {
        c.deadline_us = now + (uint64_t)c.run.cfg.duration_ms * 1000u;
    }
    iperf_run_started(&c.run, now);
    push();
    return ERR_OK;
}

static enum iperf_start_error start(const struct iperf_config *cfg, iperf_event_fn on_event, void *ctx)
{
    iperf_run_begin(&c.run, cfg, on_event, ctx);
    c.deadline_us = 0;
    c.written = 0;
    c.write_offset = 0;
    c.pcb = iperf_tcp_new();
    if (c.pcb == NULL) {
        return IPERF_START_NO_TCP_PCB;
    }
    c.pcb->tos = cfg->tos;
    if (cfg->nodelay) { /* -N: each write leaves at once, not held while earlier data is unacknowledged */
        tcp_nagle_disable(c.pcb);
    }
    tcp_arg(c.pcb, NULL);
    tcp_err(c.pcb, on_err);
    tcp_recv(c.pcb, on_recv);
    tcp_sent(c.pcb, on_sent);
    c.state = ST_CONNECTING;
    c.drain_deadline_us = fw_platform_time_us() + FW_IPERF_CONNECT_TIMEOUT_US; /* (the same deadline) */
    iperf_run_event(&c.run, IPERF_EVENT_CONNECTING);
    if (tcp_connect(c.pcb, &c.run.result.peer, c.run.result.peer_port, on_connected) != ERR_OK) {
        finish("connect_failed");
    }
    return IPERF_START_OK;
}

static void poll_test(uint64_t now)
{
    iperf_tcp_retry_close(&c.closing_pcb);
    if (c.state == ST_IDLE) {
        return;
    }
    uint64_t stall = peer_stall_due_us();
    if (stall != 0 && now >= stall) {
        c.run.result.end_us = now;
        iperf_tcp_abort(&c.pcb); /* unsent data would wait for a window that never opens */
        finish("peer_not_reading");
        return;
    }
    if (c.state == ST_CONNECTING || c.state == ST_DRAINING) {
        if (now >= c.drain_deadline_us) {
            if (c.state == ST_DRAINING) {
                c.run.result.end_us = now;
            }
            iperf_tcp_abort(&c.pcb);
            finish(c.state == ST_CONNECTING ? "connect_timeout" : "ack_timeout");
        }
        return;
    }
    push();
}

static uint64_t next_deadline_us(void)
{
    uint64_t next = c.closing_pcb != NULL ? 1 : UINT64_MAX;
    switch (c.state) {
    case ST_IDLE:
        break;
    case ST_CONNECTING:
    case ST_DRAINING:
        next = iperf_earlier(next, c.drain_deadline_us);
        break;
    case ST_RUNNING:
        next = iperf_earlier(next, c.deadline_us);
        next = iperf_earlier(next, iperf_paced_next_us(&c.run, c.written));
        break;
    }
    return iperf_earlier(next, peer_stall_due_us());
}

static void abort_test(void)
{
    iperf_tcp_abort(&c.pcb);
    finish("aborted");
}

static const struct iperf_result *progress(void)
{
    return &c.run.result;
}

const struct iperf_engine iperf_tcp_client = {start, poll_test, next_deadline_us, abort_test, progress};
