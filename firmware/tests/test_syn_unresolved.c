/*
 * Unit tests: SYNs from on-link addresses nobody answers ARP for must not cost the DUT its ARP
 * entry for its real client (fw_tcp_guard.c, FW_TCP_UNRESOLVED_HALF_OPEN), inside the whole
 * application (lwIP 2.1.3 with the project's lwipopts.h) with crafted frames and the DUT's own
 * frames read back. lwIP answers each such SYN with a SYN-ACK that etharp_query queues on a new
 * ARP entry (ETHARP_FLAG_TRY_HARD), and etharp_find_entry recycles the oldest STABLE entry of a
 * full table (FW_ARP_TABLE_SIZE) before any pending one:
 *   - with a stable entry for the PC and the iperf server listening, 64 SYNs from 64 such
 *     addresses: with the guard the PC's entry is the same stable entry afterwards (index and MAC,
 *     etharp_find_addr), the PC's own SYN is answered at once (the SYN-ACK to its MAC, no ARP
 *     request for it) and its test runs; only FW_TCP_UNRESOLVED_HALF_OPEN of the 64 were answered,
 *     the rest dropped and counted (`stats` tcp_syn_unresolved_dropped, the tcpsyn line's
 *     unresolved_dropped=). With the guard off (the host's `evict_arp_for_syn`) the entry is gone,
 *     and the PC's SYN-ACK waits for a new ARP exchange;
 *   - the bench's case: a 2-s flood at 2,000 SYNs/s from those 64 addresses while the PC sends
 *     data on its connection: with the guard every ACK of the DUT goes straight to the PC's MAC;
 *     without it the DUT asks for the PC's address again in every 100 ms of the flood (the stall);
 *   - the places come back: one whose address answers ARP at once, the others once their half-open
 *     connection is gone and its pending ARP entry can have expired (FW_TCP_HALF_OPEN_MAX_MS +
 *     FW_TCP_UNRESOLVED_ARP_MS; a RST from the spoofed address frees nothing sooner), and SYNs from
 *     off-link addresses (their SYN-ACK goes to the gateway's entry) are never counted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_tcp_guard.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u     /* 10.77.0.2 */
#define PC_IP 0x0a4d0001u      /* 10.77.0.1, the real client (answers ARP, has a stable entry) */
#define SPOOFED_IP 0x0a4d0064u /* 10.77.0.100 + n: on-link addresses nobody answers ARP for */
#define SPOOFED_N 64u
#define GW_IP 0x0a4d00feu      /* 10.77.0.254, the gateway of the off-link case */
#define OFF_LINK_IP 0xc0000200u /* 192.0.2.0 + n */
#define OTHER_HOST_IP 0x0a4d00c8u /* 10.77.0.200 + n: other hosts on the link that ask for the DUT */

static struct netif netif;
static const uint8_t pc_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
static const uint8_t gw_mac[6] = {0x02, 0, 0, 0, 0, 0xfe};

static void advance_to(uint64_t t)
{
    peer_advance_to(t, 50000u);
}

static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)((b[0] << 8) | b[1]);
}

static uint32_t get32(const uint8_t *b)
{
    return ((uint32_t)get16(b) << 16) | get16(b + 2);
}

/* The DUT's ARP entry for ip (host order): its index in lwIP's table, its MAC in mac; -1: none
 * stable (no entry, or a pending one). */
static int arp_entry(uint32_t ip, uint8_t mac[6])
{
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(ip));
    struct eth_addr *eth;
    const ip4_addr_t *found;
    const ssize_t i = etharp_find_addr(&netif, &a, &eth, &found);
    if (i >= 0) {
        memcpy(mac, eth->addr, 6);
    }
    return (int)i;
}

/* ARP requests the DUT sent for ip since the last peer_clear (the last 256 frames). */
static unsigned dut_asked_for(uint32_t ip)
{
    const uint8_t *f;
    uint16_t len;
    unsigned n = 0;
    for (unsigned back = 0; (len = peer_frame_back(back, &f)) != 0; back++) {
        n += len >= 42 && get16(f + 12) == 0x0806 && get16(f + 20) == 1 && get32(f + 28) == DUT_IP &&
             get32(f + 38) == ip;
    }
    return n;
}

