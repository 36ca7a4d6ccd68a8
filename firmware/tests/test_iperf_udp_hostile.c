/*
 * Unit tests: the iperf UDP server under hostile traffic (iperf_udp_server.c), inside the whole
 * application with crafted datagrams handed to the netif and the DUT's own datagrams read back:
 *   - after a test, the lingering server answers repeated FINs of that test's client only: a
 *     FIN-looking datagram from a stranger (a spoofed address) gets no report (it was a reflector,
 *     and a stranger learnt the last test's figures); guard off: `answer_any_fin`;
 *   - a stray datagram that claimed the test in LISTEN does not keep the real client out: once the
 *     stray sender has been silent FW_IPERF_UDP_TAKEOVER_MS, the client's datagrams take the test
 *     over (its figures and its report; without the guard, `keep_first_sender`, the client was
 *     ignored and the test ended as no_fin with the stray sender);
 *   - a stranger cannot take a test from a client that keeps sending;
 *   - one forged datagram from the client's own address and port numbered 0x7fffffff does not
 *     change the figures (FW_IPERF_UDP_SEQ_WINDOW; guard off: `trust_udp_seq`, 2^31 lost).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "iperf_wire.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u      /* 10.77.0.2 */
#define CLIENT_IP 0x0a4d0001u   /* 10.77.0.1, the real client */
#define STRANGER_IP 0x0a4d0063u /* 10.77.0.99, spoofed */
#define CLIENT_PORT 40001
#define STRANGER_PORT 5555

static struct netif netif;

static void feed(const char *s)
{
    peer_feed(s);
}

static void udp_from(uint32_t src, uint16_t sport, const uint8_t *payload, uint16_t len)
{
    static uint8_t udp[8 + 200];
    test_put16(udp, sport);
    test_put16(udp + 2, FW_IPERF_DEFAULT_PORT);
    test_put16(udp + 4, (uint16_t)(8u + len));
    test_put16(udp + 6, 0); /* no checksum (IPv4) */
    memcpy(udp + 8, payload, len);
    CHECK(test_inject_ipv4(&netif, src, DUT_IP, 17, 0, 0, udp, (uint16_t)(8u + len)));
}

/* An iperf 2 datagram (100 bytes) numbered seq (negative: a FIN) from src:sport, sent now. */
static void dgram(uint32_t src, uint16_t sport, int32_t seq)
{
    uint8_t b[100] = {0};
    iperf_udp_hdr_encode(b, seq, test_now_us);
    udp_from(src, sport, b, sizeof b);
}

static void advance_to(uint64_t t)
{
    test_now_us = t;
    fw_app_poll();
}

static void show_output_if_failed(const char *scenario, int failures_before)
{
    if (check_failures != failures_before || getenv("TEST_VERBOSE") != NULL) {
        fprintf(stderr, "--- %s printed:\n%s", scenario, test_output);
    }
}

/* The client's test of n datagrams, 1 ms apart, and its FIN: the server's report to the client. */
static void client_test(int32_t n)
{
    for (int32_t i = 1; i <= n; i++) {
        dgram(CLIENT_IP, CLIENT_PORT, i);
        test_now_us += 1000u;
    }
    dgram(CLIENT_IP, CLIENT_PORT, -(n + 1));
}

static void test_linger_answers_its_client_only(bool guard_on)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_UDP_LINGER_PEER, !guard_on);
    test_output_reset();
    feed("iperf -s -u\r\n");
    peer_clear();
    client_test(5);
    CHECK(strstr(test_output, "RESULT iperf role=server proto=udp status=ok peer=10.77.0.1:40001 ") != NULL);
    CHECK(peer_count_udp(CLIENT_IP, CLIENT_PORT) == 1); /* the report */
    test_now_us += 100000u;
    dgram(STRANGER_IP, STRANGER_PORT, -6); /* a FIN-looking datagram from a spoofed address */
    dgram(CLIENT_IP, CLIENT_PORT, -6);     /* the client's FIN again: it missed the report */
    dgram(CLIENT_IP, CLIENT_PORT + 1, -6); /* its address, another port: a stranger too */
    CHECK(peer_count_udp(CLIENT_IP, CLIENT_PORT) == 2);
    CHECK(peer_count_udp(CLIENT_IP, CLIENT_PORT + 1) == (guard_on ? 0u : 1u));
    CHECK(peer_count_udp(STRANGER_IP, STRANGER_PORT) == (guard_on ? 0u : 1u));
    advance_to(test_now_us + FW_IPERF_UDP_LINGER_MS * 1000u);
    dgram(CLIENT_IP, CLIENT_PORT, -6); /* after the linger: nobody answers */
    CHECK(peer_count_udp(CLIENT_IP, CLIENT_PORT) == 2);
    show_output_if_failed(guard_on ? "linger, guard on" : "linger, guard off", failures);
}

