/*
 * Unit tests: ARP poisoning of a live entry (fw_arp_guard.c), inside the whole application (lwIP
 * 2.1.3 with the project's lwipopts.h) with crafted ARP packets and the DUT's own frames read back:
 *   - the DUT pings the PC, which answers only what reaches its MAC; between the requests an
 *     attacker on the link sends forged ARP naming the PC's address with another MAC: a reply to
 *     the DUT, a gratuitous reply and request, a request for another address, an unknown opcode, a
 *     reply naming a group MAC, a frame of the ARP type cut short after a forged one (whose
 *     bytes the receive buffer still holds), and a request for the DUT from the PC's address
 *     with another MAC (with the guard the DUT then asks where the PC is: the answer decides). With the guard every request reaches the PC (ping
 *     received=3) and `stats` counts them all (etharp_ignored, the etharp line's ignored=); with
 *     the guard off (the host's `trust_arp_changes`) each re-points the DUT's entry, as lwIP
 *     2.1.3's etharp_input does, and the rest of the ping is lost (received=1);
 *   - what may still change an entry, with the guard on and off alike: the PC moved to a new MAC
 *     (with the guard: its request makes the DUT ask, and the answer moves the entry); the reply to the DUT's own request, lwIP's broadcast re-request of a stable
 *     entry 15 s before ARP_MAXAGE (the first reply answers it: a forged reply right behind it is
 *     ignored, with the guard); a pending entry (the DUT's first packet to an address) takes its
 *     reply and sends what waited for it;
 *   - a reply the DUT did not ask for creates no entry (with the guard), nor does one arriving
 *     after FW_ARP_GUARD_ANSWER_MS.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_arp_guard.h"
#include "fw_config.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/prot/tcp.h"
#include "lwip/timeouts.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u /* 10.77.0.2 */
#define PC_IP 0x0a4d0001u  /* 10.77.0.1 */
#define SIZE 16
#define ARP_LEN 42

static struct netif netif;
static const uint8_t pc_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t zero[6];

static void advance_to(uint64_t t)
{
    peer_advance_to(t, 50000u);
}

/* a locally administered MAC numbered n (the attacker's bogus ones, the PC's new ones) */
static void mac_n(uint8_t mac[6], unsigned n)
{
    const uint8_t m[6] = {0x02, 0xde, 0xad, 0x00, (uint8_t)(n >> 8), (uint8_t)n};
    memcpy(mac, m, 6);
}

/* An ARP packet from the link: Ethernet src -> dst, opcode op, sender sha/sip, target tha/tip
 * (addresses host order); the first len bytes of its 42-byte frame. */
static void arp(const uint8_t dst[6], const uint8_t src[6], uint16_t op, const uint8_t sha[6], uint32_t sip,
                const uint8_t tha[6], uint32_t tip, uint16_t len)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, len, PBUF_POOL);
    CHECK(p != NULL);
    if (p == NULL) {
        return;
    }
    uint8_t f[ARP_LEN];
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    test_put16(f + 12, 0x0806);
    test_put16(f + 14, 1); /* Ethernet */
    test_put16(f + 16, 0x0800);
    f[18] = 6;
    f[19] = 4;
    test_put16(f + 20, op);
    memcpy(f + 22, sha, 6);
    test_put32(f + 28, sip);
    memcpy(f + 32, tha, 6);
    test_put32(f + 38, tip);
    pbuf_take(p, f, len);
    if (netif.input(p, &netif) != ERR_OK) {
        pbuf_free(p);
    }
}

/* The DUT's ARP entry for ip (host order) points at mac. */
static bool entry_is(uint32_t ip, const uint8_t mac[6])
{
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(ip));
    struct eth_addr *eth;
    const ip4_addr_t *found;
    return etharp_find_addr(&netif, &a, &eth, &found) >= 0 && memcmp(eth->addr, mac, 6) == 0;
}

static bool has_entry(uint32_t ip)
{
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(ip));
    struct eth_addr *eth;
    const ip4_addr_t *found;
    return etharp_find_addr(&netif, &a, &eth, &found) >= 0;
}

static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)((b[0] << 8) | b[1]);
}

static uint32_t get32(const uint8_t *b)
{
    return ((uint32_t)get16(b) << 16) | get16(b + 2);
}

/* The DUT's last IPv4 frame to ip of protocol proto: its Ethernet destination in mac. */
static bool last_ipv4_to(uint32_t ip, uint8_t proto, uint8_t mac[6])
{
    const uint8_t *f;
    uint16_t len;
    for (unsigned back = 0; (len = peer_frame_back(back, &f)) != 0; back++) {
        if (len >= 34 && get16(f + 12) == 0x0800 && f[14 + 9] == proto && get32(f + 14 + 16) == ip) {
            memcpy(mac, f, 6);
            return true;
        }
    }
    return false;
}