/* The DUT's last TCP segment to ip:port since the last peer_clear: its flags, its Ethernet
 * destination in mac; -1 when there is none. */
static int last_tcp_frame_to(uint32_t ip, uint16_t port, uint8_t mac[6])
{
    const uint8_t *f;
    uint16_t len;
    for (unsigned back = 0; (len = peer_frame_back(back, &f)) != 0; back++) {
        if (len >= 54 && get16(f + 12) == 0x0800 && f[14 + 9] == 6 && get32(f + 14 + 16) == ip) {
            const uint8_t *tcp = f + 14 + (f[14] & 0x0fu) * 4u;
            if (get16(tcp + 2) == port) {
                memcpy(mac, f, 6);
                return tcp[13];
            }
        }
    }
    return -1;
}

/* One SYN from spoofed address n (its own port) to the iperf port. */
static void spoofed_syn(unsigned n, uint16_t port)
{
    peer_tcp(&netif, SPOOFED_IP + n, DUT_IP, port, FW_IPERF_DEFAULT_PORT, 7777u * n + port, 0, PEER_SYN, 8192, NULL,
             0);
}

static void show_output_if_failed(const char *scenario, int failures_before)
{
    if (check_failures != failures_before || getenv("TEST_VERBOSE") != NULL) {
        fprintf(stderr, "--- %s printed:\n%s", scenario, test_output);
    }
}

static bool stats_has(const char *want)
{
    test_output_reset();
    peer_feed("stats\r\n");
    if (strstr(test_output, want) == NULL) {
        fprintf(stderr, "wanted \"%s\" in:\n%s", want, test_output);
        return false;
    }
    return true;
}

/* Everything of a scenario gone: half-open connections (the guard's 3 s, lwIP's 20 s), pending ARP
 * entries, TIME_WAIT, the guard's places; the PC's entry made fresh again. */
static void settle(void)
{
    peer_feed("iperf -a\r\n");
    advance_to(test_now_us + 25000000u);
    peer_arp(&netif, PC_IP, pc_mac);
}

/* The brief's case: 64 SYNs from 64 unresolved addresses, then the PC's own SYN. */
static void test_flood_keeps_the_pc_entry(bool guard_on)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_SYN_UNRESOLVED, !guard_on);
    uint8_t mac[6];
    const int pc_entry = arp_entry(PC_IP, mac);
    CHECK(pc_entry >= 0 && memcmp(mac, pc_mac, 6) == 0);
    peer_feed("stats reset\r\n");
    test_output_reset();
    peer_feed("iperf -s\r\n");
    peer_clear();
    for (unsigned n = 0; n < SPOOFED_N; n++) {
        spoofed_syn(n, (uint16_t)(30000u + n));
        advance_to(test_now_us + 500u); /* 2,000 SYNs/s */
    }
    /* the DUT asked for FW_TCP_UNRESOLVED_HALF_OPEN of them (their SYN-ACKs wait); without the
     * guard for every one */
    unsigned asked = 0;
    for (unsigned n = 0; n < SPOOFED_N; n++) {
        asked += dut_asked_for(SPOOFED_IP + n) != 0;
    }
    CHECK(asked == (guard_on ? FW_TCP_UNRESOLVED_HALF_OPEN : SPOOFED_N));
    /* the PC's entry: the same stable entry (without the guard: recycled for a spoofed address) */
    memset(mac, 0, sizeof mac);
    const int now_entry = arp_entry(PC_IP, mac);
    if (guard_on) {
        CHECK(now_entry == pc_entry && memcmp(mac, pc_mac, 6) == 0);
    } else {
        CHECK(now_entry < 0);
    }
    /* the PC's SYN: answered at once, to its MAC, without asking for it */
    peer_clear();
    struct peer_conn c = {&netif, PC_IP, DUT_IP, 50000, FW_IPERF_DEFAULT_PORT, 1000, 0, 8192};
    peer_tcp(&netif, PC_IP, DUT_IP, c.port, c.dut_port, c.seq, 0, PEER_SYN, c.wnd, NULL, 0);
    memset(mac, 0, sizeof mac);
    const int flags = last_tcp_frame_to(PC_IP, c.port, mac);
    CHECK((flags == (PEER_SYN | PEER_ACK) && memcmp(mac, pc_mac, 6) == 0) == guard_on);
    CHECK((dut_asked_for(PC_IP) == 0) == guard_on);
    if (guard_on) {
        struct peer_seg s;
        CHECK(peer_last_tcp(PC_IP, c.port, &s) && s.ack == c.seq + 1u);
        c.seq++;
        c.ack = s.seq + 1u;
        peer_tcp(&netif, PC_IP, DUT_IP, c.port, c.dut_port, c.seq, c.ack, PEER_ACK, c.wnd, NULL, 0);
        static const uint8_t data[100];
        peer_send(&c, data, sizeof data);
        peer_fin(&c);
        peer_ack_all(&c, 8192); /* the DUT's FIN */
        CHECK(strstr(test_output, "RESULT iperf role=server proto=tcp status=ok peer=10.77.0.1:50000 bytes=100 ") !=
              NULL);
        CHECK(dut_asked_for(PC_IP) == 0);
    }
    char want[64];
    const unsigned dropped = guard_on ? SPOOFED_N - FW_TCP_UNRESOLVED_HALF_OPEN : 0u;
    snprintf(want, sizeof want, " tcp_syn_unresolved_dropped=%u", dropped);
    CHECK(stats_has(want));
    snprintf(want, sizeof want, " unresolved_dropped=%u\r\n", dropped);
    CHECK(stats_has(want));
    CHECK(fw_tcp_guard_counts().unresolved_dropped == dropped);
    show_output_if_failed(guard_on ? "flood keeps the PC's entry, guard on" : "flood keeps the PC's entry, guard off",
                          failures);
    settle();
}

