/*
 * Unit tests: a segment into a live connection whose ACK acknowledges data the DUT never sent
 * (SEG.ACK > SND.NXT), with data at the connection's receive edge, as the `forged` robustness class
 * sends it from the PC's address into the DUT's iperf client's connection. RFC 793 (RFC 5961 5.2):
 * send an ACK and drop the segment. The guard (fw_tcp_guard.c) drops it, data and all, answers with
 * an ACK of the real next byte, and counts it (stats tcp_acks_unsent_dropped); the transfer then
 * ends as it would have, without a retransmission timeout. With the guard off (the host's
 * `take_data_acking_unsent`, or TEST_GUARDS_OFF=1) lwIP 2.1.3 takes the forged bytes: its next
 * ACK acknowledges bytes the peer never sent, which is what this test then fails on.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_tcp_guard.h"
#include "test_peer.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u /* 10.77.0.2 */
#define PC_IP 0x0a4d0001u  /* 10.77.0.1 */

static struct netif netif;

int main(void)
{
    peer_bring_up(&netif, DUT_IP);
    static const uint8_t pc_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
    peer_arp(&netif, PC_IP, pc_mac);

    test_output_reset();
    peer_clear();
    peer_feed("iperf -c 10.77.0.1 -n 20000\r\n");
    struct peer_conn c = {&netif, PC_IP, DUT_IP, FW_IPERF_DEFAULT_PORT, 0, 7000000u, 0, 8192};
    CHECK(peer_accept(&c));
    peer_advance_to(test_now_us + 10000u, 5000u);
    peer_ack_all(&c, 8192);

    /* the forged segment: at the receive edge (c.seq is the DUT's rcv_nxt), ACK far beyond what it sent */
    static const uint8_t forged[64] = {0x5a};
    const uint32_t before = fw_tcp_guard_counts().acks_unsent;
    peer_clear();
    peer_tcp(&netif, PC_IP, DUT_IP, FW_IPERF_DEFAULT_PORT, c.dut_port, c.seq, c.ack + 0x10000000u,
             PEER_ACK | PEER_PSH, 8192, forged, sizeof forged);
    struct peer_seg answer;
    CHECK(peer_last_tcp(PC_IP, FW_IPERF_DEFAULT_PORT, &answer));
    CHECK(answer.ack == c.seq); /* the real next byte: the forged ones were not taken */
    CHECK(fw_tcp_guard_counts().acks_unsent == before + 1u);

    /* the real peer goes on: every byte delivered, the test ends promptly (no retransmission timeout) */
    const uint64_t began = test_now_us;
    for (int i = 0; i < 200 && strstr(test_output, "RESULT iperf role=client") == NULL; i++) {
        peer_advance_to(test_now_us + 10000u, 5000u);
        peer_ack_all(&c, 8192);
    }
    CHECK(strstr(test_output, "RESULT iperf role=client proto=tcp status=ok peer=10.77.0.1:5001 bytes=20000 ") != NULL);
    CHECK(test_now_us - began < 1000000u);
    CHECK(peer_last_tcp(PC_IP, FW_IPERF_DEFAULT_PORT, &answer) && answer.ack == c.seq);

    peer_feed("stats\r\n");
    CHECK(strstr(test_output, " tcp_acks_unsent_dropped=1") != NULL);
    CHECK(strstr(test_output, "tcpack unsent_dropped=1\r\n") != NULL);
    return check_summary("test_tcp_ack_unsent");
}
