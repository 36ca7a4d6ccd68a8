#include "iperf.h"

#include <inttypes.h>
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

static struct {
    enum iperf_state state;
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
} ip;

static const char *proto_name(void)
{
    return ip.cfg.udp ? "udp" : "tcp";
}

static const char *role_name(void)
{
    return ip.cfg.role == IPERF_ROLE_SERVER ? "server" : "client";
}

static void peer_str(char *buf, size_t size)
{
    char a[IP4ADDR_STRLEN_MAX];
    ip4addr_ntoa_r(ip_2_ip4(&ip.peer), a, sizeof a);
    snprintf(buf, size, "%s:%u", a, (unsigned)ip.peer_port);
}

/* ---- Interval reports (human readable, in the style of iperf-cmd) ------------------------ */

static void interval_start(uint64_t now)
{
    ip.interval_mark_us = now;
    ip.interval_mark_bytes = 0;
    ip.next_interval_us = ip.cfg.interval_ms ? now + (uint64_t)ip.cfg.interval_ms * 1000u : 0;
    fw_printf("[ ID] Interval        Transfer     Bandwidth\r\n");
}

static void print_interval(uint64_t from_us, uint64_t to_us, uint64_t bytes)
{
    uint64_t t0 = (from_us - ip.start_us) / 100000u; /* tenths of a second */
    uint64_t t1 = (to_us - ip.start_us) / 100000u;
    uint64_t dur = to_us - from_us;
    uint64_t rate = dur ? bytes * 8u * 1000000u / dur : 0; /* bit/s */
    char unit = ip.cfg.format;
    uint64_t div = unit == 'b' ? 1u : unit == 'k' ? 1000u : 1000000u;
    const char *uname = unit == 'b' ? "bits/sec" : unit == 'k' ? "Kbits/sec" : "Mbits/sec";
    fw_printf("[  1] %3" PRIu64 ".%" PRIu64 "-%3" PRIu64 ".%" PRIu64 " sec  %7" PRIu64
              " KBytes  %" PRIu64 ".%02" PRIu64 " %s\r\n",
              t0 / 10u, t0 % 10u, t1 / 10u, t1 % 10u, bytes / 1024u, rate / div,
              (rate % div) * 100u / div, uname);
}

static void interval_poll(uint64_t now)
{
    if (ip.next_interval_us == 0 || now < ip.next_interval_us) {
        return;
    }
    uint64_t bytes = ip.bytes - ip.interval_mark_bytes;
    print_interval(ip.interval_mark_us, ip.next_interval_us, bytes);
    ip.interval_mark_us = ip.next_interval_us;
    ip.interval_mark_bytes = ip.bytes;
    ip.next_interval_us += (uint64_t)ip.cfg.interval_ms * 1000u;
}

/* ---- Common end of a test ------------------------------------------------------------------ */

static void close_tcp(struct tcp_pcb **pcb)
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
        ip.closing_pcb = *pcb; /* out of memory for the FIN: retried from iperf_poll */
    }
    *pcb = NULL;
}

static void release_pcbs(void)
{
    close_tcp(&ip.pcb);
    close_tcp(&ip.listen_pcb);
    if (ip.upcb != NULL) {
        udp_remove(ip.upcb);
        ip.upcb = NULL;
    }
}

