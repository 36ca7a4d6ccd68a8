#include "iperf.h"

#include "fw_inttypes.h"
#include <stdio.h>
#include <string.h>

#include "fw_app.h"
#include "fw_config.h"
#include "fw_out.h"
#include "fw_platform.h"
#include "iperf_wire.h"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"

#define CMD "iperf"
#define CLOSE_TIMEOUT_US 5000000u /* a TCP client waits this long for its data to be acked */

enum iperf_state {
    ST_IDLE,
    ST_LISTEN,     /* server waiting for a client */
    ST_CONNECTING, /* TCP client */
    ST_RUNNING,
    ST_DRAINING,   /* TCP client: stopped writing, waiting for the last ack */
    ST_FIN_WAIT,   /* UDP client: FIN sent, waiting for the server report */
};

static const uint8_t tx_payload[FW_IPERF_TCP_TX_BUF]; /* zeros: no iperf client header flags */

struct iperf_session {
    enum iperf_state state;
    unsigned index; /* 1: server, 2: client (interval report id) */
    struct iperf_config cfg;
    struct tcp_pcb *listen_pcb;
    struct tcp_pcb *pcb;
    struct tcp_pcb *closing_pcb; /* a close that lwIP could not do yet */
    struct udp_pcb *upcb;
    struct udp_pcb *linger_pcb; /* finished UDP server still answering FINs */
    uint64_t linger_until_us;
    struct iperf_server_report linger_report;
    uint8_t linger_fin[IPERF_UDP_HDR_LEN];
    ip_addr_t peer;
    uint16_t peer_port;
    uint64_t start_us;
    uint64_t end_us;
    uint64_t deadline_us; /* end of the test (time mode); 0 = none */
    uint64_t drain_deadline_us;
    uint64_t bytes;       /* client: acked (TCP) / sent (UDP); server: received */
    uint64_t written;     /* TCP client: handed to lwIP */
    uint32_t write_offset; /* TCP client: position inside the current -l write */
    uint64_t interval_mark_us;
    uint64_t interval_mark_bytes;
    uint64_t next_interval_us;
    /* UDP client */
    int64_t seq;
    uint64_t datagrams;
    uint64_t send_errors;
    uint32_t fin_tries;
    uint64_t fin_next_us;
    bool have_report;
    struct iperf_server_report report;
    /* UDP server */
    struct iperf_udp_rx rx;
};

static struct iperf_session sessions[2] = {{.index = 1}, {.index = 2}}; /* server, client: both may run at once */

static const char *session_name(const struct iperf_session *s);

static const char *proto_name(struct iperf_session *s)
{
    return s->cfg.udp ? "udp" : "tcp";
}

static const char *role_name(struct iperf_session *s)
{
    return s->cfg.role == IPERF_ROLE_SERVER ? "server" : "client";
}

static void peer_str(struct iperf_session *s, char *buf, size_t size)
{
    char a[IP4ADDR_STRLEN_MAX];
    ip4addr_ntoa_r(ip_2_ip4(&s->peer), a, sizeof a);
    snprintf(buf, size, "%s:%u", a, (unsigned)s->peer_port);
}

/* ---- Interval reports (human readable, in the style of iperf-cmd) ------------------------ */

static void interval_start(struct iperf_session *s, uint64_t now)
{
    s->interval_mark_us = now;
    s->interval_mark_bytes = 0;
    s->next_interval_us = s->cfg.interval_ms ? now + (uint64_t)s->cfg.interval_ms * 1000u : 0;
    fw_printf("[ ID] Interval        Transfer     Bandwidth\r\n");
}

