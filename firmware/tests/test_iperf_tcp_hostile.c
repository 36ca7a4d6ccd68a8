/*
 * Unit tests: the iperf TCP engines against hostile or broken peers, inside the whole application
 * with a peer that crafts its segments and reads the DUT's back:
 *   - server: a connection that sends nothing is not a test. A silent one is displaced by the next
 *     connection (the real client's test runs), and when it closes or resets before a byte the
 *     server listens on and reports nothing; -t with only a silent connection ends as `timeout`.
 *     With the guard off (the host's `keep_silent_clients`) the silent connection held the server,
 *     the real client was refused, and its close ended the test "ok" with 0 bytes;
 *   - client: a peer that stops reading (window closed) and acknowledges nothing for
 *     FW_IPERF_PEER_STALL_MS ends the test at once as `peer_not_reading`, bytes = what it
 *     acknowledged (-n: while writing; -t: once the time is up). With the guard off
 *     (`wait_closed_window`) -n never ended and -t waited FW_IPERF_DRAIN_TIMEOUT_US (20 s) for
 *     `ack_timeout`. A lossy peer (window open, acknowledgements a second late) is waited for as before.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "lwip/init.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/stats.h"
#include "lwip/timeouts.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u    /* 10.77.0.2 */
#define CLIENT_IP 0x0a4d0001u /* 10.77.0.1 */

static struct netif netif;

static void advance_to(uint64_t t)
{
    peer_advance_to(t, 10000u);
}

static void show_output_if_failed(const char *scenario, int failures_before)
{
    if (check_failures != failures_before || getenv("TEST_VERBOSE") != NULL) {
        fprintf(stderr, "--- %s printed:\n%s", scenario, test_output);
    }
}

static struct peer_conn conn_from(uint16_t port)
{
    return (struct peer_conn){&netif, CLIENT_IP, DUT_IP, port, FW_IPERF_DEFAULT_PORT, 1000u * port, 0, 8192};
}

/* The real client: connects, sends 1000 bytes, closes (and acknowledges the DUT's FIN). */
static bool real_client(uint16_t port)
{
    struct peer_conn c = conn_from(port);
    if (!peer_connect(&c)) {
        return false;
    }
    static const uint8_t data[1000];
    peer_send(&c, data, sizeof data);
    peer_fin(&c);
    peer_ack_all(&c, 8192);
    return true;
}

enum silent_end { DISPLACED, CLOSES, RESETS };

/* A connection that sends nothing, then (closes or resets, or not), then the real client. */
static void test_silent_connection(bool guard_on, enum silent_end how)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_TCP_SILENT_CLIENT, !guard_on);
    const unsigned idle = peer_tcp_pcbs_used();
    test_output_reset();
    peer_feed("iperf -s\r\n");
    peer_clear();
    struct peer_conn silent = conn_from(41000);
    CHECK(peer_connect(&silent));
    advance_to(test_now_us + 5000000u); /* it holds the connection, sending nothing */
    if (how == CLOSES) {
        peer_fin(&silent);
        peer_ack_all(&silent, 8192);
    } else if (how == RESETS) {
        peer_tcp(&netif, silent.ip, DUT_IP, silent.port, silent.dut_port, silent.seq, silent.ack, PEER_RST | PEER_ACK,
                 0, NULL, 0);
    }
    advance_to(test_now_us + 100000u);
    if (guard_on) {
        CHECK(strstr(test_output, "RESULT iperf") == NULL); /* no test took place */
        CHECK(strstr(test_output, "41000") == NULL);
    }
    bool served = real_client(50000);
    if (guard_on) {
        CHECK(served);
        CHECK(strstr(test_output, "iperf: accepted TCP connection from 10.77.0.1:50000\r\n") != NULL);
        CHECK(strstr(test_output, "RESULT iperf role=server proto=tcp status=ok peer=10.77.0.1:50000 bytes=1000 ") !=
              NULL);
        if (how == DISPLACED) { /* the silent one was reset to make room */
            CHECK(peer_count_tcp(CLIENT_IP, 41000, PEER_RST) == 1);
        }
    } else if (how == DISPLACED) { /* the defect: the real client refused, the silent one holds the test */
        CHECK(peer_count_tcp(CLIENT_IP, 50000, PEER_RST) >= 1);
        CHECK(strstr(test_output, "RESULT iperf") == NULL);
        peer_feed("iperf -a\r\n");
    } else { /* the defect: its close or reset ended the test; the real client finds no server */
        CHECK(!served);
        CHECK(strstr(test_output, how == CLOSES ? "status=ok peer=10.77.0.1:41000 bytes=0 "
                                                : "status=reset peer=10.77.0.1:41000 bytes=0 ") != NULL);
    }
    show_output_if_failed(guard_on ? "silent connection, guard on" : "silent connection, guard off", failures);
    advance_to(test_now_us + 1000000u);
    CHECK(peer_tcp_pcbs_used() == idle);
    test_guard_plant(FW_GUARD_TCP_SILENT_CLIENT, false);
}