static void print_result(const char *status)
{
    char peer[32] = "-";
    char mbps[24];
    uint64_t dur = ip.end_us > ip.start_us ? ip.end_us - ip.start_us : 0;
    if (ip.start_us != 0 || ip.cfg.role == IPERF_ROLE_CLIENT) {
        peer_str(peer, sizeof peer);
    }
    if (ip.start_us == 0) {
        dur = 0;
    }
    fw_printf("RESULT iperf role=%s proto=%s status=%s peer=%s bytes=%" PRIu64 " duration_us=%" PRIu64
              " mbps=%s len=%" PRIu32,
              role_name(), proto_name(), status, peer, ip.bytes, dur,
              fw_fmt_mbps(mbps, sizeof mbps, ip.bytes, dur), ip.cfg.len);
    if (ip.cfg.udp && ip.cfg.role == IPERF_ROLE_SERVER) {
        struct iperf_server_report r;
        char pct[24];
        char jit[24];
        iperf_udp_rx_report(&ip.rx, &r);
        uint64_t ppm = r.datagrams ? r.lost * 1000000u / r.datagrams : 0;
        fw_printf(" datagrams=%" PRIu64 " lost=%" PRIu64 " loss_pct=%s outoforder=%" PRIu64 " jitter_ms=%s",
                  r.datagrams, r.lost, fw_fmt_ppm_pct(pct, sizeof pct, ppm), r.outoforder,
                  fw_fmt_ms(jit, sizeof jit, r.jitter_us));
    }
    if (ip.cfg.udp && ip.cfg.role == IPERF_ROLE_CLIENT) {
        char target[24];
        if (ip.cfg.bandwidth) {
            fw_fmt_mbps(target, sizeof target, ip.cfg.bandwidth / 8u, 1000000u);
        } else {
            strcpy(target, "max");
        }
        fw_printf(" sent_datagrams=%" PRIu64 " target_mbps=%s send_errors=%" PRIu64 " server_report=%d",
                  ip.datagrams, target, ip.send_errors, ip.have_report ? 1 : 0);
        if (ip.have_report) {
            const struct iperf_server_report *r = &ip.report;
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

static void finish(const char *status)
{
    uint64_t now = fw_platform_time_us();
    if (ip.end_us == 0) {
        ip.end_us = now;
    }
    if (ip.start_us != 0 && ip.end_us > ip.interval_mark_us + 100000u && ip.cfg.interval_ms) {
        print_interval(ip.interval_mark_us, ip.end_us, ip.bytes - ip.interval_mark_bytes);
    }
    if (ip.start_us != 0) {
        print_interval(ip.start_us, ip.end_us, ip.bytes);
    }
    print_result(status);
    release_pcbs();
    ip.state = ST_IDLE;
    fw_test_release();
}

static void begin_running(uint64_t now)
{
    ip.state = ST_RUNNING;
    ip.start_us = now;
    ip.end_us = 0;
    if (ip.cfg.role == IPERF_ROLE_CLIENT && ip.cfg.duration_ms) {
        ip.deadline_us = now + (uint64_t)ip.cfg.duration_ms * 1000u;
    }
    interval_start(now);
}

/* ---- TCP client ----------------------------------------------------------------------------- */

static bool tcp_client_done_writing(uint64_t now)
{
    if (ip.cfg.amount) {
        return ip.written >= ip.cfg.amount;
    }
    return now >= ip.deadline_us;
}

/* Bytes the bandwidth limit allows to be written by now (UINT64_MAX without a limit). */
static uint64_t paced_allowance(uint64_t sent, uint64_t now)
{
    if (ip.cfg.bandwidth == 0) {
        return UINT64_MAX;
    }
    uint64_t allowed = (now - ip.start_us) * ip.cfg.bandwidth / 8000000u;
    return allowed > sent ? allowed - sent : 0;
}

static void tcp_client_drain_check(uint64_t now)
{
    if (ip.pcb != NULL && ip.pcb->unacked == NULL && ip.pcb->unsent == NULL) {
        ip.end_us = now;
        finish(ip.bytes > 0 ? "ok" : "stalled"); /* connected but could not send a byte */
    }
}

static void tcp_client_push(void)
{
    uint64_t now = fw_platform_time_us();
    if (ip.state == ST_RUNNING && tcp_client_done_writing(now)) {
        ip.state = ST_DRAINING;
        ip.drain_deadline_us = now + CLOSE_TIMEOUT_US;
    }
    if (ip.state == ST_DRAINING) {
        tcp_output(ip.pcb);
        tcp_client_drain_check(now);
        return;
    }
    if (ip.state != ST_RUNNING) {
        return;
    }
    uint64_t allowance = paced_allowance(ip.written, now);
    bool wrote = false;
    while (allowance > 0) {
        uint32_t space = tcp_sndbuf(ip.pcb);
        uint32_t queued = tcp_sndqueuelen(ip.pcb);
        if (space == 0 || queued >= TCP_SND_QUEUELEN - 1) {
            break;
        }
        /* a referenced write costs up to two pbufs per segment of the peer's MSS */
        uint32_t by_queue = ((TCP_SND_QUEUELEN - queued) / 2u) * tcp_mss(ip.pcb);
        uint64_t chunk = ip.cfg.len - ip.write_offset;
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
        if (ip.cfg.amount && chunk > ip.cfg.amount - ip.written) {
            chunk = ip.cfg.amount - ip.written;
        }
        if (chunk == 0) {
            break;
        }
        /* Writes shorter than a segment are copied, as a socket layer does, so lwIP can fill
         * full segments; longer ones are sent by reference from the constant payload. */
        u8_t flags = TCP_WRITE_FLAG_MORE | (chunk < TCP_MSS ? TCP_WRITE_FLAG_COPY : 0);
        err_t err = tcp_write(ip.pcb, tx_payload, (u16_t)chunk, flags);
        if (err != ERR_OK) {
            break; /* ERR_MEM: queue full, retried from the sent callback */
        }
        wrote = true;
        ip.written += chunk;
        allowance -= chunk;
        ip.write_offset = (uint32_t)((ip.write_offset + chunk) % ip.cfg.len);
        if (ip.cfg.amount && ip.written >= ip.cfg.amount) {
            break;
        }
    }
    if (wrote) {
        tcp_output(ip.pcb);
    }
}

static err_t tcp_client_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)arg;
    (void)pcb;
    ip.bytes += len;
    tcp_client_push();
    return ERR_OK;
}

static err_t tcp_discard_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    (void)err;
    if (p == NULL) {
        /* peer closed its side */
        if (ip.state == ST_RUNNING || ip.state == ST_DRAINING) {
            ip.end_us = fw_platform_time_us();
            finish(ip.state == ST_DRAINING ? "ok" : "peer_closed");
        }
        return ERR_OK;
    }
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static void tcp_pcb_err(void *arg, err_t err)
{
    (void)arg;
    ip.pcb = NULL; /* already freed by lwIP */
    if (ip.state == ST_IDLE) {
        return;
    }
    ip.end_us = fw_platform_time_us();
    if (ip.state == ST_CONNECTING) {
        finish(err == ERR_RST ? "refused" : "connect_failed");
    } else if (ip.cfg.role == IPERF_ROLE_SERVER && ip.state == ST_RUNNING) {
        finish(err == ERR_RST ? "reset" : "error");
    } else {
        finish(err == ERR_RST ? "reset" : "error");
    }
}

static err_t tcp_client_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    (void)pcb;
    if (err != ERR_OK) {
        return err;
    }
    begin_running(fw_platform_time_us());
    tcp_client_push();
    return ERR_OK;
}