/* The bench's case: 2 s of 2,000 SYNs/s from the 64 addresses while the PC sends on its connection;
 * every 100 ms the PC sends two segments and the DUT's ACK must reach it at once. */
static void test_transfer_under_a_flood(bool guard_on)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_SYN_UNRESOLVED, !guard_on);
    peer_feed("stats reset\r\n");
    test_output_reset();
    peer_feed("iperf -s\r\n");
    peer_clear();
    struct peer_conn c = {&netif, PC_IP, DUT_IP, 50001, FW_IPERF_DEFAULT_PORT, 5000, 0, 8192};
    CHECK(peer_connect(&c));
    static const uint8_t data[1000];
    unsigned stalls = 0, asked = 0, rounds = 0;
    for (unsigned i = 0; i < 4000u; i++) {
        spoofed_syn(i % SPOOFED_N, (uint16_t)(20000u + i));
        advance_to(test_now_us + 500u);
        if (i % 200u != 199u) {
            continue;
        }
        rounds++;
        peer_clear();
        peer_send(&c, data, sizeof data);
        peer_send(&c, data, sizeof data); /* the second segment is ACKed at once (no delayed ACK) */
        uint8_t mac[6];
        struct peer_seg s;
        const bool at_once = last_tcp_frame_to(PC_IP, c.port, mac) >= 0 && memcmp(mac, pc_mac, 6) == 0 &&
                             peer_last_tcp(PC_IP, c.port, &s) && s.ack == c.seq;
        asked += dut_asked_for(PC_IP) != 0; /* (or the PC's entry was pending already) */
        if (!at_once) {
            stalls++;                        /* the ACK waits for the PC's answer to ARP */
            peer_arp(&netif, PC_IP, pc_mac); /* which comes (it asks for the DUT: the DUT learns it) */
        }
    }
    CHECK(rounds == 20u);
    if (guard_on) {
        CHECK(stalls == 0 && asked == 0);
    } else { /* each round the flood had evicted the PC's entry again */
        CHECK(stalls == rounds && asked > 0);
    }
    peer_fin(&c);
    peer_ack_all(&c, 8192);
    advance_to(test_now_us + 100000u);
    CHECK(strstr(test_output, "RESULT iperf role=server proto=tcp status=ok peer=10.77.0.1:50001 bytes=40000 ") !=
          NULL);
    /* 4,000 SYNs, 2 answered, the other 3,998 dropped (their places are held far longer than 2 s) */
    CHECK(fw_tcp_guard_counts().unresolved_dropped == (guard_on ? 4000u - FW_TCP_UNRESOLVED_HALF_OPEN : 0u));
    show_output_if_failed(guard_on ? "transfer under a flood, guard on" : "transfer under a flood, guard off",
                          failures);
    settle();
}

