/*
 * Unit tests: IPv4 reassembly as fw_config.h bounds it (IP_REASSEMBLY on, FW_IP_REASS_*), inside the
 * whole application with crafted fragments handed to the netif as Ethernet frames:
 *   - a datagram in two fragments, the second first, reaches its UDP pcb whole, and every pbuf
 *     and reassembly record is back in its pool;
 *   - a datagram that never completes is freed by lwIP's 1-s reassembly timer on the tick after
 *     FW_IP_REASS_MAXAGE_S ticks (not before);
 *   - a flood of fragments of one datagram never holds more than FW_IP_REASS_MAX_PBUFS receive
 *     pbufs, a flood of first fragments of many datagrams never more than FW_IP_REASS_SLOTS
 *     records: the pool keeps room for ordinary traffic, and all is back after the timeout;
 *   - `stats` prints each pool's pbufs in use (pool_<NAME>_used) and the ipfrag counters.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "lwip/init.h"
#include "lwip/ip4_frag.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/udp.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u  /* 10.77.0.2 */
#define PEER_IP 0x0a4d0001u /* 10.77.0.1 */
#define PORT 9999

static struct netif netif;
static unsigned received;
static uint16_t received_len;
static int received_ok;

static void feed(const char *s)
{
    fw_app_console_input(s, strlen(s));
}

static uint32_t pool_used(memp_t pool)
{
    return (uint32_t)lwip_stats.memp[pool]->used;
}

/* One IPv4 fragment (UDP) from PEER_IP: `len` bytes at byte `offset` (a multiple of 8) of datagram
 * `id`, more fragments to come if `more`. */
static void inject_fragment(uint16_t id, uint16_t offset, int more, const uint8_t *data, uint16_t len)
{
    uint16_t frag = (uint16_t)((more ? 0x2000u : 0u) | (offset / 8u));
    CHECK(test_inject_ipv4(&netif, PEER_IP, DUT_IP, 17, id, frag, data, len));
}

static void on_udp(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)arg;
    (void)pcb;
    (void)addr;
    (void)port;
    uint8_t buf[64];
    received++;
    received_len = p->tot_len;
    received_ok = p->tot_len == 32 && pbuf_copy_partial(p, buf, 32, 0) == 32;
    for (unsigned i = 0; received_ok && i < 32; i++) {
        received_ok = buf[i] == (uint8_t)i;
    }
    pbuf_free(p);
}

static void test_two_fragments(void)
{
    uint8_t first[24], second[16];
    memset(first, 0, sizeof first);
    test_put16(first, 40000);       /* UDP source port */
    test_put16(first + 2, PORT);    /* destination */
    test_put16(first + 4, 8 + 32);  /* UDP length; checksum 0: none */
    for (unsigned i = 0; i < 16; i++) {
        first[8 + i] = (uint8_t)i;
        second[i] = (uint8_t)(16 + i);
    }
    inject_fragment(1, 24, 0, second, sizeof second); /* the last fragment first */
    CHECK(received == 0 && pool_used(MEMP_REASSDATA) == 1 && pool_used(MEMP_PBUF_POOL) == 1);
    inject_fragment(1, 0, 1, first, sizeof first);
    CHECK(received == 1 && received_len == 32 && received_ok);
    CHECK(pool_used(MEMP_REASSDATA) == 0 && pool_used(MEMP_PBUF_POOL) == 0);
    CHECK(lwip_stats.ip_frag.recv == 2);
}

static void test_incomplete_datagram_times_out(void)
{
    uint8_t data[8] = {0};
    inject_fragment(2, 0, 1, data, sizeof data); /* a first fragment whose rest never comes */
    CHECK(pool_used(MEMP_REASSDATA) == 1 && pool_used(MEMP_PBUF_POOL) == 1);
    for (int tick = 0; tick < FW_IP_REASS_MAXAGE_S; tick++) {
        ip_reass_tmr();
        CHECK(pool_used(MEMP_REASSDATA) == 1);
    }
    ip_reass_tmr();
    CHECK(pool_used(MEMP_REASSDATA) == 0 && pool_used(MEMP_PBUF_POOL) == 0);
}