static void print_interval(struct iperf_session *s, uint64_t from_us, uint64_t to_us, uint64_t bytes)
{
    uint64_t t0 = (from_us - s->start_us) / 100000u; /* tenths of a second */
    uint64_t t1 = (to_us - s->start_us) / 100000u;
    uint64_t dur = to_us - from_us;
    uint64_t rate = dur ? bytes * 8u * 1000000u / dur : 0; /* bit/s */
    char unit = s->cfg.format;
    uint64_t div = unit == 'b' ? 1u : unit == 'k' ? 1000u : 1000000u;
    const char *uname = unit == 'b' ? "bits/sec" : unit == 'k' ? "Kbits/sec" : "Mbits/sec";
    fw_printf("[  %u] %3" PRIu64 ".%" PRIu64 "-%3" PRIu64 ".%" PRIu64 " sec  %7" PRIu64
              " KBytes  %" PRIu64 ".%02" PRIu64 " %s\r\n",
              s->index, t0 / 10u, t0 % 10u, t1 / 10u, t1 % 10u, bytes / 1024u, rate / div,
              (rate % div) * 100u / div, uname);
}

static void interval_poll(struct iperf_session *s, uint64_t now)
{
    if (s->next_interval_us == 0 || now < s->next_interval_us) {
        return;
    }
    uint64_t bytes = s->bytes - s->interval_mark_bytes;
    print_interval(s, s->interval_mark_us, s->next_interval_us, bytes);
    s->interval_mark_us = s->next_interval_us;
    s->interval_mark_bytes = s->bytes;
    s->next_interval_us += (uint64_t)s->cfg.interval_ms * 1000u;
}

/* ---- Common end of a test ------------------------------------------------------------------ */

static void close_tcp(struct iperf_session *s, struct tcp_pcb **pcb)
{
    if (*pcb == NULL) {
        return;
    }
    if ((*pcb)->state == LISTEN) {
        tcp_close(*pcb); /* never fails for a listening PCB */
        *pcb = NULL;
        return;
    }
    tcp_arg(*pcb, NULL);
    tcp_recv(*pcb, NULL);
    tcp_sent(*pcb, NULL);
    tcp_err(*pcb, NULL);
    tcp_poll(*pcb, NULL, 0);
    if (tcp_close(*pcb) != ERR_OK) {
        s->closing_pcb = *pcb; /* out of memory for the FIN: retried from iperf_poll */
    }
    *pcb = NULL;
}

static void release_pcbs(struct iperf_session *s)
{
    close_tcp(s, &s->pcb);
    close_tcp(s, &s->listen_pcb);
    if (s->upcb != NULL) {
        udp_remove(s->upcb);
        s->upcb = NULL;
    }
}

static void print_result(struct iperf_session *s, const char *status)
{
    char peer[32] = "-";
    char mbps[24];
    uint64_t dur = s->end_us > s->start_us ? s->end_us - s->start_us : 0;
    if (s->start_us != 0 || s->cfg.role == IPERF_ROLE_CLIENT) {
        peer_str(s, peer, sizeof peer);
    }
    if (s->start_us == 0) {
        dur = 0;
    }
    fw_printf("RESULT iperf role=%s proto=%s status=%s peer=%s bytes=%" PRIu64 " duration_us=%" PRIu64
              " mbps=%s len=%" PRIu32,
              role_name(s), proto_name(s), status, peer, s->bytes, dur,
              fw_fmt_mbps(mbps, sizeof mbps, s->bytes, dur), s->cfg.len);
    if (s->cfg.udp && s->cfg.role == IPERF_ROLE_SERVER) {
        struct iperf_server_report r;
        char pct[24];
        char jit[24];
        iperf_udp_rx_report(&s->rx, &r);
        uint64_t ppm = r.datagrams ? r.lost * 1000000u / r.datagrams : 0;
        fw_printf(" datagrams=%" PRIu64 " lost=%" PRIu64 " loss_pct=%s outoforder=%" PRIu64 " jitter_ms=%s",
                  r.datagrams, r.lost, fw_fmt_ppm_pct(pct, sizeof pct, ppm), r.outoforder,
                  fw_fmt_ms(jit, sizeof jit, r.jitter_us));
    }
    if (s->cfg.udp && s->cfg.role == IPERF_ROLE_CLIENT) {
        char target[24];
        if (s->cfg.bandwidth) {
            fw_fmt_mbps(target, sizeof target, s->cfg.bandwidth / 8u, 1000000u);
        } else {
            strcpy(target, "max");
        }
        fw_printf(" sent_datagrams=%" PRIu64 " target_mbps=%s send_errors=%" PRIu64 " server_report=%d",
                  s->datagrams, target, s->send_errors, s->have_report ? 1 : 0);
        if (s->have_report) {
            const struct iperf_server_report *r = &s->report;
            char smbps[24];
            char pct[24];
            char jit[24];
            uint64_t ppm = r->datagrams ? r->lost * 1000000u / r->datagrams : 0;
            fw_printf(" server_bytes=%" PRIu64 " server_duration_us=%" PRIu64 " server_mbps=%s"
                      " server_datagrams=%" PRIu64 " server_lost=%" PRIu64 " server_loss_pct=%s"
                      " server_outoforder=%" PRIu64 " server_jitter_ms=%s",
                      r->total_bytes, r->duration_us,
                      fw_fmt_mbps(smbps, sizeof smbps, r->total_bytes, r->duration_us), r->datagrams,
                      r->lost, fw_fmt_ppm_pct(pct, sizeof pct, ppm), r->outoforder,
                      fw_fmt_ms(jit, sizeof jit, r->jitter_us));
        }
    }
    fw_printf("\r\n");
}