/* A stray datagram claims the test; the real client starts `client_after_ms` later. */
static void test_stray_datagram_then_client(bool guard_on, unsigned client_after_ms)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_UDP_TAKEOVER, !guard_on);
    test_output_reset();
    feed("iperf -s -u\r\n");
    peer_clear();
    const uint64_t t0 = test_now_us;
    dgram(STRANGER_IP, STRANGER_PORT, 1);
    CHECK(strstr(test_output, "iperf: UDP datagrams from 10.77.0.99:5555\r\n") != NULL);
    advance_to(t0 + client_after_ms * 1000u);
    for (int32_t i = 1; i <= 400; i++) { /* 400 datagrams 1 ms apart */
        advance_to(test_now_us + 1000u);
        dgram(CLIENT_IP, CLIENT_PORT, i);
    }
    advance_to(test_now_us + 1000u);
    dgram(CLIENT_IP, CLIENT_PORT, -401);
    advance_to(test_now_us + FW_IPERF_UDP_IDLE_MS * 1000u + 1000u); /* a test still running ends (no_fin) */
    if (guard_on) {
        CHECK(strstr(test_output, "iperf: UDP datagrams from 10.77.0.1:40001\r\n") != NULL);
        CHECK(strstr(test_output, "RESULT iperf role=server proto=udp status=ok peer=10.77.0.1:40001 ") != NULL);
        CHECK(peer_count_udp(CLIENT_IP, CLIENT_PORT) == 1); /* its report */
        if (client_after_ms >= FW_IPERF_UDP_TAKEOVER_MS) { /* all of its datagrams counted */
            CHECK(strstr(test_output, " bytes=40000 ") != NULL);
            CHECK(strstr(test_output, " datagrams=400 lost=0 loss_pct=0.0000 outoforder=0 ") != NULL);
        } else { /* those the stray's test ignored, until it had been silent long enough, are lost */
            unsigned ignored = FW_IPERF_UDP_TAKEOVER_MS - client_after_ms - 1u;
            char want[96];
            snprintf(want, sizeof want, " datagrams=400 lost=%u ", ignored);
            CHECK(strstr(test_output, want) != NULL);
        }
    } else {
        /* the defect: the client is "another sender" until the stray's test ends without a FIN */
        CHECK(strstr(test_output, "RESULT iperf role=server proto=udp status=no_fin peer=10.77.0.99:5555 ") != NULL);
        CHECK(peer_count_udp(CLIENT_IP, CLIENT_PORT) == 0);
    }
    show_output_if_failed(guard_on ? "stray datagram, guard on" : "stray datagram, guard off", failures);
}

/* A stranger's datagrams amid a client's test that never pauses are ignored: no takeover. */
static void test_no_takeover_of_a_live_client(void)
{
    int failures = check_failures;
    test_output_reset();
    feed("iperf -s -u\r\n");
    for (int32_t i = 1; i <= 100; i++) {
        dgram(CLIENT_IP, CLIENT_PORT, i);
        if (i % 10 == 0) {
            dgram(STRANGER_IP, STRANGER_PORT, i);
        }
        advance_to(test_now_us + 100000u); /* 100 ms apart: under the takeover time */
    }
    dgram(CLIENT_IP, CLIENT_PORT, -101);
    CHECK(strstr(test_output, "status=ok peer=10.77.0.1:40001 ") != NULL);
    CHECK(strstr(test_output, " datagrams=100 lost=0 ") != NULL);
    CHECK(strstr(test_output, "10.77.0.99") == NULL);
    show_output_if_failed("live client", failures);
    advance_to(test_now_us + FW_IPERF_UDP_LINGER_MS * 1000u);
}

/* One forged datagram from the client's own address and port, numbered 0x7fffffff. */
static void test_forged_sequence_number(bool guard_on)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_UDP_SEQ_WINDOW, !guard_on);
    test_output_reset();
    feed("iperf -s -u\r\n");
    for (int32_t i = 1; i <= 20; i++) {
        dgram(CLIENT_IP, CLIENT_PORT, i);
        if (i == 10) {
            dgram(CLIENT_IP, CLIENT_PORT, 0x7fffffff);
        }
        test_now_us += 1000u;
    }
    dgram(CLIENT_IP, CLIENT_PORT, -21);
    CHECK(strstr(test_output, "status=ok peer=10.77.0.1:40001 ") != NULL);
    if (guard_on) {
        CHECK(strstr(test_output, " bytes=2000 ") != NULL);
        CHECK(strstr(test_output, " datagrams=20 lost=0 loss_pct=0.0000 outoforder=0 ") != NULL);
    } else {
        CHECK(strstr(test_output, " datagrams=2147483647 lost=2147483626 ") != NULL);
    }
    show_output_if_failed(guard_on ? "forged sequence, guard on" : "forged sequence, guard off", failures);
    test_guard_plant(FW_GUARD_UDP_SEQ_WINDOW, false);
    advance_to(test_now_us + FW_IPERF_UDP_LINGER_MS * 1000u);
}

int main(void)
{
    peer_bring_up(&netif, DUT_IP);
    static const uint8_t client_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
    static const uint8_t stranger_mac[6] = {0x02, 0, 0, 0, 0, 0x99};
    peer_arp(&netif, CLIENT_IP, client_mac); /* the DUT's answers leave at once, none wait for ARP */
    peer_arp(&netif, STRANGER_IP, stranger_mac);

    test_linger_answers_its_client_only(true);
    test_linger_answers_its_client_only(false);
    test_guard_plant(FW_GUARD_UDP_LINGER_PEER, false);
    test_stray_datagram_then_client(true, 300);
    test_stray_datagram_then_client(true, 50);
    test_stray_datagram_then_client(false, 300);
    test_guard_plant(FW_GUARD_UDP_TAKEOVER, false);
    test_no_takeover_of_a_live_client();
    test_forged_sequence_number(true);
    test_forged_sequence_number(false);
    return check_summary("test_iperf_udp_hostile");
}
