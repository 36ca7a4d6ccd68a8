#include "test_peer.h"

#include <stdlib.h>
#include <string.h>

#include "fw_app.h"
#include "lwip/init.h"
#include "lwip/memp.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/timeouts.h"
#include "test_platform.h"

#define KEPT 256
#define FRAME_MAX 1518

static uint8_t frames[KEPT][FRAME_MAX];
static uint16_t lengths[KEPT];
static unsigned count; /* since peer_clear; the last KEPT are kept */

static err_t keep_output(struct netif *netif, struct pbuf *p)
{
    (void)netif;
    unsigned i = count % KEPT;
    lengths[i] = pbuf_copy_partial(p, frames[i], FRAME_MAX, 0);
    count++;
    return ERR_OK;
}

void peer_attach(struct netif *netif)
{
    netif_set_default(netif); /* the route of every packet the DUT sends (LWIP_SINGLE_NETIF) */
    netif->linkoutput = keep_output;
    peer_clear();
}

void peer_clear(void)
{
    count = 0;
}

unsigned peer_frames(void)
{
    return count;
}

uint16_t peer_frame_back(unsigned back, const uint8_t **bytes)
{
    if (back >= count || back >= KEPT) {
        return 0;
    }
    const unsigned slot = (count - 1u - back) % KEPT;
    *bytes = frames[slot];
    return lengths[slot];
}

static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)((b[0] << 8) | b[1]);
}

static uint32_t get32(const uint8_t *b)
{
    return ((uint32_t)get16(b) << 16) | get16(b + 2);
}

/* The kept frame i (oldest first) as an IPv4 packet of `proto`: its IP header, NULL when not one. */
static const uint8_t *ip_packet(unsigned i, uint8_t proto, const uint8_t **l4, uint16_t *l4_len)
{
    const unsigned first = count > KEPT ? count - KEPT : 0;
    const unsigned slot = (first + i) % KEPT;
    const uint8_t *f = frames[slot];
    if (lengths[slot] < 14 + 20 || get16(f + 12) != 0x0800) {
        return NULL;
    }
    const uint8_t *ip = f + 14;
    unsigned ihl = (ip[0] & 0x0fu) * 4u;
    unsigned total = get16(ip + 2);
    if (ip[9] != proto || total < ihl || 14u + total > lengths[slot]) {
        return NULL;
    }
    *l4 = ip + ihl;
    *l4_len = (uint16_t)(total - ihl);
    return ip;
}

static unsigned kept(void)
{
    return count > KEPT ? KEPT : count;
}

static bool tcp_at(unsigned i, struct peer_seg *s)
{
    const uint8_t *tcp;
    uint16_t len;
    const uint8_t *ip = ip_packet(i, 6, &tcp, &len);
    if (ip == NULL || len < 20) {
        return false;
    }
    unsigned thl = (tcp[12] >> 4) * 4u;
    *s = (struct peer_seg){get32(ip + 12), get32(ip + 16), get16(tcp), get16(tcp + 2), get32(tcp + 4),
                           get32(tcp + 8), (uint8_t)(tcp[13] & 0x3fu), get16(tcp + 14),
                           (uint16_t)(len > thl ? len - thl : 0)};
    return true;
}

bool peer_last_tcp(uint32_t dst, uint16_t dport, struct peer_seg *out)
{
    for (unsigned i = kept(); i-- > 0;) {
        struct peer_seg s;
        if (tcp_at(i, &s) && s.dst == dst && s.dport == dport) {
            *out = s;
            return true;
        }
    }
    return false;
}

unsigned peer_count_tcp(uint32_t dst, uint16_t dport, uint8_t flags)
{
    unsigned n = 0;
    for (unsigned i = 0; i < kept(); i++) {
        struct peer_seg s;
        n += tcp_at(i, &s) && s.dst == dst && s.dport == dport && (s.flags & flags) == flags;
    }
    return n;
}

unsigned peer_count_udp(uint32_t dst, uint16_t dport)
{
    unsigned n = 0;
    for (unsigned i = 0; i < kept(); i++) {
        const uint8_t *udp;
        uint16_t len;
        const uint8_t *ip = ip_packet(i, 17, &udp, &len);
        n += ip != NULL && len >= 8 && get32(ip + 16) == dst && get16(udp + 2) == dport;
    }
    return n;
}

void peer_arp(struct netif *netif, uint32_t ip, const uint8_t mac[6])
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, 42, PBUF_POOL);
    if (p == NULL) {
        return;
    }
    uint8_t *f = (uint8_t *)p->payload;
    memset(f, 0xff, 6);
    memcpy(f + 6, mac, 6);
    test_put16(f + 12, 0x0806);
    uint8_t *a = f + 14;
    test_put16(a, 1);      /* Ethernet */
    test_put16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    test_put16(a + 6, 1); /* request */
    memcpy(a + 8, mac, 6);
    test_put32(a + 14, ip);
    memset(a + 18, 0, 6);
    test_put32(a + 24, lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(netif))));
    if (netif->input(p, netif) != ERR_OK) {
        pbuf_free(p);
    }
}