/* Whether the SYN from spoofed address n was answered: the DUT asked for the address (its SYN-ACK
 * waits for the answer). */
static bool answered(unsigned n, uint16_t port)
{
    peer_clear();
    spoofed_syn(n, port);
    return dut_asked_for(SPOOFED_IP + n) != 0;
}

/* The places of the unresolved addresses come back; off-link addresses never take one. */
static void test_places_come_back(void)
{
    _Static_assert(FW_TCP_UNRESOLVED_HALF_OPEN == 2, "the scenario below takes both places");
    int failures = check_failures;
    test_guard_plant(FW_GUARD_SYN_UNRESOLVED, false);
    uint8_t mac[6];
    const int pc_entry = arp_entry(PC_IP, mac);
    peer_feed("stats reset\r\n");
    test_output_reset();
    peer_feed("iperf -s\r\n");
    CHECK(answered(0, 40000));
    CHECK(answered(1, 40001));
    CHECK(!answered(2, 40002)); /* both places taken */
    /* address 0 answers ARP: a stable entry, nothing of it pending, its place free at once */
    static const uint8_t mac0[6] = {0x02, 0xaa, 0, 0, 0, 0x64};
    peer_arp(&netif, SPOOFED_IP + 0, mac0);
    CHECK(answered(3, 40003));
    CHECK(!answered(4, 40004));
    /* address 1 resets its half-open connection (its SYN-ACK never came, but RFC 793's SYN_RCVD
     * takes a RST at the sequence number after the SYN): its pending ARP entry stays, so does its place */
    peer_tcp(&netif, SPOOFED_IP + 1, DUT_IP, 40001, FW_IPERF_DEFAULT_PORT, 7777u * 1u + 40001u + 1u, 0, PEER_RST,
             0, NULL, 0);
    CHECK(!answered(5, 40005));
    const uint64_t t_held = test_now_us;
    /* address 3's half-open connection is reaped after FW_TCP_HALF_OPEN_MAX_MS; its pending ARP entry
     * may live FW_TCP_UNRESOLVED_ARP_MS longer: still no place */
    advance_to(t_held + FW_TCP_HALF_OPEN_MAX_MS * 1000u + 500000u);
    CHECK(fw_tcp_guard_half_open() == 0);
    CHECK(!answered(6, 40006));
    /* then both places are free */
    advance_to(t_held + (FW_TCP_HALF_OPEN_MAX_MS + FW_TCP_UNRESOLVED_ARP_MS) * 1000u + 100000u);
    CHECK(answered(7, 40007));
    CHECK(answered(8, 40008));
    CHECK(!answered(9, 40009));
    CHECK(fw_tcp_guard_counts().unresolved_dropped == 5u);
    CHECK(arp_entry(PC_IP, mac) == pc_entry && memcmp(mac, pc_mac, 6) == 0);

    /* off-link sources: their SYN-ACKs go to the gateway's entry, never counted */
    ip4_addr_t gw;
    ip4_addr_set_u32(&gw, lwip_htonl(GW_IP));
    netif_set_gw(&netif, &gw);
    peer_arp(&netif, GW_IP, gw_mac);
    for (unsigned n = 0; n < 8u; n++) {
        peer_clear();
        peer_tcp(&netif, OFF_LINK_IP + n, DUT_IP, (uint16_t)(41000u + n), FW_IPERF_DEFAULT_PORT, 1u, 0, PEER_SYN,
                 8192, NULL, 0);
        memset(mac, 0, sizeof mac);
        CHECK(last_tcp_frame_to(OFF_LINK_IP + n, (uint16_t)(41000u + n), mac) == (PEER_SYN | PEER_ACK) &&
              memcmp(mac, gw_mac, 6) == 0);
    }
    CHECK(fw_tcp_guard_counts().unresolved_dropped == 5u);
    CHECK(arp_entry(PC_IP, mac) == pc_entry && memcmp(mac, pc_mac, 6) == 0);
    ip4_addr_set_zero(&gw);
    netif_set_gw(&netif, &gw);
    show_output_if_failed("places come back", failures);
    settle();
}