/* The DUT sent an ARP request (broadcast) for ip since the last peer_clear. */
static bool dut_asked_for(uint32_t ip)
{
    const uint8_t *f;
    uint16_t len;
    for (unsigned back = 0; (len = peer_frame_back(back, &f)) != 0; back++) {
        if (len >= ARP_LEN && get16(f + 12) == 0x0806 && get16(f + 20) == 1 && get32(f + 28) == DUT_IP &&
            get32(f + 38) == ip) {
            return true;
        }
    }
    return false;
}

/* The PC answers the DUT's echo request `seq` if it reached the PC's MAC. */
static void pc_answers(uint16_t seq)
{
    uint8_t to[6];
    if (!last_ipv4_to(PC_IP, 1, to) || memcmp(to, pc_mac, 6) != 0) {
        return; /* it went to another MAC: the PC never saw it */
    }
    uint8_t m[8 + SIZE];
    memset(m, 0, sizeof m);
    test_put16(m + 4, FW_PING_ID);
    test_put16(m + 6, seq);
    for (unsigned i = 0; i < SIZE; i++) {
        m[8 + i] = (uint8_t)i;
    }
    test_put16(m + 2, peer_chksum(0, m, sizeof m));
    CHECK(test_inject_ipv4(&netif, PC_IP, DUT_IP, 1, seq, 0, m, sizeof m));
}

static void show_output_if_failed(const char *scenario, int failures_before)
{
    if (check_failures != failures_before || getenv("TEST_VERBOSE") != NULL) {
        fprintf(stderr, "--- %s printed:\n%s", scenario, test_output);
    }
}

static void stats_has(const char *want)
{
    test_output_reset();
    peer_feed("stats\r\n");
    CHECK(strstr(test_output, want) != NULL);
    if (strstr(test_output, want) == NULL) {
        fprintf(stderr, "wanted \"%s\" in:\n%s", want, test_output);
    }
}

/* The attacker's forged ARP naming the PC's address, each with its own bogus MAC: the DUT's entry
 * stays the PC's with the guard, points at that MAC without it. */
static void poison(bool guard_on)
{
    static const uint8_t dut_mac[6] = {0x02, 0, 0, 0, 0, 0x33};
    static const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    uint8_t bogus[6];
    mac_n(bogus, 1); /* a reply to the DUT: "10.77.0.1 is at bogus" (the classic poisoning) */
    arp(dut_mac, bogus, 2, bogus, PC_IP, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : bogus));
    mac_n(bogus, 2); /* a gratuitous reply */
    arp(bcast, bogus, 2, bogus, PC_IP, bcast, PC_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : bogus));
    mac_n(bogus, 3); /* a gratuitous request */
    arp(bcast, bogus, 1, bogus, PC_IP, zero, PC_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : bogus));
    mac_n(bogus, 4); /* a request from the PC's address for another */
    arp(bcast, bogus, 1, bogus, PC_IP, zero, 0x0a4d004du, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : bogus));
    mac_n(bogus, 5); /* an unknown opcode to the DUT (lwIP updates before it looks at the opcode) */
    arp(dut_mac, bogus, 3, bogus, PC_IP, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : bogus));
    arp(dut_mac, bogus, 2, group, PC_IP, dut_mac, DUT_IP, ARP_LEN); /* a reply naming a group MAC */
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : group));
    /* a forged reply, then a frame cut short after the opcode: etharp_input would read the rest of
     * the header from the receive buffer, which still holds the forged reply's bytes */
    mac_n(bogus, 6);
    arp(dut_mac, bogus, 2, bogus, PC_IP, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : bogus));
    arp(dut_mac, bogus, 2, bogus, PC_IP, dut_mac, DUT_IP, 24);
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : bogus));
    /* a request for the DUT from the PC's address with another MAC: with the guard not taken, the
     * DUT asks where the PC is instead (last: a forged reply after it would race the PC's answer) */
    mac_n(bogus, 7);
    arp(dut_mac, bogus, 1, bogus, PC_IP, zero, DUT_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? pc_mac : bogus));
    CHECK(!guard_on || dut_asked_for(PC_IP));
}

