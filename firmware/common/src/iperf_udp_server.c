/* iperf UDP server: binds -p, accounts the datagrams of one client as iperf 2 does (loss,
 * reordering, jitter) and answers its FIN with the server report; afterwards it keeps answering
 * that client's repeated FINs for FW_IPERF_UDP_LINGER_MS, in case it missed the first answer.
 *
 * Under hostile traffic: the first data datagram claims the test, but a test whose sender has
 * been silent for FW_IPERF_UDP_TAKEOVER_MS goes to the next sender (a stray or spoofed datagram
 * cannot keep the real client out); the finished test's report goes to its own client only (no
 * reflector towards spoofed addresses, no report for a stranger). */
#include "iperf_engine.h"

#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "fw_platform.h"
#include "lwip/pbuf.h"
#include "lwip/udp.h"

enum state { ST_IDLE, ST_LISTEN, ST_RUNNING };

static struct {
    struct iperf_run run;
    enum state state;
    struct udp_pcb *upcb;
    uint64_t deadline_us; /* -t: end of the wait or the test; 0 = none */
    struct iperf_udp_rx rx;
    /* after a test: the finished test's PCB still answering FINs */
    struct udp_pcb *linger_pcb;
    uint64_t linger_until_us;
    struct iperf_server_report linger_report;
    ip_addr_t linger_peer; /* the finished test's client: the only one answered */
    u16_t linger_port;
} us;

static void send_server_reply(struct udp_pcb *pcb, const uint8_t *fin_hdr,
                              const struct iperf_server_report *rep, const ip_addr_t *addr, u16_t port)
{
    struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, IPERF_SERVER_REPLY_LEN, PBUF_RAM);
    if (p == NULL) {
        return;
    }
    iperf_server_reply_encode((uint8_t *)p->payload, p->len, fin_hdr, rep);
    udp_sendto(pcb, p, addr, port);
    pbuf_free(p);
}

static void linger_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)arg;
    uint8_t hdr[IPERF_UDP_HDR_LEN];
    bool own_client = ip_addr_cmp(addr, &us.linger_peer) && port == us.linger_port;
    if (!own_client && !fw_guard_on(FW_GUARD_UDP_LINGER_PEER)) {
        own_client = true; /* a planted defect (fw_fault_hooks.h): anyone gets the report */
    }
    if (own_client && p->tot_len >= IPERF_UDP_HDR_LEN && pbuf_copy_partial(p, hdr, sizeof hdr, 0) == sizeof hdr &&
        (hdr[0] & 0x80u) != 0) {
        send_server_reply(pcb, hdr, &us.linger_report, addr, port); /* a repeated FIN */
    }
    pbuf_free(p);
}

static void linger_stop(void)
{
    if (us.linger_pcb != NULL) {
        udp_remove(us.linger_pcb);
        us.linger_pcb = NULL;
    }
}

static void finish(const char *status)
{
    iperf_udp_rx_report(&us.rx, &us.run.result.received);
    if (us.upcb != NULL) {
        udp_remove(us.upcb);
        us.upcb = NULL;
    }
    us.state = ST_IDLE;
    iperf_run_finish(&us.run, status);
}

/* The end of a test the client took part in: a client that sent its FIN gets answers to repeats. */
static void end_test(const char *status)
{
    if (us.rx.finished && us.upcb != NULL && !us.run.cfg.silent_server) {
        linger_stop();
        us.linger_pcb = us.upcb;
        us.upcb = NULL;
        iperf_udp_rx_report(&us.rx, &us.linger_report);
        ip_addr_copy(us.linger_peer, us.run.result.peer);
        us.linger_port = us.run.result.peer_port;
        udp_recv(us.linger_pcb, linger_recv, NULL);
        us.linger_until_us = fw_platform_time_us() + FW_IPERF_UDP_LINGER_MS * 1000u;
    }
    finish(status);
}

/* A fresh accounting (its sequence window per the guard, fw_fault_hooks.h). */
static void rx_begin(struct iperf_udp_rx *rx)
{
    iperf_udp_rx_init(rx);
    if (!fw_guard_on(FW_GUARD_UDP_SEQ_WINDOW)) {
        rx->seq_window = 0; /* a planted defect: any sequence number is data */
    }
}

/*
 * A datagram from another sender than the running test's: when the test's sender has been silent
 * for FW_IPERF_UDP_TAKEOVER_MS (a stray datagram claimed the test, or its client is gone) and this
 * one is data, the test starts over with the new sender; otherwise it is ignored. True: taken over
 * (the datagram accounted as the new test's first).
 */
