/*
 * Unit tests: half-open TCP connections under a SYN flood (fw_tcp_guard.c), inside the whole
 * application (lwIP 2.1.3 with the project's lwipopts.h) with crafted segments and the DUT's own
 * segments read back:
 *   - SYNs from addresses nobody answers ARP for fill the iperf server's backlog; the real
 *     client's SYN still gets its SYN-ACK (the oldest half-open connection makes room), its test
 *     runs, and `stats` counts the evictions (tcp_half_open_evicted);
 *   - half-open connections are aborted FW_TCP_HALF_OPEN_MAX_MS after their SYN (not lwIP's 20 s):
 *     the TCP PCB pool (and the ARP queue, SYN-ACKs to unanswered addresses) is back at its idle
 *     level within 8 s (`stats` tcp_half_open_reaped);
 *   - a flood over several server runs (whose half-open connections outlive their listener)
 *     takes every TCP PCB: the DUT's own client still gets one (the oldest half-open one is
 *     aborted), and so does a new server;
 *   - with the guard off (the host's `hold_half_open`) each of these fails as lwIP 2.1.3 does on
 *     its own: the SYN dropped (tcp_listen_input: accepts_pending >= backlog), the PCBs held 20 s
 *     (TCP_SYN_RCVD_TIMEOUT) and their SYN-ACKs waiting for ARP, the client out of PCBs
 *     (tcp_alloc/tcp_kill_prio: none of a lower priority).
 * The flood's sources are addresses nobody answers ARP for, of which the guard against unresolved
 * sources (FW_GUARD_SYN_UNRESOLVED, test_syn_unresolved.c) answers only FW_TCP_UNRESOLVED_HALF_OPEN
 * SYNs: it is off here, so that these SYNs fill the backlog and the pool as any SYNs could (from
 * addresses that answer ARP, or from the PC's own address with other ports).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_tcp_guard.h"
#include "lwip/init.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/stats.h"
#include "lwip/timeouts.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u     /* 10.77.0.2 */
#define CLIENT_IP 0x0a4d0001u  /* 10.77.0.1, the real client (answers ARP) */
#define SPOOFED_IP 0x0a4d0050u /* 10.77.0.80 + n: addresses nobody answers ARP for */

static struct netif netif;

static void advance_to(uint64_t t)
{
    peer_advance_to(t, 50000u);
}

/* n SYNs from spoofed addresses (one port each) to the iperf port. */
static void syn_flood(unsigned first, unsigned n)
{
    for (unsigned i = first; i < first + n; i++) {
        peer_tcp(&netif, SPOOFED_IP + i, DUT_IP, (uint16_t)(30000u + i), FW_IPERF_DEFAULT_PORT, 7777u * i, 0,
                 PEER_SYN, 8192, NULL, 0);
        test_now_us += 1000u;
    }
}

static void show_output_if_failed(const char *scenario, int failures_before)
{
    if (check_failures != failures_before || getenv("TEST_VERBOSE") != NULL) {
        fprintf(stderr, "--- %s printed:\n%s", scenario, test_output);
    }
}