static void finish(struct iperf_session *s, const char *status)
{
    uint64_t now = fw_platform_time_us();
    if (s->end_us == 0) {
        s->end_us = now;
    }
    if (s->start_us != 0 && s->end_us > s->interval_mark_us + 100000u && s->cfg.interval_ms) {
        print_interval(s, s->interval_mark_us, s->end_us, s->bytes - s->interval_mark_bytes);
    }
    if (s->start_us != 0) {
        print_interval(s, s->start_us, s->end_us, s->bytes);
    }
    print_result(s, status);
    release_pcbs(s);
    s->state = ST_IDLE;
    fw_test_release(session_name(s));
}

static void begin_running(struct iperf_session *s, uint64_t now)
{
    s->state = ST_RUNNING;
    s->start_us = now;
    s->end_us = 0;
    if (s->cfg.role == IPERF_ROLE_CLIENT && s->cfg.duration_ms) {
        s->deadline_us = now + (uint64_t)s->cfg.duration_ms * 1000u;
    }
    interval_start(s, now);
}

/* ---- TCP client ----------------------------------------------------------------------------- */

static bool tcp_client_done_writing(struct iperf_session *s, uint64_t now)
{
    if (s->cfg.amount) {
        return s->written >= s->cfg.amount;
    }
    return now >= s->deadline_us;
}

/* Bytes the bandwidth limit allows to be written by now (UINT64_MAX without a limit). */
static uint64_t paced_allowance(struct iperf_session *s, uint64_t sent, uint64_t now)
{
    if (s->cfg.bandwidth == 0) {
        return UINT64_MAX;
    }
    uint64_t allowed = (now - s->start_us) * s->cfg.bandwidth / 8000000u;
    return allowed > sent ? allowed - sent : 0;
}

static void tcp_client_drain_check(struct iperf_session *s, uint64_t now)
{
    if (s->pcb != NULL && s->pcb->unacked == NULL && s->pcb->unsent == NULL) {
        s->end_us = now;
        finish(s, s->bytes > 0 ? "ok" : "stalled"); /* connected but could not send a byte */
    }
}

