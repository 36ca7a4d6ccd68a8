/* Unit tests: iperf 2 UDP header and server report encoding/decoding, receiver accounting (and its
 * sequence window against a forged number). */
#include <string.h>

#include "check.h"
#include "fw_config.h"
#include "iperf_wire.h"

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void test_header_roundtrip(void)
{
    uint8_t b[IPERF_UDP_HDR_LEN];
    struct iperf_udp_hdr h;
    iperf_udp_hdr_encode(b, 5, 12000345u);
    CHECK(b[3] == 5 && b[0] == 0 && b[7] == 12 && b[15] == 0);
    CHECK(iperf_udp_hdr_decode(b, sizeof b, false, &h) && h.seq == 5 && h.sent_us == 12000345u);
    iperf_udp_hdr_encode(b, -30, 0);
    CHECK(iperf_udp_hdr_decode(b, sizeof b, false, &h) && h.seq == -30);
    CHECK(iperf_udp_hdr_decode(b, sizeof b, true, &h) && h.seq == -30); /* id2 = 0xffffffff */
    iperf_udp_hdr_encode(b, 0x100000002ll, 0);
    CHECK(iperf_udp_hdr_decode(b, sizeof b, true, &h) && h.seq == 0x100000002ll);
    CHECK(!iperf_udp_hdr_decode(b, 15, false, &h));
}

/* The first datagram of a real iperf 2.1.8 UDP client (captured): 64-bit sequence numbers. */
static void test_iperf218_client_header(void)
{
    static const uint32_t words[] = {0x1, 0x6b023564, 0x85c9c, 0x0, 0x48010098, 0x1, 0x176f, 0, 0, 0xffffffe2};
    uint8_t b[sizeof words];
    for (size_t i = 0; i < sizeof words / 4; i++) {
        put32(b + 4 * i, words[i]);
    }
    CHECK(iperf_udp_uses_seq64(b, sizeof b));
    CHECK(!iperf_udp_uses_seq64(b, 19));
    uint8_t zero_flags[20] = {0};
    CHECK(!iperf_udp_uses_seq64(zero_flags, sizeof zero_flags));
}

/* The answer of a real iperf 2.1.8 server to a FIN (captured): v1 report + extensions. */
static void test_iperf218_server_reply(void)
{
    static const uint32_t words[] = {0, 0, 0, 0, 0x88000000, 0, 0x22740, 0, 0x7a316, 0, 0, 0x60, 0, 0x9};
    uint8_t b[128] = {0};
    for (size_t i = 0; i < sizeof words / 4; i++) {
        put32(b + 4 * i, words[i]);
    }
    struct iperf_server_report r;
    CHECK(iperf_server_reply_decode(b, sizeof b, &r));
    CHECK(r.total_bytes == 141120 && r.duration_us == 500502 && r.lost == 0 && r.datagrams == 96 &&
          r.jitter_us == 9);
    CHECK(!iperf_server_reply_decode(b, IPERF_SERVER_REPLY_LEN - 1, &r));
    b[16] = 0; /* no HEADER_VERSION1 */
    CHECK(!iperf_server_reply_decode(b, sizeof b, &r));
}

static void test_server_reply_roundtrip(void)
{
    uint8_t fin[IPERF_UDP_HDR_LEN];
    uint8_t b[IPERF_SERVER_REPLY_LEN];
    iperf_udp_hdr_encode(fin, -101, 7);
    struct iperf_server_report in = {123456789012ull, 10000123u, 3, 2, 100, 1500};
    struct iperf_server_report out;
    CHECK(iperf_server_reply_encode(b, sizeof b - 1, fin, &in) == 0);
    CHECK(iperf_server_reply_encode(b, sizeof b, fin, &in) == IPERF_SERVER_REPLY_LEN);
    CHECK(memcmp(b, fin, sizeof fin) == 0);
    CHECK(iperf_server_reply_decode(b, sizeof b, &out));
    CHECK(out.total_bytes == in.total_bytes && out.duration_us == in.duration_us && out.lost == 3 &&
          out.outoforder == 2 && out.datagrams == 100 && out.jitter_us == 1500);
}

static enum iperf_rx_kind feed(struct iperf_udp_rx *rx, int64_t seq, uint64_t sent, uint64_t now)
{
    uint8_t b[100] = {0};
    iperf_udp_hdr_encode(b, seq, sent);
    return iperf_udp_rx_account(rx, b, sizeof b, now);
}