static void tcp_client_start(void)
{
    ip.pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    if (ip.pcb == NULL) {
        fw_err(CMD, "out of TCP PCBs");
        fw_test_release();
        return;
    }
    ip.pcb->tos = ip.cfg.tos;
    tcp_arg(ip.pcb, NULL);
    tcp_err(ip.pcb, tcp_pcb_err);
    tcp_recv(ip.pcb, tcp_discard_recv);
    tcp_sent(ip.pcb, tcp_client_sent);
    ip.state = ST_CONNECTING;
    ip.drain_deadline_us = fw_platform_time_us() + CLOSE_TIMEOUT_US; /* connect timeout too */
    char peer[32];
    peer_str(peer, sizeof peer);
    fw_printf("iperf: TCP client connecting to %s\r\n", peer);
    err_t err = tcp_connect(ip.pcb, &ip.peer, ip.peer_port, tcp_client_connected);
    if (err != ERR_OK) {
        finish("connect_failed");
    }
}

/* ---- TCP server ----------------------------------------------------------------------------- */

static err_t tcp_server_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    (void)err;
    if (p == NULL) {
        ip.end_us = fw_platform_time_us();
        finish("ok");
        return ERR_OK;
    }
    ip.bytes += p->tot_len;
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static err_t tcp_server_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK || newpcb == NULL) {
        return ERR_VAL;
    }
    if (ip.state != ST_LISTEN) {
        tcp_abort(newpcb); /* one session per test */
        return ERR_ABRT;
    }
    ip.pcb = newpcb;
    ip_addr_copy(ip.peer, newpcb->remote_ip);
    ip.peer_port = newpcb->remote_port;
    newpcb->tos = ip.cfg.tos;
    tcp_arg(newpcb, NULL);
    tcp_recv(newpcb, tcp_server_recv);
    tcp_err(newpcb, tcp_pcb_err);
    char peer[32];
    peer_str(peer, sizeof peer);
    fw_printf("iperf: accepted TCP connection from %s\r\n", peer);
    begin_running(fw_platform_time_us());
    return ERR_OK;
}