uint16_t peer_chksum(uint32_t sum, const uint8_t *data, uint32_t len)
{
    for (uint32_t i = 0; i + 1 < len; i += 2) {
        sum += (uint32_t)((data[i] << 8) | data[i + 1]);
    }
    if (len & 1u) {
        sum += (uint32_t)data[len - 1] << 8;
    }
    while (sum >> 16) {
        sum = (sum & 0xffffu) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

void peer_tcp(struct netif *netif, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t seq,
              uint32_t ack, uint8_t flags, uint16_t wnd, const uint8_t *data, uint16_t len)
{
    static uint8_t seg[20 + 1460];
    if (len > 1460) {
        return;
    }
    memset(seg, 0, 20);
    test_put16(seg, sport);
    test_put16(seg + 2, dport);
    test_put32(seg + 4, seq);
    test_put32(seg + 8, ack);
    seg[12] = 5 << 4;
    seg[13] = flags;
    test_put16(seg + 14, wnd);
    if (len > 0) {
        memcpy(seg + 20, data, len);
    }
    uint32_t total = 20u + len;
    uint32_t pseudo = (src >> 16) + (src & 0xffffu) + (dst >> 16) + (dst & 0xffffu) + 6u + total;
    test_put16(seg + 16, peer_chksum(pseudo, seg, total));
    test_inject_ipv4(netif, src, dst, 6, 0, 0, seg, (uint16_t)total);
}

bool peer_connect(struct peer_conn *c)
{
    peer_tcp(c->netif, c->ip, c->dut_ip, c->port, c->dut_port, c->seq, 0, PEER_SYN, c->wnd, NULL, 0);
    struct peer_seg s;
    if (!peer_last_tcp(c->ip, c->port, &s) || s.flags != (PEER_SYN | PEER_ACK) || s.ack != c->seq + 1u) {
        return false;
    }
    c->seq++;
    c->ack = s.seq + 1u;
    peer_tcp(c->netif, c->ip, c->dut_ip, c->port, c->dut_port, c->seq, c->ack, PEER_ACK, c->wnd, NULL, 0);
    return true;
}

static uint32_t dut_isn;

bool peer_accept(struct peer_conn *c)
{
    struct peer_seg s;
    if (!peer_last_tcp(c->ip, c->port, &s) || s.flags != PEER_SYN) {
        return false;
    }
    c->dut_port = s.sport;
    c->dut_ip = s.src;
    c->ack = s.seq + 1u;
    dut_isn = c->ack;
    peer_tcp(c->netif, c->ip, c->dut_ip, c->port, c->dut_port, c->seq, c->ack, PEER_SYN | PEER_ACK, c->wnd, NULL, 0);
    c->seq++;
    return true;
}

void peer_send(struct peer_conn *c, const uint8_t *data, uint16_t len)
{
    peer_tcp(c->netif, c->ip, c->dut_ip, c->port, c->dut_port, c->seq, c->ack, PEER_PSH | PEER_ACK, c->wnd, data, len);
    c->seq += len;
}

uint32_t peer_ack_all(struct peer_conn *c, uint16_t wnd)
{
    /* the highest sequence number the DUT has sent on this connection, in order of sending */
    for (unsigned i = 0; i < kept(); i++) {
        struct peer_seg s;
        if (tcp_at(i, &s) && s.dst == c->ip && s.dport == c->port && s.sport == c->dut_port) {
            uint32_t end = s.seq + s.len + ((s.flags & (PEER_SYN | PEER_FIN)) ? 1u : 0u);
            if ((int32_t)(end - c->ack) > 0) {
                c->ack = end;
            }
        }
    }
    c->wnd = wnd;
    peer_tcp(c->netif, c->ip, c->dut_ip, c->port, c->dut_port, c->seq, c->ack, PEER_ACK, wnd, NULL, 0);
    return c->ack - dut_isn;
}

void peer_fin(struct peer_conn *c)
{
    peer_tcp(c->netif, c->ip, c->dut_ip, c->port, c->dut_port, c->seq, c->ack, PEER_FIN | PEER_ACK, c->wnd, NULL, 0);
    c->seq++;
}

static bool planted[FW_GUARD_COUNT];

static bool guard_off(enum fw_guard guard)
{
    const char *all = getenv("TEST_GUARDS_OFF");
    return planted[guard] || (all != NULL && strcmp(all, "1") == 0);
}

static const struct fw_fault_hooks hooks = {NULL, NULL, guard_off};

void test_guards_install(void)
{
    fw_app_set_fault_hooks(&hooks);
}

void test_guard_plant(enum fw_guard guard, bool off)
{
    planted[guard] = off;
}

void peer_bring_up(struct netif *netif, uint32_t ip)
{
    lwip_init();
    test_netif_add(netif, ip, 0xffffff00u);
    peer_attach(netif);
    test_guards_install();
    fw_app_init(netif);
}

void peer_feed(const char *line)
{
    fw_app_console_input(line, strlen(line));
}

void peer_advance_to(uint64_t t, uint64_t step_us)
{
    while (test_now_us < t) {
        uint64_t step = t - test_now_us < step_us ? t - test_now_us : step_us;
        test_now_us += step;
        sys_check_timeouts();
        fw_app_poll();
    }
}

unsigned peer_tcp_pcbs_used(void)
{
    return (unsigned)lwip_stats.memp[MEMP_TCP_PCB]->used;
}
