/*
 * Unit tests: `stats` reports the TCP PCBs in TIME_WAIT (tcp_time_wait, the length of lwIP's
 * tcp_tw_pcbs; the tcppcb line's time_wait=), inside the whole application with the peer reading
 * back the DUT's segments. The DUT's iperf client closes first: its connection waits out 2 *
 * TCP_MSL in TIME_WAIT holding a TCP PCB (pool_TCP_PCB_used), which the suite subtracts when it
 * checks that the pools are back at their idle level; two tests hold two; a connection whose
 * peer closed first (the DUT's server) leaves none; after 2 * TCP_MSL they are gone and the pool
 * is at its idle level.
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
#include "lwip/priv/tcp_priv.h"
#include "lwip/stats.h"
#include "lwip/timeouts.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u /* 10.77.0.2 */
#define PC_IP 0x0a4d0001u  /* 10.77.0.1 */

static struct netif netif;

static void advance_to(uint64_t t)
{
    peer_advance_to(t, 50000u);
}

/* `stats` has " tcp_time_wait=N " with pool_TCP_PCB_used=used, and the human line. */
static void check_stats(unsigned time_wait, unsigned used)
{
    char field[48], human[48], pool[48];
    snprintf(field, sizeof field, " tcp_time_wait=%u", time_wait);
    snprintf(human, sizeof human, "tcppcb time_wait=%u\r\n", time_wait);
    snprintf(pool, sizeof pool, " pool_TCP_PCB_used=%u ", used);
    test_output_reset();
    peer_feed("stats\r\n");
    const char *result = strstr(test_output, "RESULT stats ");
    CHECK(result != NULL && strstr(result, field) != NULL && strstr(result, pool) != NULL);
    CHECK(strstr(test_output, human) != NULL);
    if (result == NULL || strstr(result, field) == NULL || strstr(test_output, human) == NULL) {
        fprintf(stderr, "wanted \"%s\", \"%s\" and \"%s\" in:\n%s", field, human, pool, test_output);
    }
}

/* The DUT's client sends 5000 bytes to the peer and closes first; the peer then closes too. */
static void client_test_closing_first(void)
{
    test_output_reset();
    peer_clear();
    peer_feed("iperf -c 10.77.0.1 -n 5000\r\n");
    struct peer_conn c = {&netif, PC_IP, DUT_IP, FW_IPERF_DEFAULT_PORT, 0, 5000000u, 0, 8192};
    CHECK(peer_accept(&c));
    /* the FIN leaves right behind the last data, before the last data is acknowledged (a
     * socket client's close); the result waits for the acks */
    for (int i = 0; i < 100; i++) {
        advance_to(test_now_us + 10000u);
        if (peer_count_tcp(PC_IP, FW_IPERF_DEFAULT_PORT, PEER_FIN) != 0) {
            break;
        }
        peer_ack_all(&c, 8192);
    }
    CHECK(peer_count_tcp(PC_IP, FW_IPERF_DEFAULT_PORT, PEER_FIN) == 1);
    CHECK(strstr(test_output, "RESULT iperf role=client") == NULL);
    for (int i = 0; i < 100 && strstr(test_output, "RESULT iperf role=client") == NULL; i++) {
        peer_ack_all(&c, 8192);
        advance_to(test_now_us + 10000u);
    }
    CHECK(strstr(test_output, "RESULT iperf role=client proto=tcp status=ok peer=10.77.0.1:5001 bytes=5000 ") != NULL);
    CHECK(peer_count_tcp(PC_IP, FW_IPERF_DEFAULT_PORT, PEER_FIN) == 1);
    peer_ack_all(&c, 8192); /* its FIN acknowledged: FIN_WAIT_2 */
    peer_fin(&c);           /* the peer's: TIME_WAIT */
    advance_to(test_now_us + 10000u);
}

/* The peer's client sends to the DUT's server and closes first: the DUT's side goes through
 * LAST_ACK, no TIME_WAIT. */
static void server_test_peer_closing_first(void)
{
    test_output_reset();
    peer_clear();
    peer_feed("iperf -s\r\n");
    struct peer_conn c = {&netif, PC_IP, DUT_IP, 50001, FW_IPERF_DEFAULT_PORT, 1000, 0, 8192};
    CHECK(peer_connect(&c));
    static const uint8_t data[100];
    peer_send(&c, data, sizeof data);
    peer_fin(&c);
    advance_to(test_now_us + 10000u);
    peer_ack_all(&c, 8192); /* the DUT's FIN */
    advance_to(test_now_us + 10000u);
    CHECK(strstr(test_output, "RESULT iperf role=server proto=tcp status=ok peer=10.77.0.1:50001 bytes=100 ") !=
          NULL);
}

int main(void)
{
    peer_bring_up(&netif, DUT_IP);
    static const uint8_t pc_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
    peer_arp(&netif, PC_IP, pc_mac);

    const unsigned idle = peer_tcp_pcbs_used();
    check_stats(0, idle);

    /* the DUT closed first: TIME_WAIT holds its PCB, which is what pool_TCP_PCB_used is above idle */
    client_test_closing_first();
    CHECK(tcp_tw_pcbs != NULL && tcp_tw_pcbs->state == TIME_WAIT);
    check_stats(1, idle + 1u);
    const uint64_t t_first = test_now_us;
    advance_to(test_now_us + 1000000u);
    client_test_closing_first();
    check_stats(2, idle + 2u);

    /* the peer closed first: nothing more in TIME_WAIT */
    server_test_peer_closing_first();
    peer_feed("iperf -a\r\n"); /* the server listens on: stop it (its listener is of the other pool) */
    advance_to(test_now_us + 100000u);
    check_stats(2, idle + 2u);

    /* 2 * TCP_MSL (lwIP's tcp_slowtmr, every 500 ms) after the first: it is gone, the second later */
    advance_to(t_first + 2u * TCP_MSL * 1000u + 1000000u);
    check_stats(1, idle + 1u);
    advance_to(test_now_us + 1000000u + 1000000u);
    check_stats(0, idle);
    CHECK(peer_tcp_pcbs_used() == idle);
    return check_summary("test_tcp_time_wait");
}
