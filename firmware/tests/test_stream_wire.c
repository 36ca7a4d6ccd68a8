/* Unit tests: stream packet encoding and the receiver's per-burst loss accounting. */
#include <string.h>

#include "check.h"
#include "stream_wire.h"

static unsigned feed(struct stream_rx *rx, uint32_t burst, uint32_t seq, uint64_t now, struct stream_burst_loss *l)
{
    struct stream_pkt p = {7, 0, burst, seq, 0};
    return stream_rx_account(rx, &p, now, l, 8);
}

int main(void)
{
    uint8_t b[STREAM_HDR_LEN];
    struct stream_pkt in = {4, 3, 100000, 0xfffffff0u, 0x0123456789abcdefull};
    struct stream_pkt out;
    stream_pkt_encode(b, &in);
    CHECK(stream_pkt_decode(b, sizeof b, &out));
    CHECK(out.id == 4 && out.index == 3 && out.burst == 100000 && out.seq == 0xfffffff0u &&
          out.sent_us == 0x0123456789abcdefull);
    CHECK(!stream_pkt_decode(b, sizeof b - 1, &out));
    b[0] ^= 1;
    CHECK(!stream_pkt_decode(b, sizeof b, &out));

    /* bursts of 4 every 200 ms; burst 1 loses 1 packet, burst 2 is lost entirely */
    struct stream_rx rx;
    struct stream_burst_loss l[8];
    stream_rx_init(&rx, 7, 4, 200000, 250000);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK(feed(&rx, 0, i, 1000 + i, l) == 0);
    }
    for (uint32_t i = 4; i < 7; i++) {
        CHECK(feed(&rx, 1, i, 201000 + i, l) == 0);
    }
    unsigned n = feed(&rx, 3, 12, 601000, l);
    CHECK(n == 2 && l[0].burst == 1 && l[0].lost == 1 && l[1].burst == 2 && l[1].lost == 4);
    CHECK(rx.received == 8 && rx.outoforder == 0 && rx.late == 0);
    /* a straggler of burst 1 is out of order; a packet far behind schedule is late */
    CHECK(feed(&rx, 1, 7, 602000, l) == 0 && rx.outoforder == 1 && rx.late == 1);
    CHECK(feed(&rx, 3, 13, 1200000, l) == 0 && rx.late == 2);

    /* the first packet seen belongs to burst 2: bursts 0 and 1 were lost */
    stream_rx_init(&rx, 7, 4, 200000, 250000);
    n = feed(&rx, 2, 8, 5000000, l);
    CHECK(n == 2 && l[0].lost == 4 && l[1].burst == 1 && rx.late == 0);
    return check_summary("test_stream_wire");
}