static void tcp_client_push(struct iperf_session *s)
{
    uint64_t now = fw_platform_time_us();
    if (s->state == ST_RUNNING && tcp_client_done_writing(s, now)) {
        s->state = ST_DRAINING;
        s->drain_deadline_us = now + CLOSE_TIMEOUT_US;
    }
    if (s->state == ST_DRAINING) {
        tcp_output(s->pcb);
        tcp_client_drain_check(s, now);
        return;
    }
    if (s->state != ST_RUNNING) {
        return;
    }
    uint64_t allowance = paced_allowance(s, s->written, now);
    bool wrote = false;
    while (allowance > 0) {
        uint32_t space = tcp_sndbuf(s->pcb);
        uint32_t queued = tcp_sndqueuelen(s->pcb);
        if (space == 0 || queued >= TCP_SND_QUEUELEN - 1) {
            break;
        }
        /* a referenced write costs up to two pbufs per segment of the peer's MSS */
        uint32_t by_queue = ((TCP_SND_QUEUELEN - queued) / 2u) * tcp_mss(s->pcb);
        uint64_t chunk = s->cfg.len - s->write_offset;
        if (chunk > space) {
            chunk = space;
        }
        if (chunk > by_queue) {
            chunk = by_queue;
        }
        if (chunk > sizeof tx_payload) {
            chunk = sizeof tx_payload;
        }
        if (chunk > allowance) {
            chunk = allowance;
        }
        if (s->cfg.amount && chunk > s->cfg.amount - s->written) {
            chunk = s->cfg.amount - s->written;
        }
        if (chunk == 0) {
            break;
        }
        /* Writes shorter than a segment are copied, as a socket layer does, so lwIP can fill
         * full segments; longer ones are sent by reference from the constant payload. */
        u8_t flags = TCP_WRITE_FLAG_MORE | (chunk < TCP_MSS ? TCP_WRITE_FLAG_COPY : 0);
        err_t err = tcp_write(s->pcb, tx_payload, (u16_t)chunk, flags);
        if (err != ERR_OK) {
            break; /* ERR_MEM: queue full, retried from the sent callback */
        }
        wrote = true;
        s->written += chunk;
        allowance -= chunk;
        s->write_offset = (uint32_t)((s->write_offset + chunk) % s->cfg.len);
        if (s->cfg.amount && s->written >= s->cfg.amount) {
            break;
        }
    }
    if (wrote) {
        tcp_output(s->pcb);
    }
}

static err_t tcp_client_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct iperf_session *s = (struct iperf_session *)arg;
    (void)pcb;
    s->bytes += len;
    tcp_client_push(s);
    return ERR_OK;
}

static err_t tcp_discard_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct iperf_session *s = (struct iperf_session *)arg;
    (void)err;
    if (p == NULL) {
        /* peer closed its side */
        if (s->state == ST_RUNNING || s->state == ST_DRAINING) {
            s->end_us = fw_platform_time_us();
            finish(s, s->state == ST_DRAINING ? "ok" : "peer_closed");
        }
        return ERR_OK;
    }
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static void tcp_pcb_err(void *arg, err_t err)
{
    struct iperf_session *s = (struct iperf_session *)arg;
    s->pcb = NULL; /* already freed by lwIP */
    if (s->state == ST_IDLE) {
        return;
    }
    s->end_us = fw_platform_time_us();
    if (s->state == ST_CONNECTING) {
        finish(s, err == ERR_RST ? "refused" : "connect_failed");
    } else if (s->cfg.role == IPERF_ROLE_SERVER && s->state == ST_RUNNING) {
        finish(s, err == ERR_RST ? "reset" : "error");
    } else {
        finish(s, err == ERR_RST ? "reset" : "error");
    }
}

static err_t tcp_client_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct iperf_session *s = (struct iperf_session *)arg;
    (void)pcb;
    if (err != ERR_OK) {
        return err;
    }
    begin_running(s, fw_platform_time_us());
    tcp_client_push(s);
    return ERR_OK;
}

static void tcp_client_start(struct iperf_session *s)
{
    s->pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    if (s->pcb == NULL) {
        fw_err(CMD, "out of TCP PCBs");
        fw_test_release(session_name(s));
        return;
    }
    s->pcb->tos = s->cfg.tos;
    tcp_arg(s->pcb, s);
    tcp_err(s->pcb, tcp_pcb_err);
    tcp_recv(s->pcb, tcp_discard_recv);
    tcp_sent(s->pcb, tcp_client_sent);
    s->state = ST_CONNECTING;
    s->drain_deadline_us = fw_platform_time_us() + CLOSE_TIMEOUT_US; /* connect timeout too */
    char peer[32];
    peer_str(s, peer, sizeof peer);
    fw_printf("iperf: TCP client connecting to %s\r\n", peer);
    err_t err = tcp_connect(s->pcb, &s->peer, s->peer_port, tcp_client_connected);
    if (err != ERR_OK) {
        finish(s, "connect_failed");
    }
}

