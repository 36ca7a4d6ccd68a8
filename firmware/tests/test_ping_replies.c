/*
 * Unit tests: ping counts an echo reply only when it is intact (ping.c, reply_intact): its ICMP
 * checksum verifies over the whole message and its payload is exactly the bytes of its request
 * (length and pattern). lwIP hands the raw PCB every ICMP packet before its ICMP layer, which
 * checks nothing of an echo reply, so a corrupted or forged reply with the run's id and a pending
 * sequence number used to count (RTT recorded). The rejected ones are counted in the RESULT line's
 * `rejected=`. With the guard off (the host's `trust_ping_replies`) the first such reply counts.
 * Inside the whole application with crafted replies handed to the netif.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u    /* 10.77.0.2 */
#define TARGET_IP 0x0a4d0001u /* 10.77.0.1 */
#define SIZE 16

static struct netif netif;

static void feed(const char *s)
{
    peer_feed(s);
}

enum damage { INTACT, BAD_CHECKSUM, BAD_PAYLOAD, SHORT_PAYLOAD, FORGED_ZERO_CHECKSUM };

/* An echo reply from the target to request `seq` of the run (id FW_PING_ID), `damage` done to it. */
static void reply(uint16_t seq, enum damage damage)
{
    uint8_t m[8 + SIZE];
    uint16_t len = damage == SHORT_PAYLOAD ? (uint16_t)(8 + SIZE - 4) : (uint16_t)sizeof m;
    memset(m, 0, sizeof m);
    m[0] = 0; /* echo reply */
    test_put16(m + 4, FW_PING_ID);
    test_put16(m + 6, seq);
    for (unsigned i = 0; i < SIZE; i++) {
        m[8 + i] = (uint8_t)i;
    }
    if (damage == BAD_PAYLOAD) {
        m[8 + 5] ^= 0x40; /* one bit flipped, the checksum made to match it */
    }
    test_put16(m + 2, peer_chksum(0, m, len));
    if (damage == BAD_CHECKSUM) {
        m[2] ^= 0x01;
    } else if (damage == FORGED_ZERO_CHECKSUM) {
        test_put16(m + 2, 0);
    }
    CHECK(test_inject_ipv4(&netif, TARGET_IP, DUT_IP, 1, seq, 0, m, len));
}

static void advance_to(uint64_t t)
{
    test_now_us = t;
    fw_app_poll();
}

static unsigned occurrences(const char *needle)
{
    unsigned n = 0;
    for (const char *s = strstr(test_output, needle); s != NULL; s = strstr(s + 1, needle)) {
        n++;
    }
    return n;
}

/* Two requests; request 1 gets three damaged replies, then its own; request 2 only a damaged one. */
static void run(bool guard_on)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_PING_REPLIES, !guard_on);
    test_output_reset();
    uint64_t t0 = test_now_us;
    feed("ping 10.77.0.1 -c 2 -i 1 -W 1 -s 16\r\n");
    advance_to(t0); /* request 1 */
    test_now_us = t0 + 1000u;
    reply(1, BAD_CHECKSUM);
    reply(1, BAD_PAYLOAD);
    reply(1, SHORT_PAYLOAD);
    test_now_us = t0 + 2000u;
    reply(1, INTACT);
    advance_to(t0 + 1000000u); /* request 2 */
    test_now_us = t0 + 1000500u;
    reply(2, FORGED_ZERO_CHECKSUM);
    advance_to(t0 + 2000000u); /* its timeout: the end */
    CHECK(strstr(test_output, "RESULT ping status=ok target=10.77.0.1 size=16 sent=2 ") != NULL);
    if (guard_on) {
        /* request 1 answered after 2 ms by its own reply, request 2 not at all */
        CHECK(strstr(test_output, " received=1 loss_pct=50.0000 min_ms=2.000 avg_ms=2.000 max_ms=2.000 ") != NULL);
        CHECK(strstr(test_output, " rejected=4\r\n") != NULL);
        CHECK(occurrences(" bytes from 10.77.0.1: ") == 1);
        CHECK(strstr(test_output, "Request timeout for icmp_seq=2") != NULL);
    } else {
        /* the defect: the corrupted reply answered request 1 after 1 ms, the forged one request 2 */
        CHECK(strstr(test_output, " received=2 loss_pct=0.0000 min_ms=0.500 avg_ms=0.750 max_ms=1.000 ") != NULL);
        CHECK(strstr(test_output, " rejected=0\r\n") != NULL);
    }
    if (check_failures != failures || getenv("TEST_VERBOSE") != NULL) {
        fprintf(stderr, "--- guard %s printed:\n%s", guard_on ? "on" : "off", test_output);
    }
}

int main(void)
{
    lwip_init();
    test_netif_add(&netif, DUT_IP, 0xffffff00u);
    peer_attach(&netif); /* the requests leave (and are kept, unread) */
    static const uint8_t target_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
    peer_arp(&netif, TARGET_IP, target_mac);
    test_guards_install();
    fw_app_init(&netif);
    run(true);
    run(false);
    run(true);
    return check_summary("test_ping_replies");
}