/* The DUT pings the PC while the attacker's forged ARP arrives between the requests. */
static void test_ping_under_poisoning(bool guard_on)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_ARP_CHANGES, !guard_on);
    peer_arp(&netif, PC_IP, pc_mac); /* the PC asks for the DUT: the DUT learns it */
    CHECK(entry_is(PC_IP, pc_mac));
    peer_feed("stats reset\r\n");
    test_output_reset();
    peer_clear();
    const uint64_t t0 = test_now_us;
    peer_feed("ping 10.77.0.1 -c 3 -i 1 -W 1 -s 16\r\n");
    advance_to(t0 + 1000u); /* request 1 */
    pc_answers(1);
    advance_to(t0 + 300000u);
    poison(guard_on);
    for (uint16_t seq = 2; seq <= 3; seq++) {
        advance_to(t0 + (seq - 1u) * 1000000u + 1000u);
        pc_answers(seq);
    }
    advance_to(t0 + 3100000u);
    if (guard_on) {
        CHECK(strstr(test_output, "RESULT ping status=ok target=10.77.0.1 size=16 sent=3 received=3 ") != NULL);
    } else { /* the defect: the requests after the first went to the attacker's MAC */
        CHECK(strstr(test_output, "RESULT ping status=ok target=10.77.0.1 size=16 sent=3 received=1 ") != NULL);
    }
    show_output_if_failed(guard_on ? "ping under poisoning, guard on" : "ping under poisoning, guard off", failures);
    stats_has(guard_on ? " etharp_ignored=9" : " etharp_ignored=0");
    stats_has(guard_on ? " ignored=9 unresolved_answers=0\r\n" : " ignored=0 unresolved_answers=0\r\n");
    CHECK(fw_arp_guard_ignored() == (guard_on ? 9u : 0u));
    peer_feed("stats reset\r\n");
    CHECK(fw_arp_guard_ignored() == 0);
}

/* What may change an entry: the host asking for the DUT, the answer to the DUT's own request. */
static void test_legitimate_changes(bool guard_on, uint32_t new_ip, uint32_t unasked_ip)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_ARP_CHANGES, !guard_on);
    static const uint8_t dut_mac[6] = {0x02, 0, 0, 0, 0, 0x33};
    uint8_t moved[6], moved_again[6], bogus[6];
    mac_n(moved, 0x100);
    mac_n(moved_again, 0x101);
    mac_n(bogus, 0x102);
    peer_feed("stats reset\r\n");

    /* the PC's new MAC asks for the DUT: with the guard the request alone changes nothing (a forged
     * one would poison the entry), the DUT asks where the PC is and the answer moves the entry */
    peer_clear();
    peer_arp(&netif, PC_IP, moved);
    CHECK(guard_on ? !entry_is(PC_IP, moved) && dut_asked_for(PC_IP) : entry_is(PC_IP, moved));
    arp(dut_mac, moved, 2, moved, PC_IP, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, moved));

    /* 286 s later the entry is 15 s from ARP_MAXAGE: the DUT's next packet to the PC goes to the
     * MAC it has and lwIP asks again (broadcast); the PC answers from yet another MAC */
    advance_to(test_now_us + 286000000u);
    CHECK(entry_is(PC_IP, moved));
    peer_clear();
    test_output_reset();
    peer_feed("ping 10.77.0.1 -c 1 -W 1 -s 16\r\n");
    advance_to(test_now_us + 1000u);
    uint8_t to[6];
    CHECK(last_ipv4_to(PC_IP, 1, to) && memcmp(to, moved, 6) == 0);
    CHECK(dut_asked_for(PC_IP));
    arp(dut_mac, moved_again, 2, moved_again, PC_IP, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, moved_again));
    /* a forged reply right behind it: the request is answered, this one unsolicited */
    arp(dut_mac, bogus, 2, bogus, PC_IP, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? moved_again : bogus));
    advance_to(test_now_us + 1100000u); /* the ping's end */
    arp(dut_mac, moved_again, 2, moved_again, PC_IP, dut_mac, DUT_IP, ARP_LEN); /* put back */
    CHECK(entry_is(PC_IP, moved_again));

    /* a pending entry: the DUT's first packet to new_ip waits for its reply, which the guard lets in */
    peer_clear();
    char cmd[64];
    snprintf(cmd, sizeof cmd, "ping 10.77.0.%u -c 1 -W 1 -s 16\r\n", (unsigned)(new_ip & 0xffu));
    peer_feed(cmd);
    advance_to(test_now_us + 1000u);
    CHECK(dut_asked_for(new_ip) && !has_entry(new_ip));
    uint8_t new_mac[6];
    mac_n(new_mac, 0x200 + (new_ip & 0xffu));
    arp(dut_mac, new_mac, 2, new_mac, new_ip, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(new_ip, new_mac));
    CHECK(last_ipv4_to(new_ip, 1, to) && memcmp(to, new_mac, 6) == 0); /* the echo request that waited */
    /* its answer closed the request: a forged reply behind it is unsolicited */
    arp(dut_mac, bogus, 2, bogus, new_ip, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(new_ip, guard_on ? new_mac : bogus));
    advance_to(test_now_us + 1100000u);

    /* a reply the DUT never asked for: no entry (lwIP would create one, ETHARP_FLAG_TRY_HARD) */
    uint8_t unasked_mac[6];
    mac_n(unasked_mac, 0x300 + (unasked_ip & 0xffu));
    arp(dut_mac, unasked_mac, 2, unasked_mac, unasked_ip, dut_mac, DUT_IP, ARP_LEN);
    CHECK(has_entry(unasked_ip) == !guard_on);

    /* the reply to a request of the DUT's that came too late (after FW_ARP_GUARD_ANSWER_MS): the PC's
     * entry, re-requested once more at 286 s, is not re-pointed by a reply after the window */
    peer_arp(&netif, PC_IP, moved_again); /* the PC asks for the DUT: its entry's age starts again */
    advance_to(test_now_us + 286000000u);
    peer_clear();
    peer_feed("ping 10.77.0.1 -c 1 -W 1 -s 16\r\n");
    advance_to(test_now_us + 1000u);
    CHECK(dut_asked_for(PC_IP));
    test_now_us += FW_ARP_GUARD_ANSWER_MS * 1000u + 1000u; /* no reply within the window */
    arp(dut_mac, moved, 2, moved, PC_IP, dut_mac, DUT_IP, ARP_LEN);
    CHECK(entry_is(PC_IP, guard_on ? moved_again : moved));
    advance_to(test_now_us + 1100000u);

    stats_has(guard_on ? " etharp_ignored=5" : " etharp_ignored=0");
    show_output_if_failed(guard_on ? "legitimate changes, guard on" : "legitimate changes, guard off", failures);
}