static void tcp_server_start(void)
{
    struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t bind_addr;
    ip_addr_set_ip4_u32(&bind_addr, lwip_htonl(ip.cfg.bind_ip));
    if (pcb == NULL) {
        fw_err(CMD, "out of TCP PCBs");
        fw_test_release();
        return;
    }
    if (tcp_bind(pcb, &bind_addr, ip.cfg.port) != ERR_OK) {
        tcp_close(pcb);
        fw_err(CMD, "cannot bind TCP port %u", (unsigned)ip.cfg.port);
        fw_test_release();
        return;
    }
    ip.listen_pcb = tcp_listen_with_backlog(pcb, 1);
    if (ip.listen_pcb == NULL) {
        tcp_close(pcb);
        fw_err(CMD, "cannot listen on TCP port %u", (unsigned)ip.cfg.port);
        fw_test_release();
        return;
    }
    tcp_accept(ip.listen_pcb, tcp_server_accept);
    ip.state = ST_LISTEN;
    fw_printf("iperf: TCP server listening on port %u\r\n", (unsigned)ip.cfg.port);
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
    (void)arg;
    uint8_t hdr[IPERF_UDP_HDR_LEN];
    if (p->tot_len >= IPERF_UDP_HDR_LEN && pbuf_copy_partial(p, hdr, sizeof hdr, 0) == sizeof hdr &&
        (hdr[0] & 0x80u) != 0) {
        send_server_reply(pcb, hdr, &ip.linger_report, addr, port); /* a repeated FIN */
    }
    pbuf_free(p);
}

static void udp_server_end(const char *status)
{
    /* keep answering repeated FINs for a while: the client may have missed the first reply */
    if (ip.rx.finished && ip.upcb != NULL) {
        if (ip.linger_pcb != NULL) {
            udp_remove(ip.linger_pcb);
        }
        ip.linger_pcb = ip.upcb;
        ip.upcb = NULL;
        iperf_udp_rx_report(&ip.rx, &ip.linger_report);
        udp_recv(ip.linger_pcb, linger_recv, NULL);
        ip.linger_until_us = fw_platform_time_us() + FW_IPERF_UDP_LINGER_MS * 1000u;
    }
    finish(status);
}

static void udp_server_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)arg;
    uint64_t now = fw_platform_time_us();
    uint8_t head[IPERF_UDP_HDR_LEN + 4];
    uint16_t n = pbuf_copy_partial(p, head, sizeof head, 0);
    uint16_t len = p->tot_len;
    pbuf_free(p);
    if (ip.state == ST_RUNNING && (!ip_addr_cmp(addr, &ip.peer) || port != ip.peer_port)) {
        return; /* another sender during a test */
    }
    bool first = !ip.rx.started;
    /* account with the real datagram length; only the header bytes are inspected */
    enum iperf_rx_kind kind = iperf_udp_rx_account(&ip.rx, head, n < len ? n : len, now);
    if (kind == IPERF_RX_INVALID) {
        return;
    }
    if (kind == IPERF_RX_DATA) {
        ip.rx.bytes += (uint64_t)len - (n < len ? n : len);
        ip.bytes = ip.rx.bytes;
        if (first) {
            ip_addr_copy(ip.peer, *addr);
            ip.peer_port = port;
            char peer[32];
            peer_str(peer, sizeof peer);
            fw_printf("iperf: UDP datagrams from %s\r\n", peer);
            begin_running(now);
        }
        return;
    }
    /* FIN: answer with the server report, then end the test */
    struct iperf_server_report rep;
    iperf_udp_rx_report(&ip.rx, &rep);
    send_server_reply(pcb, ip.rx.fin_hdr, &rep, addr, port);
    ip.end_us = now;
    udp_server_end("ok");
}

static void udp_server_start(void)
{
    if (ip.linger_pcb != NULL) {
        udp_remove(ip.linger_pcb);
        ip.linger_pcb = NULL;
    }
    ip.upcb = udp_new_ip_type(IPADDR_TYPE_V4);
    if (ip.upcb == NULL) {
        fw_err(CMD, "out of UDP PCBs");
        fw_test_release();
        return;
    }
    ip_addr_t bind_addr;
    ip_addr_set_ip4_u32(&bind_addr, lwip_htonl(ip.cfg.bind_ip));
    if (udp_bind(ip.upcb, &bind_addr, ip.cfg.port) != ERR_OK) {
        udp_remove(ip.upcb);
        ip.upcb = NULL;
        fw_err(CMD, "cannot bind UDP port %u", (unsigned)ip.cfg.port);
        fw_test_release();
        return;
    }
    ip.upcb->tos = ip.cfg.tos;
    iperf_udp_rx_init(&ip.rx);
    udp_recv(ip.upcb, udp_server_recv, NULL);
    ip.state = ST_LISTEN;
    fw_printf("iperf: UDP server listening on port %u\r\n", (unsigned)ip.cfg.port);
}