/* -t with only a silent connection: no test took place, the wait timed out. */
static void test_silent_connection_until_time_limit(void)
{
    int failures = check_failures;
    test_output_reset();
    peer_feed("iperf -s -t 2\r\n");
    struct peer_conn silent = conn_from(42000);
    CHECK(peer_connect(&silent));
    advance_to(test_now_us + 2100000u);
    CHECK(strstr(test_output, "RESULT iperf role=server proto=tcp status=timeout peer=- bytes=0 ") != NULL);
    show_output_if_failed("silent connection until -t", failures);
    advance_to(test_now_us + 1000000u);
}

/* A peer for the DUT's client: accepts, acknowledges the first flight with `wnd`, then nothing. */
static struct peer_conn accept_and_ack_once(uint16_t wnd, uint32_t *acked)
{
    struct peer_conn c = {&netif, CLIENT_IP, DUT_IP, FW_IPERF_DEFAULT_PORT, 0, 5000000u, 0, 8192};
    CHECK(peer_accept(&c));
    advance_to(test_now_us + 10000u); /* the DUT's first flight */
    *acked = peer_ack_all(&c, wnd);
    return c;
}

static void test_client_peer_not_reading(bool guard_on, bool by_time)
{
    int failures = check_failures;
    test_guard_plant(FW_GUARD_TCP_PEER_STALL, !guard_on);
    test_output_reset();
    peer_clear();
    peer_feed(by_time ? "iperf -c 10.77.0.1 -t 1\r\n" : "iperf -c 10.77.0.1 -n 100000\r\n");
    const uint64_t t0 = test_now_us;
    uint32_t acked;
    accept_and_ack_once(0, &acked); /* the window closed: it reads no more */
    CHECK(acked > 0 && acked < 100000u);
    char want[96];
    snprintf(want, sizeof want, "RESULT iperf role=client proto=tcp status=peer_not_reading peer=10.77.0.1:5001 "
             "bytes=%u ", (unsigned)acked);
    if (guard_on) {
        /* -n: FW_IPERF_PEER_STALL_MS after its last acknowledgement; -t: once the second is up */
        advance_to(t0 + (by_time ? 1000000u : FW_IPERF_PEER_STALL_MS * 1000u) - 20000u);
        CHECK(strstr(test_output, "RESULT iperf") == NULL);
        advance_to(t0 + (by_time ? 1000000u : FW_IPERF_PEER_STALL_MS * 1000u) + 20000u);
        CHECK(strstr(test_output, want) != NULL);
    } else {
        advance_to(t0 + (by_time ? 20500000u : 30000000u)); /* -t: 20 s after the second is up */
        CHECK(strstr(test_output, "RESULT iperf") == NULL);
        if (by_time) {
            advance_to(t0 + 21100000u);
            CHECK(strstr(test_output, "status=ack_timeout ") != NULL);
        } else {
            peer_feed("iperf -a\r\n"); /* it would never end */
        }
    }
    show_output_if_failed(guard_on ? "peer not reading, guard on" : "peer not reading, guard off", failures);
    test_guard_plant(FW_GUARD_TCP_PEER_STALL, false);
    advance_to(test_now_us + 1000000u);
}

/* A lossy link's peer: the window stays open, its acknowledgements come a second and a half late
 * (the DUT retransmits meanwhile); the test ends ok with every byte, never as peer_not_reading. */
static void test_client_late_acks(void)
{
    int failures = check_failures;
    test_output_reset();
    peer_clear();
    peer_feed("iperf -c 10.77.0.1 -n 5000\r\n");
    uint32_t acked;
    struct peer_conn c = accept_and_ack_once(8192, &acked);
    for (int i = 0; i < 200 && strstr(test_output, "RESULT iperf") == NULL; i++) {
        advance_to(test_now_us + 1500000u); /* nothing acknowledged for 1.5 s */
        peer_ack_all(&c, 8192);
    }
    CHECK(strstr(test_output, "RESULT iperf role=client proto=tcp status=ok peer=10.77.0.1:5001 bytes=5000 ") != NULL);
    show_output_if_failed("late acknowledgements", failures);
    peer_fin(&c);
    advance_to(test_now_us + 1000000u);
}

int main(void)
{
    peer_bring_up(&netif, DUT_IP);
    static const uint8_t client_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
    peer_arp(&netif, CLIENT_IP, client_mac);

    for (int how = DISPLACED; how <= RESETS; how++) {
        test_silent_connection(true, (enum silent_end)how);
        test_silent_connection(false, (enum silent_end)how);
    }
    test_silent_connection_until_time_limit();
    test_client_peer_not_reading(true, false);
    test_client_peer_not_reading(false, false);
    test_client_peer_not_reading(true, true);
    test_client_peer_not_reading(false, true);
    test_client_late_acks();
    return check_summary("test_iperf_tcp_hostile");
}