static void test_rx_accounting(void)
{
    struct iperf_udp_rx rx;
    struct iperf_server_report r;
    iperf_udp_rx_init(&rx);
    CHECK(feed(&rx, -5, 0, 0) == IPERF_RX_INVALID); /* FIN before any data */
    /* 1 2 _ 4 3 _ _ then FIN(-8): 5 and 6 lost, 3 late */
    CHECK(feed(&rx, 1, 1000, 5000) == IPERF_RX_DATA);
    CHECK(feed(&rx, 2, 2000, 6000) == IPERF_RX_DATA);
    CHECK(feed(&rx, 4, 4000, 8000) == IPERF_RX_DATA);
    CHECK(feed(&rx, 3, 3000, 8100) == IPERF_RX_DATA);
    CHECK(feed(&rx, 7, 7000, 11000) == IPERF_RX_DATA);
    CHECK(feed(&rx, -8, 8000, 12000) == IPERF_RX_FIN);
    CHECK(feed(&rx, -8, 8000, 13000) == IPERF_RX_FIN); /* repeated FIN: counted once */
    CHECK(feed(&rx, 9, 9000, 14000) == IPERF_RX_INVALID);
    iperf_udp_rx_report(&rx, &r);
    CHECK(rx.received == 5 && r.lost == 2 && r.outoforder == 1 && r.datagrams == 7);
    CHECK(r.total_bytes == 500 && r.duration_us == 7000);

    /* trailing loss only visible from the FIN */
    iperf_udp_rx_init(&rx);
    feed(&rx, 1, 0, 0);
    feed(&rx, 2, 0, 0);
    feed(&rx, -11, 0, 0);
    iperf_udp_rx_report(&rx, &r);
    CHECK(r.datagrams == 10 && r.lost == 8);

    /* perfectly paced datagrams have no jitter; a constant offset is not jitter either */
    iperf_udp_rx_init(&rx);
    for (int i = 1; i <= 50; i++) {
        feed(&rx, i, (uint64_t)i * 1000u, (uint64_t)i * 1000u + 777u);
    }
    iperf_udp_rx_report(&rx, &r);
    CHECK(r.jitter_us == 0);
    /* alternating 0/200 us transit variation converges towards 200 us */
    for (int i = 51; i <= 400; i++) {
        feed(&rx, i, (uint64_t)i * 1000u, (uint64_t)i * 1000u + (i % 2 ? 200u : 0u));
    }
    iperf_udp_rx_report(&rx, &r);
    CHECK(r.jitter_us >= 190 && r.jitter_us <= 200);

    /* extreme sequence numbers are rejected, not overflowed */
    iperf_udp_rx_init(&rx);
    CHECK(feed(&rx, INT64_MAX, 0, 0) == IPERF_RX_INVALID);
    uint8_t b[20] = {0};
    CHECK(iperf_udp_rx_account(&rx, b, 10, 0) == IPERF_RX_INVALID);
}

/*
 * One forged datagram from the client's own address and port with a huge sequence number
 * (0x7fffffff) amid a clean test: with the window (FW_IPERF_UDP_SEQ_WINDOW) it is invalid and the
 * figures are those of the clean test; without it (seq_window 0, the host's `trust_udp_seq`) it
 * turned into 2^31 lost datagrams and every later one into reordering. The window's edges: a jump
 * of exactly the window is loss, one more is invalid; a FIN likewise.
 */
static void test_rx_seq_window(void)
{
    struct iperf_udp_rx rx;
    struct iperf_server_report r;
    for (int guard = 1; guard >= 0; guard--) {
        iperf_udp_rx_init(&rx);
        CHECK(rx.seq_window == FW_IPERF_UDP_SEQ_WINDOW);
        if (!guard) {
            rx.seq_window = 0;
        }
        for (int i = 1; i <= 10; i++) {
            CHECK(feed(&rx, i, (uint64_t)i * 1000u, (uint64_t)i * 1000u) == IPERF_RX_DATA);
        }
        enum iperf_rx_kind forged = feed(&rx, 0x7fffffff, 10500u, 10500u);
        for (int i = 11; i <= 20; i++) {
            feed(&rx, i, (uint64_t)i * 1000u, (uint64_t)i * 1000u);
        }
        CHECK(feed(&rx, -21, 21000u, 21000u) == IPERF_RX_FIN);
        iperf_udp_rx_report(&rx, &r);
        if (guard) {
            CHECK(forged == IPERF_RX_INVALID && rx.out_of_window == 1);
            CHECK(rx.received == 20 && r.datagrams == 20 && r.lost == 0 && r.outoforder == 0 && r.total_bytes == 2000);
        } else {
            CHECK(forged == IPERF_RX_DATA); /* the defect: 2^31 - 12 lost, then ten "late" ones */
            CHECK(r.lost == 0x7fffffffu - 11u - 10u && r.outoforder == 10 && r.datagrams == 21 + r.lost);
        }
    }
    const int64_t w = (int64_t)FW_IPERF_UDP_SEQ_WINDOW;
    iperf_udp_rx_init(&rx);
    CHECK(feed(&rx, 2 + w, 0, 0) == IPERF_RX_INVALID); /* a first datagram too: counted from 1 */
    CHECK(feed(&rx, 1, 0, 0) == IPERF_RX_DATA);
    CHECK(feed(&rx, 2 + w, 0, 0) == IPERF_RX_INVALID); /* w + 1 beyond the highest seen (1) */
    CHECK(feed(&rx, 1 + w, 0, 0) == IPERF_RX_DATA);    /* w beyond: w - 1 lost */
    CHECK(feed(&rx, -(2 * w + 3), 0, 0) == IPERF_RX_INVALID); /* a FIN claiming 2w + 2 sent */
    CHECK(feed(&rx, -(2 * w + 2), 0, 0) == IPERF_RX_FIN);     /* 2w + 1 sent: w more lost */
    iperf_udp_rx_report(&rx, &r);
    CHECK(rx.out_of_window == 3 && r.lost == (uint64_t)(2 * w - 1) && r.datagrams == (uint64_t)(2 * w + 1));
}

int main(void)
{
    test_header_roundtrip();
    test_iperf218_client_header();
    test_iperf218_server_reply();
    test_server_reply_roundtrip();
    test_rx_accounting();
    test_rx_seq_window();
    return check_summary("test_iperf_wire");
}