/* ---- UDP client ----------------------------------------------------------------------------- */

static bool udp_send_datagram(int64_t seq, uint64_t now)
{
    struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)ip.cfg.len, PBUF_RAM);
    if (p == NULL) {
        ip.send_errors++;
        return false;
    }
    memset(p->payload, 0, p->len);
    iperf_udp_hdr_encode((uint8_t *)p->payload, seq, now);
    err_t err = udp_send(ip.upcb, p);
    pbuf_free(p);
    if (err != ERR_OK) {
        ip.send_errors++;
        return false;
    }
    return true;
}

static void udp_client_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)arg;
    (void)pcb;
    (void)addr;
    (void)port;
    uint8_t buf[IPERF_SERVER_REPLY_LEN + IPERF_SERVER_REPORT_EXT_LEN + IPERF_SERVER_REPORT_EXT2_LEN];
    uint16_t n = pbuf_copy_partial(p, buf, sizeof buf, 0);
    pbuf_free(p);
    if (ip.state == ST_FIN_WAIT && iperf_server_reply_decode(buf, n, &ip.report)) {
        ip.have_report = true;
        finish("ok");
    }
}

static void udp_client_send_fin(uint64_t now)
{
    udp_send_datagram(-(ip.seq + 1), now);
    ip.fin_tries++;
    ip.fin_next_us = now + FW_IPERF_UDP_FIN_WAIT_MS * 1000u;
}

static void udp_client_poll(uint64_t now)
{
    if (ip.state == ST_FIN_WAIT) {
        if (now >= ip.fin_next_us) {
            if (ip.fin_tries >= FW_IPERF_UDP_FIN_RETRIES) {
                finish("ok"); /* server_report=0 tells the missing report */
            } else {
                udp_client_send_fin(now);
            }
        }
        return;
    }
    for (unsigned n = 0; n < FW_IPERF_UDP_BURST_MAX; n++) {
        bool done = ip.cfg.amount ? ip.bytes >= ip.cfg.amount : now >= ip.deadline_us;
        if (done) {
            ip.end_us = now;
            ip.state = ST_FIN_WAIT;
            udp_client_send_fin(now);
            return;
        }
        if (paced_allowance(ip.bytes, now) == 0) {
            return;
        }
        if (!udp_send_datagram(ip.seq + 1, now)) {
            return; /* out of buffers: try again on the next poll */
        }
        ip.seq++;
        ip.datagrams++;
        ip.bytes += ip.cfg.len;
    }
}

static void udp_client_start(void)
{
    ip.upcb = udp_new_ip_type(IPADDR_TYPE_V4);
    if (ip.upcb == NULL) {
        fw_err(CMD, "out of UDP PCBs");
        fw_test_release();
        return;
    }
    ip.upcb->tos = ip.cfg.tos;
    if (udp_connect(ip.upcb, &ip.peer, ip.peer_port) != ERR_OK) {
        udp_remove(ip.upcb);
        ip.upcb = NULL;
        fw_err(CMD, "cannot connect UDP socket");
        fw_test_release();
        return;
    }
    udp_recv(ip.upcb, udp_client_recv, NULL);
    char peer[32];
    peer_str(peer, sizeof peer);
    fw_printf("iperf: UDP client sending to %s\r\n", peer);
    begin_running(fw_platform_time_us());
}

/* ---- Command, poll, deadline ---------------------------------------------------------------- */

static void abort_test(void)
{
    if (ip.state == ST_IDLE) {
        fw_printf("RESULT iperf action=abort stopped=0\r\n");
        return;
    }
    if (ip.pcb != NULL) {
        tcp_err(ip.pcb, NULL);
        tcp_abort(ip.pcb);
        ip.pcb = NULL;
    }
    finish("aborted");
    fw_printf("RESULT iperf action=abort stopped=1\r\n");
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
        abort_test();
        return;
    }
    if (!fw_test_claim(CMD, "iperf")) {
        return;
    }
    if (ip.linger_pcb != NULL && ip.cfg.port == cfg.port) {
        udp_remove(ip.linger_pcb);
        ip.linger_pcb = NULL;
    }
    struct udp_pcb *linger = ip.linger_pcb;
    struct tcp_pcb *closing = ip.closing_pcb;
    uint64_t linger_until = ip.linger_until_us;
    struct iperf_server_report linger_report = ip.linger_report;
    memset(&ip, 0, sizeof ip);
    ip.linger_pcb = linger;
    ip.closing_pcb = closing;
    ip.linger_until_us = linger_until;
    ip.linger_report = linger_report;
    ip.cfg = cfg;
    ip_addr_set_ip4_u32(&ip.peer, lwip_htonl(cfg.peer_ip));
    ip.peer_port = cfg.port;
    if (cfg.role == IPERF_ROLE_SERVER && cfg.duration_ms) {
        ip.deadline_us = fw_platform_time_us() + (uint64_t)cfg.duration_ms * 1000u;
    }
    if (cfg.role == IPERF_ROLE_CLIENT) {
        if (cfg.udp) {
            udp_client_start();
        } else {
            tcp_client_start();
        }
    } else if (cfg.udp) {
        udp_server_start();
    } else {
        tcp_server_start();
    }
}