/* ---- TCP server ----------------------------------------------------------------------------- */

static err_t tcp_server_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct iperf_session *s = (struct iperf_session *)arg;
    (void)err;
    if (p == NULL) {
        s->end_us = fw_platform_time_us();
        finish(s, "ok");
        return ERR_OK;
    }
    s->bytes += p->tot_len;
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static err_t tcp_server_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
    struct iperf_session *s = (struct iperf_session *)arg;
    if (err != ERR_OK || newpcb == NULL) {
        return ERR_VAL;
    }
    if (s->state != ST_LISTEN) {
        tcp_abort(newpcb); /* one session per test */
        return ERR_ABRT;
    }
    s->pcb = newpcb;
    ip_addr_copy(s->peer, newpcb->remote_ip);
    s->peer_port = newpcb->remote_port;
    newpcb->tos = s->cfg.tos;
    tcp_arg(newpcb, s);
    tcp_recv(newpcb, tcp_server_recv);
    tcp_err(newpcb, tcp_pcb_err);
    char peer[32];
    peer_str(s, peer, sizeof peer);
    fw_printf("iperf: accepted TCP connection from %s\r\n", peer);
    begin_running(s, fw_platform_time_us());
    return ERR_OK;
}

static void tcp_server_start(struct iperf_session *s)
{
    struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t bind_addr;
    ip_addr_set_ip4_u32(&bind_addr, lwip_htonl(s->cfg.bind_ip));
    if (pcb == NULL) {
        fw_err(CMD, "out of TCP PCBs");
        fw_test_release(session_name(s));
        return;
    }
    if (tcp_bind(pcb, &bind_addr, s->cfg.port) != ERR_OK) {
        tcp_close(pcb);
        fw_err(CMD, "cannot bind TCP port %u", (unsigned)s->cfg.port);
        fw_test_release(session_name(s));
        return;
    }
    s->listen_pcb = tcp_listen_with_backlog(pcb, 1);
    if (s->listen_pcb == NULL) {
        tcp_close(pcb);
        fw_err(CMD, "cannot listen on TCP port %u", (unsigned)s->cfg.port);
        fw_test_release(session_name(s));
        return;
    }
    tcp_arg(s->listen_pcb, s);
    tcp_accept(s->listen_pcb, tcp_server_accept);
    s->state = ST_LISTEN;
    fw_printf("iperf: TCP server listening on port %u\r\n", (unsigned)s->cfg.port);
}

/* ---- UDP server ----------------------------------------------------------------------------- */

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
    struct iperf_session *s = (struct iperf_session *)arg;
    uint8_t hdr[IPERF_UDP_HDR_LEN];
    if (p->tot_len >= IPERF_UDP_HDR_LEN && pbuf_copy_partial(p, hdr, sizeof hdr, 0) == sizeof hdr &&
        (hdr[0] & 0x80u) != 0) {
        send_server_reply(pcb, hdr, &s->linger_report, addr, port); /* a repeated FIN */
    }
    pbuf_free(p);
}

static void udp_server_end(struct iperf_session *s, const char *status)
{
    /* keep answering repeated FINs for a while: the client may have missed the first reply */
    if (s->rx.finished && s->upcb != NULL) {
        if (s->linger_pcb != NULL) {
            udp_remove(s->linger_pcb);
        }
        s->linger_pcb = s->upcb;
        s->upcb = NULL;
        iperf_udp_rx_report(&s->rx, &s->linger_report);
        udp_recv(s->linger_pcb, linger_recv, s);
        s->linger_until_us = fw_platform_time_us() + FW_IPERF_UDP_LINGER_MS * 1000u;
    }
    finish(s, status);
}