static void test_floods_are_bounded(void)
{
    uint8_t data[8] = {0};
    /* one datagram, fragments at ever higher offsets, never the last */
    for (uint16_t i = 0; i < FW_IP_REASS_MAX_PBUFS + 8; i++) {
        inject_fragment(3, (uint16_t)(8u * i), 1, data, sizeof data);
        CHECK(pool_used(MEMP_PBUF_POOL) <= FW_IP_REASS_MAX_PBUFS);
    }
    CHECK(pool_used(MEMP_PBUF_POOL) == FW_IP_REASS_MAX_PBUFS);
    /* first fragments of many datagrams: the oldest make room (IP_REASS_FREE_OLDEST) */
    for (uint16_t id = 100; id < 100 + 4 * FW_IP_REASS_SLOTS; id++) {
        inject_fragment(id, 0, 1, data, sizeof data);
        CHECK(pool_used(MEMP_REASSDATA) <= FW_IP_REASS_SLOTS);
        CHECK(pool_used(MEMP_PBUF_POOL) <= FW_IP_REASS_MAX_PBUFS);
    }
    CHECK(pool_used(MEMP_REASSDATA) == FW_IP_REASS_SLOTS);
    for (int tick = 0; tick <= FW_IP_REASS_MAXAGE_S; tick++) {
        ip_reass_tmr();
    }
    CHECK(pool_used(MEMP_REASSDATA) == 0 && pool_used(MEMP_PBUF_POOL) == 0);
}

static void test_stats_fields(void)
{
    char want[128];
    struct pbuf *held = pbuf_alloc(PBUF_RAW, 100, PBUF_POOL);
    CHECK(held != NULL);
    test_output_reset();
    feed("stats\r\n");
    snprintf(want, sizeof want, " pool_PBUF_POOL_avail=%d pool_PBUF_POOL_used=1 pool_PBUF_POOL_max=", FW_PBUF_POOL_SIZE);
    CHECK(strstr(test_output, want) != NULL);
    /* the flood found every record taken (err: memp_malloc refused, the oldest datagram made room) */
    snprintf(want, sizeof want, " pool_REASSDATA_avail=%d pool_REASSDATA_used=0 pool_REASSDATA_max=%d pool_REASSDATA_err=",
             FW_IP_REASS_SLOTS, FW_IP_REASS_SLOTS);
    CHECK(strstr(test_output, want) != NULL);
    CHECK(strstr(test_output, " ipfrag_xmit=0 ipfrag_recv=") != NULL && strstr(test_output, " ipfrag_drop=") != NULL);
    CHECK(strstr(test_output, "\r\nipfrag xmit=0 recv=") != NULL);
    pbuf_free(held);
    test_output_reset();
    feed("stats reset\r\n");
    CHECK(lwip_stats.ip_frag.recv == 0 && lwip_stats.ip_frag.drop == 0);
}

int main(void)
{
    /* the sizes fw_config.h derives hold lwIP's own rules */
    CHECK(FW_IP_REASS_SLOTS >= 1 && FW_IP_REASS_SLOTS <= FW_IP_REASS_MAX_PBUFS);
    CHECK(FW_IP_REASS_MAX_PBUFS < FW_PBUF_POOL_SIZE);
    lwip_init();
    test_netif_add(&netif, DUT_IP, 0xffffff00u);
    fw_app_init(&netif);
    struct udp_pcb *pcb = udp_new();
    CHECK(pcb != NULL && udp_bind(pcb, IP4_ADDR_ANY, PORT) == ERR_OK);
    udp_recv(pcb, on_udp, NULL);
    test_two_fragments();
    test_incomplete_datagram_times_out();
    test_floods_are_bounded();
    test_stats_fields();
    return check_summary("test_ip_reass");
}
