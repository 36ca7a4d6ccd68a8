/*
 * Unit tests: the TCP segment counts of fw_tcp_track.c (a segment sent again below the highest
 * sequence number sent, a new connection's SYN, sequence wrap; a received segment ahead of or
 * before the next expected byte), and `stats` printing them with the CPU's busy time and
 * `stats mark` restarting the pools' high-water marks, inside the whole application.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_platform.h"
#include "fw_tcp_track.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "test_platform.h"

extern uint64_t test_busy_us;

static void feed(const char *s)
{
    fw_app_console_input(s, strlen(s));
}

static void test_sent(void)
{
    fw_tcp_track_reset();
    const uint32_t peer = 0x0a000001u;
    fw_tcp_track_sent(peer, 5001, 40000, 1000, 1, 1);      /* SYN */
    fw_tcp_track_sent(peer, 5001, 40000, 1000, 1, 1);      /* the SYN again: a retransmission */
    CHECK(fw_tcp_track_counts().retrans == 1);
    fw_tcp_track_sent(peer, 5001, 40000, 1001, 1460, 0);   /* new data */
    fw_tcp_track_sent(peer, 5001, 40000, 2461, 1460, 0);
    fw_tcp_track_sent(peer, 5001, 40000, 2461, 0, 0);      /* a pure ACK: no sequence space */
    CHECK(fw_tcp_track_counts().retrans == 1);
    fw_tcp_track_sent(peer, 5001, 40000, 1001, 1460, 0);   /* resent (RTO or fast: the same) */
    fw_tcp_track_sent(peer, 5001, 40000, 2461, 1460, 0);
    CHECK(fw_tcp_track_counts().retrans == 3);
    fw_tcp_track_sent(peer, 5001, 40000, 3921, 1460, 0);   /* new again */
    CHECK(fw_tcp_track_counts().retrans == 3);
    fw_tcp_track_sent(peer, 5001, 40001, 9, 1, 1);         /* another connection, its own SYN */
    fw_tcp_track_sent(peer, 5001, 40001, 10, 100, 0);
    CHECK(fw_tcp_track_counts().retrans == 3);
    fw_tcp_track_sent(peer, 5001, 40000, 777777, 1, 1);    /* the first port pair reused: a new connection */
    CHECK(fw_tcp_track_counts().retrans == 3);
    fw_tcp_track_sent(peer, 5001, 40002, 0xfffffff0u, 1, 1); /* across the sequence wrap */
    fw_tcp_track_sent(peer, 5001, 40002, 0xfffffff1u, 100, 0);
    fw_tcp_track_sent(peer, 5001, 40002, 0x55u, 100, 0);
    CHECK(fw_tcp_track_counts().retrans == 3);
    fw_tcp_track_sent(peer, 5001, 40002, 0xfffffff1u, 100, 0);
    CHECK(fw_tcp_track_counts().retrans == 4);
    fw_tcp_track_reset();
    CHECK(fw_tcp_track_counts().retrans == 0);
}

static void test_received(void)
{
    fw_tcp_track_reset();
    fw_tcp_track_received(1000, 1460, 1000); /* in order */
    fw_tcp_track_received(2460, 0, 1000);    /* an ACK: no data */
    CHECK(fw_tcp_track_counts().ooseq == 0 && fw_tcp_track_counts().rx_dup == 0);
    fw_tcp_track_received(3920, 1460, 2460); /* a gap before it */
    fw_tcp_track_received(1000, 1460, 2460); /* already had it */
    fw_tcp_track_received(0x10u, 10, 0xfffffff0u); /* ahead, across the wrap */
    struct fw_tcp_track_counts c = fw_tcp_track_counts();
    CHECK(c.ooseq == 2 && c.rx_dup == 1 && c.rx_segs == 4);
}

static void test_stats_fields(void)
{
    static struct netif n;
    lwip_init();
    test_netif_add(&n, 0x0a000002u, 0xffffff00u);
    fw_app_init(&n);
    test_busy_us = 250000;
    test_output_reset();
    fw_tcp_track_reset();
    fw_tcp_track_received(3920, 1460, 2460);
    feed("stats\r\n");
    CHECK(strstr(test_output, " cpu_busy_us=250000 uptime_us=") != NULL);
    CHECK(strstr(test_output, " tcp_retrans=0 tcp_ooseq=1 tcp_rx_dup=0 tcp_tx_segs=0 tcp_rx_segs=1") != NULL);
    test_busy_us = FW_PLATFORM_BUSY_UNKNOWN; /* a port that cannot tell leaves the keys out */
    test_output_reset();
    feed("stats mark\r\n");
    CHECK(strstr(test_output, "RESULT stats") != NULL && strstr(test_output, "cpu_busy_us=") == NULL);
    test_output_reset();
    feed("stats reset\r\n");
    CHECK(strstr(test_output, "RESULT stats action=reset") != NULL && fw_tcp_track_counts().ooseq == 0);
    test_output_reset();
    feed("stats twice\r\n");
    CHECK(strstr(test_output, "usage: stats [reset|mark]") != NULL);
}

int main(void)
{
    test_sent();
    test_received();
    test_stats_fields();
    return check_summary("test_tcp_track");
}