void iperf_poll(uint64_t now)
{
    if (ip.closing_pcb != NULL && tcp_close(ip.closing_pcb) == ERR_OK) {
        ip.closing_pcb = NULL;
    }
    if (ip.linger_pcb != NULL && now >= ip.linger_until_us) {
        udp_remove(ip.linger_pcb);
        ip.linger_pcb = NULL;
    }
    if (ip.state == ST_IDLE) {
        return;
    }
    if (ip.state == ST_RUNNING || ip.state == ST_DRAINING) {
        interval_poll(now);
    }
    if (ip.cfg.role == IPERF_ROLE_SERVER) {
        if (ip.deadline_us && now >= ip.deadline_us) {
            ip.end_us = now;
            if (ip.cfg.udp) {
                udp_server_end(ip.state == ST_LISTEN ? "timeout" : "time_limit");
            } else {
                finish(ip.state == ST_LISTEN ? "timeout" : "time_limit");
            }
        } else if (ip.cfg.udp && ip.state == ST_RUNNING &&
                   now - ip.rx.last_us > FW_IPERF_UDP_IDLE_MS * 1000u) {
            ip.end_us = ip.rx.last_us;
            udp_server_end("no_fin");
        }
        return;
    }
    if (ip.cfg.udp) {
        if (ip.state == ST_RUNNING || ip.state == ST_FIN_WAIT) {
            udp_client_poll(now);
        }
        return;
    }
    if (ip.state == ST_CONNECTING || ip.state == ST_DRAINING) {
        if (now >= ip.drain_deadline_us) {
            if (ip.state == ST_DRAINING) {
                ip.end_us = now;
            }
            if (ip.pcb != NULL) {
                tcp_err(ip.pcb, NULL);
                tcp_abort(ip.pcb);
                ip.pcb = NULL;
            }
            finish(ip.state == ST_CONNECTING ? "connect_timeout" : "ack_timeout");
        }
        return;
    }
    tcp_client_push();
}

uint64_t iperf_next_deadline_us(void)
{
    uint64_t next = UINT64_MAX;
    if (ip.linger_pcb != NULL) {
        next = ip.linger_until_us;
    }
    if (ip.closing_pcb != NULL) {
        next = 1;
    }
#define EARLIER(t) do { if ((t) != 0 && (t) < next) next = (t); } while (0)
    switch (ip.state) {
    case ST_IDLE:
        break;
    case ST_LISTEN:
        EARLIER(ip.deadline_us);
        break;
    case ST_CONNECTING:
    case ST_DRAINING:
        EARLIER(ip.drain_deadline_us);
        EARLIER(ip.next_interval_us);
        break;
    case ST_RUNNING:
        EARLIER(ip.next_interval_us);
        EARLIER(ip.deadline_us);
        if (ip.cfg.role == IPERF_ROLE_SERVER && ip.cfg.udp) {
            EARLIER(ip.rx.last_us + FW_IPERF_UDP_IDLE_MS * 1000u);
        }
        if (ip.cfg.role == IPERF_ROLE_CLIENT && ip.cfg.bandwidth != 0) {
            uint64_t sent = ip.cfg.udp ? ip.bytes : ip.written;
            uint64_t next_send = ip.start_us + sent * 8000000u / ip.cfg.bandwidth;
            EARLIER(next_send < 1 ? 1 : next_send);
        } else if (ip.cfg.role == IPERF_ROLE_CLIENT && ip.cfg.udp) {
            next = 1; /* UDP as fast as possible: poll again at once */
        }
        break;
    case ST_FIN_WAIT:
        EARLIER(ip.fin_next_us);
        break;
    }
#undef EARLIER
    return next;
}