static void udp_server_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    struct iperf_session *s = (struct iperf_session *)arg;
    uint64_t now = fw_platform_time_us();
    uint8_t head[IPERF_UDP_HDR_LEN + 4];
    uint16_t n = pbuf_copy_partial(p, head, sizeof head, 0);
    uint16_t len = p->tot_len;
    pbuf_free(p);
    if (s->state == ST_RUNNING && (!ip_addr_cmp(addr, &s->peer) || port != s->peer_port)) {
        return; /* another sender during a test */
    }
    bool first = !s->rx.started;
    /* account with the real datagram length; only the header bytes are inspected */
    enum iperf_rx_kind kind = iperf_udp_rx_account(&s->rx, head, n < len ? n : len, now);
    if (kind == IPERF_RX_INVALID) {
        return;
    }
    if (kind == IPERF_RX_DATA) {
        s->rx.bytes += (uint64_t)len - (n < len ? n : len);
        s->bytes = s->rx.bytes;
        if (first) {
            ip_addr_copy(s->peer, *addr);
            s->peer_port = port;
            char peer[32];
            peer_str(s, peer, sizeof peer);
            fw_printf("iperf: UDP datagrams from %s\r\n", peer);
            begin_running(s, now);
        }
        return;
    }
    /* FIN: answer with the server report, then end the test */
    struct iperf_server_report rep;
    iperf_udp_rx_report(&s->rx, &rep);
    send_server_reply(pcb, s->rx.fin_hdr, &rep, addr, port);
    s->end_us = now;
    udp_server_end(s, "ok");
}

static void udp_server_start(struct iperf_session *s)
{
    if (s->linger_pcb != NULL) {
        udp_remove(s->linger_pcb);
        s->linger_pcb = NULL;
    }
    s->upcb = udp_new_ip_type(IPADDR_TYPE_V4);
    if (s->upcb == NULL) {
        fw_err(CMD, "out of UDP PCBs");
        fw_test_release(session_name(s));
        return;
    }
    ip_addr_t bind_addr;
    ip_addr_set_ip4_u32(&bind_addr, lwip_htonl(s->cfg.bind_ip));
    if (udp_bind(s->upcb, &bind_addr, s->cfg.port) != ERR_OK) {
        udp_remove(s->upcb);
        s->upcb = NULL;
        fw_err(CMD, "cannot bind UDP port %u", (unsigned)s->cfg.port);
        fw_test_release(session_name(s));
        return;
    }
    s->upcb->tos = s->cfg.tos;
    iperf_udp_rx_init(&s->rx);
    udp_recv(s->upcb, udp_server_recv, s);
    s->state = ST_LISTEN;
    fw_printf("iperf: UDP server listening on port %u\r\n", (unsigned)s->cfg.port);
}

/* ---- UDP client ----------------------------------------------------------------------------- */

static bool udp_send_datagram(struct iperf_session *s, int64_t seq, uint64_t now)
{
    struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)s->cfg.len, PBUF_RAM);
    if (p == NULL) {
        s->send_errors++;
        return false;
    }
    memset(p->payload, 0, p->len);
    iperf_udp_hdr_encode((uint8_t *)p->payload, seq, now);
    err_t err = udp_send(s->upcb, p);
    pbuf_free(p);
    if (err != ERR_OK) {
        s->send_errors++;
        return false;
    }
    return true;
}

static void udp_client_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    struct iperf_session *s = (struct iperf_session *)arg;
    (void)pcb;
    (void)addr;
    (void)port;
    uint8_t buf[IPERF_SERVER_REPLY_LEN + IPERF_SERVER_REPORT_EXT_LEN + IPERF_SERVER_REPORT_EXT2_LEN];
    uint16_t n = pbuf_copy_partial(p, buf, sizeof buf, 0);
    pbuf_free(p);
    if (s->state == ST_FIN_WAIT && iperf_server_reply_decode(buf, n, &s->report)) {
        s->have_report = true;
        finish(s, "ok");
    }
}

static void udp_client_send_fin(struct iperf_session *s, uint64_t now)
{
    udp_send_datagram(s, -(s->seq + 1), now);
    s->fin_tries++;
    s->fin_next_us = now + FW_IPERF_UDP_FIN_WAIT_MS * 1000u;
}