/* A segment to a closed port from an on-link address nobody answers ARP for (a spoofed source):
 * with the guard the DUT sends no reset, so it never resolves that address (lwIP's etharp_query
 * would recycle the oldest stable entry, the PC's, under a flood of such sources); from the PC,
 * whose entry the DUT holds, the reset goes out as ever. */
static void test_no_answer_to_unresolved(bool guard_on, uint32_t spoofed)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_SYN_UNRESOLVED, !guard_on);
    peer_arp(&netif, PC_IP, pc_mac);
    peer_feed("stats reset\r\n");
    /* the first FW_ARP_GUARD_UNRESOLVED_ANSWERS spoofed sources are resolved (a real host whose
     * entry the DUT lost is, by its first answer); the next one is not answered */
    for (uint32_t i = 1; i <= FW_ARP_GUARD_UNRESOLVED_ANSWERS; i++) {
        peer_tcp(&netif, spoofed + i, DUT_IP, 40000, 9, 1000, 2000, TCP_ACK, 1024, NULL, 0);
        advance_to(test_now_us + 1000u);
    }
    peer_clear();
    peer_tcp(&netif, spoofed, DUT_IP, 40000, 9, 1000, 2000, TCP_ACK, 1024, NULL, 0);
    advance_to(test_now_us + 1000u);
    CHECK(dut_asked_for(spoofed) == !guard_on);
    CHECK(entry_is(PC_IP, pc_mac));
    peer_clear();
    peer_tcp(&netif, PC_IP, DUT_IP, 40001, 9, 1000, 2000, TCP_ACK, 1024, NULL, 0);
    advance_to(test_now_us + 1000u);
    CHECK(peer_count_tcp(PC_IP, 40001, TCP_RST) == 1);
    stats_has(guard_on ? " etharp_unresolved_answers=1" : " etharp_unresolved_answers=0");
    show_output_if_failed(guard_on ? "no answer to unresolved, guard on" : "no answer to unresolved, guard off",
                          failures);
    test_guard_plant(FW_GUARD_SYN_UNRESOLVED, false);
}

int main(void)
{
    lwip_init();
    test_netif_add(&netif, DUT_IP, 0xffffff00u);
    peer_attach(&netif);
    test_guards_install();
    CHECK(fw_arp_guard_attach(&netif));
    CHECK(!fw_arp_guard_attach(&netif)); /* once */
    CHECK(!fw_arp_guard_attach(NULL));
    fw_app_init(&netif);

    test_ping_under_poisoning(true);
    test_ping_under_poisoning(false);
    test_legitimate_changes(true, 0x0a4d0009u, 0x0a4d000au);
    test_legitimate_changes(false, 0x0a4d0019u, 0x0a4d001au);
    test_no_answer_to_unresolved(true, 0x0a4d00e0u);
    advance_to(test_now_us + FW_TCP_UNRESOLVED_ARP_MS * 1000u + 1000u); /* the places free again */
    test_no_answer_to_unresolved(false, 0x0a4d00f0u);
    return check_summary("test_arp_guard");
}