/* A real client whose ARP entry a full table recycled: the PC holds a connection with the DUT (its
 * iperf client, silent so far) when other hosts' ARP requests fill the table with newer stable
 * entries; the flood's first pending entries then recycle the oldest stable one, the PC's, and the
 * PC (its own entry for the DUT still cached) sends its next SYN without asking ARP first. A host
 * that completed a handshake with the DUT is real: its SYN is answered at once, beyond the flood's
 * places (the DUT asks for its address and the SYN-ACK follows its answer), and counted
 * (`stats` tcp_syn_known_readmitted). Before, it was dropped as a spoofed one, and the client
 * waited its SYN's retransmission (1 s on Linux): the QEMU bench's exhaust@tcp_server in CI. */
static void test_recycled_entry_of_a_real_client(void)
{
    _Static_assert(FW_ARP_TABLE_SIZE > FW_TCP_UNRESOLVED_HALF_OPEN + 1, "room for the PC and other hosts");
    int failures = check_failures;
    test_guard_plant(FW_GUARD_SYN_UNRESOLVED, false);
    peer_feed("stats reset\r\n");
    test_output_reset();
    peer_feed("iperf -s\r\n");
    struct peer_conn held = {&netif, PC_IP, DUT_IP, 50100, FW_IPERF_DEFAULT_PORT, 9000, 0, 8192};
    CHECK(peer_connect(&held)); /* established, nothing sent: the server's accepted connection */
    advance_to(test_now_us + 2500000u); /* the PC's entry ages (etharp's 1-s ticks) */
    for (unsigned n = 0; n < FW_ARP_TABLE_SIZE - 1u; n++) { /* other hosts ask for the DUT: newer stable entries */
        const uint8_t mac[6] = {0x02, 0xbb, 0, 0, 0, (uint8_t)n};
        peer_arp(&netif, OTHER_HOST_IP + n, mac);
    }
    uint8_t mac[6];
    CHECK(arp_entry(PC_IP, mac) >= 0);
    CHECK(answered(0, 42000));
    CHECK(answered(1, 42001));
    CHECK(arp_entry(PC_IP, mac) < 0); /* lwIP recycled the oldest stable entry: the PC's */
    CHECK(!answered(2, 42002));       /* the flood's places are taken */
    peer_clear();
    peer_tcp(&netif, PC_IP, DUT_IP, 50101, FW_IPERF_DEFAULT_PORT, 1000, 0, PEER_SYN, 8192, NULL, 0);
    CHECK(dut_asked_for(PC_IP) != 0); /* its SYN-ACK waits for the PC's answer, not dropped */
    peer_arp(&netif, PC_IP, pc_mac);
    memset(mac, 0, sizeof mac);
    CHECK(last_tcp_frame_to(PC_IP, 50101, mac) == (PEER_SYN | PEER_ACK) && memcmp(mac, pc_mac, 6) == 0);
    CHECK(fw_tcp_guard_counts().unresolved_dropped == 1u); /* the spoofed third only */
    CHECK(fw_tcp_guard_counts().known_readmitted == 1u);
    CHECK(stats_has(" tcp_syn_known_readmitted=1"));
    show_output_if_failed("recycled entry of a real client", failures);
    settle();
}

int main(void)
{
    peer_bring_up(&netif, DUT_IP);
    peer_arp(&netif, PC_IP, pc_mac); /* the PC asked for the DUT: a stable entry */

    test_flood_keeps_the_pc_entry(true);
    test_flood_keeps_the_pc_entry(false);
    test_transfer_under_a_flood(true);
    test_transfer_under_a_flood(false);
    test_places_come_back();
    test_recycled_entry_of_a_real_client();
    return check_summary("test_syn_unresolved");
}