static void udp_client_poll(struct iperf_session *s, uint64_t now)
{
    if (s->state == ST_FIN_WAIT) {
        if (now >= s->fin_next_us) {
            if (s->fin_tries >= FW_IPERF_UDP_FIN_RETRIES) {
                finish(s, "ok"); /* server_report=0 tells the missing report */
            } else {
                udp_client_send_fin(s, now);
            }
        }
        return;
    }
    for (unsigned n = 0; n < FW_IPERF_UDP_BURST_MAX; n++) {
        bool done = s->cfg.amount ? s->bytes >= s->cfg.amount : now >= s->deadline_us;
        if (done) {
            s->end_us = now;
            s->state = ST_FIN_WAIT;
            udp_client_send_fin(s, now);
            return;
        }
        if (paced_allowance(s, s->bytes, now) == 0) {
            return;
        }
        if (!udp_send_datagram(s, s->seq + 1, now)) {
            return; /* out of buffers: try again on the next poll */
        }
        s->seq++;
        s->datagrams++;
        s->bytes += s->cfg.len;
    }
}

static void udp_client_start(struct iperf_session *s)
{
    s->upcb = udp_new_ip_type(IPADDR_TYPE_V4);
    if (s->upcb == NULL) {
        fw_err(CMD, "out of UDP PCBs");
        fw_test_release(session_name(s));
        return;
    }
    s->upcb->tos = s->cfg.tos;
    if (udp_connect(s->upcb, &s->peer, s->peer_port) != ERR_OK) {
        udp_remove(s->upcb);
        s->upcb = NULL;
        fw_err(CMD, "cannot connect UDP socket");
        fw_test_release(session_name(s));
        return;
    }
    udp_recv(s->upcb, udp_client_recv, s);
    char peer[32];
    peer_str(s, peer, sizeof peer);
    fw_printf("iperf: UDP client sending to %s\r\n", peer);
    begin_running(s, fw_platform_time_us());
}

/* ---- Command, poll, deadline ---------------------------------------------------------------- */

static const char *session_name(const struct iperf_session *s)
{
    return s->index == 1 ? "iperf-server" : "iperf-client";
}

static void abort_session(struct iperf_session *s)
{
    if (s->pcb != NULL) {
        tcp_err(s->pcb, NULL);
        tcp_abort(s->pcb);
        s->pcb = NULL;
    }
    finish(s, "aborted");
}

static void abort_all(void)
{
    unsigned stopped = 0;
    for (unsigned i = 0; i < 2; i++) {
        if (sessions[i].state != ST_IDLE) {
            abort_session(&sessions[i]);
            stopped++;
        }
    }
    fw_printf("RESULT iperf action=abort stopped=%u\r\n", stopped);
}

void iperf_command(int argc, char **argv)
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
    /* one server and one client may run at once (both directions); not two of a kind */
    struct iperf_session *s = &sessions[cfg.role == IPERF_ROLE_SERVER ? 0 : 1];
    if (!fw_test_claim(CMD, session_name(s), "iperf")) {
        return;
    }
    if (s->linger_pcb != NULL) {
        udp_remove(s->linger_pcb);
        s->linger_pcb = NULL;
    }
    struct tcp_pcb *closing = s->closing_pcb;
    unsigned index = s->index;
    memset(s, 0, sizeof *s);
    s->index = index;
    s->closing_pcb = closing;
    s->cfg = cfg;
    ip_addr_set_ip4_u32(&s->peer, lwip_htonl(cfg.peer_ip));
    s->peer_port = cfg.port;
    if (cfg.role == IPERF_ROLE_SERVER && cfg.duration_ms) {
        s->deadline_us = fw_platform_time_us() + (uint64_t)cfg.duration_ms * 1000u;
    }
    if (cfg.role == IPERF_ROLE_CLIENT) {
        if (cfg.udp) {
            udp_client_start(s);
        } else {
            tcp_client_start(s);
        }
    } else if (cfg.udp) {
        udp_server_start(s);
    } else {
        tcp_server_start(s);
    }
}