static bool take_over(const uint8_t *head, uint16_t n, uint64_t now)
{
    if (!fw_guard_on(FW_GUARD_UDP_TAKEOVER) || now - us.rx.last_us < FW_IPERF_UDP_TAKEOVER_MS * 1000u) {
        return false;
    }
    struct iperf_udp_rx fresh;
    rx_begin(&fresh);
    if (iperf_udp_rx_account(&fresh, head, n, now) != IPERF_RX_DATA) {
        return false; /* a FIN or garbage never starts a test */
    }
    us.rx = fresh;
    return true;
}

static void on_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)arg;
    uint64_t now = fw_platform_time_us();
    uint8_t head[IPERF_UDP_HDR_LEN + 4];
    uint16_t n = pbuf_copy_partial(p, head, sizeof head, 0);
    uint16_t len = p->tot_len;
    pbuf_free(p);
    uint16_t inspected = n < len ? n : len; /* only the header bytes are inspected */
    bool first = !us.rx.started;
    enum iperf_rx_kind kind;
    if (us.state == ST_RUNNING && (!ip_addr_cmp(addr, &us.run.result.peer) || port != us.run.result.peer_port)) {
        if (!take_over(head, inspected, now)) {
            return; /* another sender during a test */
        }
        first = true;
        kind = IPERF_RX_DATA;
    } else {
        /* account with the real datagram length */
        kind = iperf_udp_rx_account(&us.rx, head, inspected, now);
    }
    if (kind == IPERF_RX_INVALID) {
        return;
    }
    if (kind == IPERF_RX_DATA) {
        us.rx.bytes += (uint64_t)len - inspected;
        us.run.result.bytes = us.rx.bytes;
        if (first) { /* the test starts (again, after a takeover) with this sender */
            ip_addr_copy(us.run.result.peer, *addr);
            us.run.result.peer_port = port;
            us.state = ST_RUNNING;
            iperf_run_started(&us.run, now);
        }
        return;
    }
    /* FIN: answer with the server report, then end the test */
    struct iperf_server_report rep;
    iperf_udp_rx_report(&us.rx, &rep);
    if (!us.run.cfg.silent_server) {
        send_server_reply(pcb, us.rx.fin_hdr, &rep, addr, port);
    }
    us.run.result.end_us = now;
    end_test("ok");
}

static enum iperf_start_error start(const struct iperf_config *cfg, iperf_event_fn on_event, void *ctx)
{
    linger_stop();
    iperf_run_begin(&us.run, cfg, on_event, ctx);
    us.deadline_us = cfg->duration_ms ? fw_platform_time_us() + (uint64_t)cfg->duration_ms * 1000u : 0;
    us.upcb = udp_new_ip_type(IPADDR_TYPE_V4);
    if (us.upcb == NULL) {
        return IPERF_START_NO_UDP_PCB;
    }
    ip_addr_t bind_addr;
    ip_addr_set_ip4_u32(&bind_addr, lwip_htonl(cfg->bind_ip));
    if (udp_bind(us.upcb, &bind_addr, cfg->port) != ERR_OK) {
        udp_remove(us.upcb);
        us.upcb = NULL;
        return IPERF_START_BIND_FAILED;
    }
    us.upcb->tos = cfg->tos;
    rx_begin(&us.rx);
    udp_recv(us.upcb, on_recv, NULL);
    us.state = ST_LISTEN;
    iperf_run_event(&us.run, IPERF_EVENT_LISTENING);
    return IPERF_START_OK;
}

static void poll_test(uint64_t now)
{
    if (us.linger_pcb != NULL && now >= us.linger_until_us) {
        linger_stop();
    }
    if (us.state == ST_IDLE) {
        return;
    }
    if (us.deadline_us && now >= us.deadline_us) {
        us.run.result.end_us = now;
        end_test(us.state == ST_LISTEN ? "timeout" : "time_limit");
    } else if (us.state == ST_RUNNING && now - us.rx.last_us > FW_IPERF_UDP_IDLE_MS * 1000u) {
        us.run.result.end_us = us.rx.last_us;
        end_test("no_fin"); /* the client fell silent */
    }
}

static uint64_t next_deadline_us(void)
{
    uint64_t next = us.linger_pcb != NULL ? us.linger_until_us : UINT64_MAX;
    if (us.state != ST_IDLE) {
        next = iperf_earlier(next, us.deadline_us);
    }
    if (us.state == ST_RUNNING) {
        next = iperf_earlier(next, us.rx.last_us + FW_IPERF_UDP_IDLE_MS * 1000u);
    }
    return next;
}

static void abort_test(void)
{
    finish("aborted");
}

static const struct iperf_result *progress(void)
{
    return &us.run.result;
}

const struct iperf_engine iperf_udp_server = {start, poll_test, next_deadline_us, abort_test, progress};