/* The flood fills the backlog, then the real client connects and runs a short test. */
static void test_client_after_a_flood(bool guard_on)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_TCP_HALF_OPEN, !guard_on);
    peer_feed("stats reset\r\n");
    const unsigned idle = peer_tcp_pcbs_used();
    const unsigned arp_idle = (unsigned)lwip_stats.memp[MEMP_ARP_QUEUE]->used;
    test_output_reset();
    peer_feed("iperf -s\r\n");
    syn_flood(0, FW_IPERF_TCP_BACKLOG + 2);
    CHECK(peer_tcp_pcbs_used() == idle + FW_IPERF_TCP_BACKLOG); /* the listener holds its backlog's worth */
    peer_clear();
    struct peer_conn c = {&netif, CLIENT_IP, DUT_IP, 50000, FW_IPERF_DEFAULT_PORT, 1000, 0, 8192};
    bool connected = peer_connect(&c);
    CHECK(connected == guard_on);
    if (connected) {
        static const uint8_t data[100];
        peer_send(&c, data, sizeof data);
        peer_fin(&c);
        peer_ack_all(&c, 8192); /* the DUT's FIN */
        CHECK(strstr(test_output, "iperf: accepted TCP connection from 10.77.0.1:50000\r\n") != NULL);
        CHECK(strstr(test_output, "RESULT iperf role=server proto=tcp status=ok peer=10.77.0.1:50000 bytes=100 ") !=
              NULL);
    } else {
        peer_feed("iperf -a\r\n");
    }
    test_output_reset();
    peer_feed("stats\r\n");
    char want[80];
    snprintf(want, sizeof want, " tcp_half_open_evicted=%u tcp_half_open_reaped=0", guard_on ? 3u : 0u);
    CHECK(strstr(test_output, want) != NULL);
    /* the half-open connections are gone FW_TCP_HALF_OPEN_MAX_MS after their SYN (guard off: 20 s) */
    const uint64_t t_flood = test_now_us;
    advance_to(t_flood + FW_TCP_HALF_OPEN_MAX_MS * 1000u + 500000u);
    CHECK(guard_on ? fw_tcp_guard_half_open() == 0 : peer_tcp_pcbs_used() >= idle + FW_IPERF_TCP_BACKLOG - 1u);
    advance_to(t_flood + 8000000u); /* every pool back at its idle level within 8 s: the suite's check */
    CHECK((peer_tcp_pcbs_used() <= idle + 1u) == guard_on); /* (the client's connection may still close) */
    if (guard_on) { /* nor do the SYN-ACKs to the spoofed addresses wait for ARP any more */
        CHECK((unsigned)lwip_stats.memp[MEMP_ARP_QUEUE]->used == arp_idle);
    }
    test_output_reset();
    peer_feed("stats\r\n");
    snprintf(want, sizeof want, " tcp_half_open_reaped=%u", guard_on ? 3u : 0u);
    CHECK(strstr(test_output, want) != NULL);
    show_output_if_failed(guard_on ? "client after a flood, guard on" : "client after a flood, guard off", failures);
    advance_to(test_now_us + 25000000u); /* lwIP's own 20 s and TIME_WAIT behind it */
    CHECK(peer_tcp_pcbs_used() == idle);
}

/* Three server runs of 1 s under a flood: their half-open connections take every TCP PCB. */
static void test_flood_takes_every_pcb(bool guard_on)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_TCP_HALF_OPEN, !guard_on);
    const unsigned idle = peer_tcp_pcbs_used();
    test_output_reset();
    for (unsigned run = 0; run < 3; run++) {
        peer_feed("iperf -s -t 1\r\n");
        syn_flood(10u * run, FW_IPERF_TCP_BACKLOG);
        advance_to(test_now_us + 1100000u); /* the run ends (timeout); its half-open connections stay */
    }
    /* a new server always finds a PCB; without the guard the third run's did not */
    CHECK((strstr(test_output, "ERR iperf out of TCP PCBs") == NULL) == guard_on);
    CHECK(peer_tcp_pcbs_used() == FW_MEMP_NUM_TCP_PCB);
    /* the DUT's own client, while the flood's connections are held (the last are 1.1 s old) */
    test_output_reset();
    peer_feed("iperf -c 10.77.0.1 -n 1000\r\n");
    if (guard_on) {
        CHECK(strstr(test_output, "iperf: TCP client connecting to 10.77.0.1:5001\r\n") != NULL);
        peer_feed("iperf -a\r\n");
    } else {
        CHECK(strstr(test_output, "ERR iperf out of TCP PCBs") != NULL);
    }
    show_output_if_failed(guard_on ? "every PCB, guard on" : "every PCB, guard off", failures);
    advance_to(test_now_us + 25000000u);
    CHECK(peer_tcp_pcbs_used() == idle);
}

int main(void)
{
    lwip_init();
    test_netif_add(&netif, DUT_IP, 0xffffff00u);
    peer_attach(&netif);
    test_guards_install();
    test_guard_plant(FW_GUARD_SYN_UNRESOLVED, true); /* the half-open guard alone (above) */
    fw_app_init(&netif);
    static const uint8_t client_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
    peer_arp(&netif, CLIENT_IP, client_mac);

    test_client_after_a_flood(true);
    test_client_after_a_flood(false);
    test_flood_takes_every_pcb(true);
    test_flood_takes_every_pcb(false);
    return check_summary("test_tcp_half_open");
}