static void session_poll(struct iperf_session *s, uint64_t now)
{
    if (s->closing_pcb != NULL && tcp_close(s->closing_pcb) == ERR_OK) {
        s->closing_pcb = NULL;
    }
    if (s->linger_pcb != NULL && now >= s->linger_until_us) {
        udp_remove(s->linger_pcb);
        s->linger_pcb = NULL;
    }
    if (s->state == ST_IDLE) {
        return;
    }
    if (s->state == ST_RUNNING || s->state == ST_DRAINING) {
        interval_poll(s, now);
    }
    if (s->cfg.role == IPERF_ROLE_SERVER) {
        if (s->deadline_us && now >= s->deadline_us) {
            s->end_us = now;
            if (s->cfg.udp) {
                udp_server_end(s, s->state == ST_LISTEN ? "timeout" : "time_limit");
            } else {
                finish(s, s->state == ST_LISTEN ? "timeout" : "time_limit");
            }
        } else if (s->cfg.udp && s->state == ST_RUNNING && now - s->rx.last_us > FW_IPERF_UDP_IDLE_MS * 1000u) {
            s->end_us = s->rx.last_us;
            udp_server_end(s, "no_fin");
        }
        return;
    }
    if (s->cfg.udp) {
        if (s->state == ST_RUNNING || s->state == ST_FIN_WAIT) {
            udp_client_poll(s, now);
        }
        return;
    }
    if (s->state == ST_CONNECTING || s->state == ST_DRAINING) {
        if (now >= s->drain_deadline_us) {
            if (s->state == ST_DRAINING) {
                s->end_us = now;
            }
            if (s->pcb != NULL) {
                tcp_err(s->pcb, NULL);
                tcp_abort(s->pcb);
                s->pcb = NULL;
            }
            finish(s, s->state == ST_CONNECTING ? "connect_timeout" : "ack_timeout");
        }
        return;
    }
    tcp_client_push(s);
}

void iperf_poll(uint64_t now)
{
    session_poll(&sessions[0], now);
    session_poll(&sessions[1], now);
}

static uint64_t session_deadline(const struct iperf_session *s)
{
    uint64_t next = UINT64_MAX;
    if (s->linger_pcb != NULL) {
        next = s->linger_until_us;
    }
    if (s->closing_pcb != NULL) {
        next = 1;
    }
#define EARLIER(t) do { if ((t) != 0 && (t) < next) next = (t); } while (0)
    switch (s->state) {
    case ST_IDLE:
        break;
    case ST_LISTEN:
        EARLIER(s->deadline_us);
        break;
    case ST_CONNECTING:
    case ST_DRAINING:
        EARLIER(s->drain_deadline_us);
        EARLIER(s->next_interval_us);
        break;
    case ST_RUNNING:
        EARLIER(s->next_interval_us);
        EARLIER(s->deadline_us);
        if (s->cfg.role == IPERF_ROLE_SERVER && s->cfg.udp) {
            EARLIER(s->rx.last_us + FW_IPERF_UDP_IDLE_MS * 1000u);
        }
        if (s->cfg.role == IPERF_ROLE_CLIENT && s->cfg.bandwidth != 0) {
            uint64_t sent = s->cfg.udp ? s->bytes : s->written;
            uint64_t next_send = s->start_us + sent * 8000000u / s->cfg.bandwidth;
            EARLIER(next_send < 1 ? 1 : next_send);
        } else if (s->cfg.role == IPERF_ROLE_CLIENT && s->cfg.udp) {
            next = 1; /* UDP as fast as possible: poll again at once */
        }
        break;
    case ST_FIN_WAIT:
        EARLIER(s->fin_next_us);
        break;
    }
#undef EARLIER
    return next;
}

uint64_t iperf_next_deadline_us(void)
{
    uint64_t a = session_deadline(&sessions[0]);
    uint64_t b = session_deadline(&sessions[1]);
    return a < b ? a : b;
}
