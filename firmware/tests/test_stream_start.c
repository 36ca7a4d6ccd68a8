/*
 * Unit test: `stream start SECONDS DELAY_MS` (stream.c), inside the whole application with the
 * DUT's own frames read back. Two DUTs run each other's streams (DUT to DUT), each started through
 * its own console one after the other: each must listen before either sends. With a delay the
 * receivers count from the command on, the senders send nothing before DELAY_MS and then keep the
 * profile's schedule from there (bursts PERIOD apart, the run SECONDS long); a delay above
 * FW_STREAM_MAX_START_DELAY_MS, or not a number, is refused naming it, and nothing runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "stream_wire.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u  /* 10.77.0.2 */
#define PEER_IP 0x0a4d0003u /* 10.77.0.3, the other DUT */
#define TX_PORT 6001
#define RX_PORT 6004

static struct netif netif;

static void advance_to(uint64_t t)
{
    peer_advance_to(t, 1000u);
}

/* Packet `index` of `burst` of stream 4 from the other DUT, as it would send it. */
static void rx_packet(uint32_t burst, uint16_t index)
{
    uint8_t b[8 + STREAM_HDR_LEN];
    struct stream_pkt p = {4, index, burst, burst * 2u + index, 0};
    test_put16(b, 40000);
    test_put16(b + 2, RX_PORT);
    test_put16(b + 4, (uint16_t)sizeof b);
    test_put16(b + 6, 0);
    stream_pkt_encode(b + 8, &p);
    CHECK(test_inject_ipv4(&netif, PEER_IP, DUT_IP, 17, 0, 0, b, (uint16_t)sizeof b));
}

static void configure(void)
{
    peer_feed("stream clear\r\n");
    /* stream 1: 2 packets every 200 ms, 1 ms apart, to the other DUT; stream 4: 2 every 200 ms from it */
    peer_feed("stream add tx 1 10.77.0.3 6001 100 2 200 1000\r\n");
    peer_feed("stream add rx 4 6004 100 2 200 250\r\n");
}

static void test_senders_wait_receivers_listen(void)
{
    int failures = check_failures;
    configure();
    peer_clear();
    test_output_reset();
    uint64_t t0 = test_now_us;
    peer_feed("stream start 1 500\r\n");
    CHECK(strstr(test_output, "stream: 2 streams running for 1000 ms, sending in 500 ms") != NULL);
    /* the other DUT's first burst arrives before this one sends: counted */
    advance_to(t0 + 100000u);
    rx_packet(0, 0);
    rx_packet(0, 1);
    advance_to(t0 + 499000u);
    CHECK(peer_count_udp(PEER_IP, TX_PORT) == 0); /* nothing sent before the delay */
    advance_to(t0 + 502000u);
    CHECK(peer_count_udp(PEER_IP, TX_PORT) == 2); /* the first burst at 500 ms, its 2nd packet 1 ms later */
    advance_to(t0 + 1499000u);
    CHECK(peer_count_udp(PEER_IP, TX_PORT) == 10); /* bursts at 500, 700, ..., 1300 ms */
    advance_to(t0 + 500000u + 1000000u + FW_STREAM_LINGER_MS * 1000u + 1000u);
    CHECK(peer_count_udp(PEER_IP, TX_PORT) == 10); /* none starts at or after 1500 ms */
    CHECK(strstr(test_output, "STREAM id=1 dir=tx sent=10 bursts=5 send_errors=0") != NULL);
    CHECK(strstr(test_output, "STREAM id=4 dir=rx received=2 ") != NULL);
    CHECK(strstr(test_output, "RESULT stream status=ok streams=2 ") != NULL);
    if (check_failures != failures) {
        fprintf(stderr, "--- printed:\n%s\n", test_output);
    }
}

static void test_bad_delay_refused(void)
{
    configure();
    test_output_reset();
    peer_feed("stream start 1 10001\r\n");
    CHECK(strstr(test_output, "ERR stream bad start delay 10001 ms (0-10000)") != NULL);
    test_output_reset();
    peer_feed("stream start 1 soon\r\n");
    CHECK(strstr(test_output, "ERR stream bad start delay soon ms") != NULL);
    test_output_reset();
    peer_feed("stream start 1 0 9\r\n");
    CHECK(strstr(test_output, "ERR stream usage: stream start SECONDS") != NULL);
    test_output_reset();
    peer_feed("stream -a\r\n");
    CHECK(strstr(test_output, "RESULT stream action=abort") != NULL);
    CHECK(strstr(test_output, "status=aborted") == NULL); /* nothing was running */
}

int main(void)
{
    peer_bring_up(&netif, DUT_IP);
    static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x03};
    peer_arp(&netif, PEER_IP, peer_mac); /* the DUT's datagrams leave at once, none wait for ARP */
    test_senders_wait_receivers_listen();
    test_bad_delay_refused();
    return check_summary("test_stream_start");
}
