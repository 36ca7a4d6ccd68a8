/* Unit tests: stream packet encoding and the receiver's accounting: its window of bursts, loss
 * beyond one report, duplicates, reordering, stale and invalid packets. */
#include <string.h>

#include "check.h"
#include "stream_wire.h"

static unsigned feed_idx(struct stream_rx *rx, uint32_t burst, uint16_t index, uint32_t seq, uint64_t now,
                         struct stream_burst_loss *l)
{
    struct stream_pkt p = {7, index, burst, seq, 0};
    return stream_rx_account(rx, &p, now, l, 8);
}

/* packet `index` of a burst of 4, numbered as the sender numbers it */
static unsigned feed(struct stream_rx *rx, uint32_t burst, uint16_t index, uint64_t now, struct stream_burst_loss *l)
{
    return feed_idx(rx, burst, index, burst * 4u + index, now, l);
}

/* Bursts of 4 every 200 ms, threshold 250 ms; the window holds FW_STREAM_RX_WINDOW (4) bursts. */
static void test_window(void)
{
    struct stream_rx rx;
    struct stream_burst_loss l[8];
    stream_rx_init(&rx, 7, 4, 200000, 250000);
    for (uint16_t i = 0; i < 4; i++) {
        CHECK(feed(&rx, 0, i, 1000 + i, l) == 0);
    }
    /* burst 1 loses index 3, burst 2 is lost entirely */
    for (uint16_t i = 0; i < 3; i++) {
        CHECK(feed(&rx, 1, i, 201000 + i, l) == 0);
    }
    CHECK(feed(&rx, 3, 0, 601000, l) == 0); /* bursts 0..3 all still open */
    CHECK(rx.received == 8 && rx.outoforder == 0 && rx.late == 0 && rx.lost == 0);
    /* burst 4 closes burst 0 (complete); burst 5 closes 1; burst 6 closes 2 */
    CHECK(feed(&rx, 4, 0, 801000, l) == 0);
    CHECK(feed(&rx, 5, 0, 1001000, l) == 1 && l[0].burst == 1 && l[0].lost == 1);
    CHECK(feed(&rx, 6, 0, 1201000, l) == 1 && l[0].burst == 2 && l[0].lost == 4);
    CHECK(rx.lost == 5 && rx.lossy_bursts == 2 && rx.losses_capped == 0);
    /* a packet of closed burst 1 is stale: counted lost already, never received */
    CHECK(feed(&rx, 1, 3, 1202000, l) == 0 && rx.stale == 1 && rx.received == 11);
    /* a packet far behind schedule is late */
    CHECK(feed(&rx, 6, 1, 1600000, l) == 0 && rx.late == 1);
    /* the end closes bursts 3..6, each missing packets */
    unsigned n = stream_rx_close(&rx, l, 8);
    CHECK(n == 4 && l[0].burst == 3 && l[0].lost == 3 && l[3].burst == 6 && l[3].lost == 2);
    CHECK(rx.lost == 5 + 3 + 3 + 3 + 2 && rx.lossy_bursts == 6);
    CHECK(rx.received + rx.lost == 4u * (rx.cur_burst + 1u)); /* every packet of bursts 0..6 */
    CHECK(stream_rx_close(&rx, l, 8) == 0 && feed(&rx, 7, 0, 1700000, l) == 0 && rx.received == 12);

    /* the first packet seen belongs to burst 5: bursts 0 and 1 are out of reach, 2..4 still open */
    stream_rx_init(&rx, 7, 4, 200000, 250000);
    n = feed(&rx, 5, 0, 5000000, l);
    CHECK(n == 2 && l[0].burst == 0 && l[0].lost == 4 && l[1].burst == 1 && rx.late == 0);
    CHECK(feed(&rx, 2, 3, 5000100, l) == 0 && rx.received == 2 && rx.outoforder == 1);
    CHECK(stream_rx_close(&rx, l, 8) == 4 && l[0].burst == 2 && l[0].lost == 3);
    CHECK(rx.received + rx.lost == 24u);
}

/* More lossy bursts than one report holds: all counted, the rest capped. */
static void test_many_losses(void)
{
    struct stream_rx rx;
    struct stream_burst_loss l[8];
    stream_rx_init(&rx, 7, 4, 200000, 250000);
    for (uint16_t i = 0; i < 4; i++) {
        feed(&rx, 0, i, 1000, l);
    }
    /* bursts 1..20 lost: burst 21 closes 1..17 (8 listed, 9 capped), the end 18..20 */
    CHECK(feed(&rx, 21, 0, 4201000, l) == 8 && l[0].burst == 1 && l[7].burst == 8);
    CHECK(rx.lost == 17u * 4u && rx.lossy_bursts == 17 && rx.losses_capped == 9);
    for (uint16_t i = 1; i < 4; i++) {
        feed(&rx, 21, i, 4201000, l);
    }
    CHECK(stream_rx_close(&rx, l, 8) == 3 && l[0].burst == 18 && l[2].burst == 20);
    CHECK(rx.lost == 80 && rx.lossy_bursts == 20 && rx.losses_capped == 9 && rx.received == 8);

    /* a jump to the last burst number: counted, not walked */
    stream_rx_init(&rx, 7, 1000, 1000, 0);
    struct stream_pkt p = {7, 0, UINT32_MAX, 0, 0};
    CHECK(stream_rx_account(&rx, &p, 0, l, 8) == 8);
    uint64_t closed = (uint64_t)UINT32_MAX - (FW_STREAM_RX_WINDOW - 1u);
    CHECK(rx.lost == closed * 1000u && rx.lossy_bursts == closed && rx.losses_capped == closed - 8u);
    CHECK(stream_rx_close(&rx, l, 8) == FW_STREAM_RX_WINDOW);
    CHECK(rx.lost + rx.received == ((uint64_t)UINT32_MAX + 1u) * 1000u);
}

/* Duplicates are counted apart and never hide loss; an index outside the burst is invalid. */
static void test_duplicates(void)
{
    struct stream_rx rx;
    struct stream_burst_loss l[8];
    stream_rx_init(&rx, 7, 4, 200000, 250000);
    feed(&rx, 0, 0, 1000, l);
    feed(&rx, 0, 0, 1001, l);
    feed(&rx, 0, 1, 1002, l);
    feed(&rx, 0, 0, 1003, l);
    CHECK(rx.received == 2 && rx.duplicates == 2 && rx.outoforder == 0);
    feed(&rx, 0, 1, 1004, l);
    feed(&rx, 0, 1, 1005, l); /* four packets of burst 0 arrived, two of them distinct */
    CHECK(feed_idx(&rx, 0, 4, 4, 1006, l) == 0 && rx.invalid == 1);
    CHECK(stream_rx_close(&rx, l, 8) == 1 && l[0].burst == 0 && l[0].lost == 2);
    CHECK(rx.received == 2 && rx.duplicates == 4 && rx.lost == 2);
    /* the largest burst: every index has its bit */
    stream_rx_init(&rx, 7, FW_STREAM_MAX_BURST, 200000, 250000);
    for (uint32_t i = 0; i < FW_STREAM_MAX_BURST; i++) {
        feed_idx(&rx, 0, (uint16_t)i, i, 1000, l);
        feed_idx(&rx, 0, (uint16_t)i, i, 1000, l);
    }
    CHECK(rx.received == FW_STREAM_MAX_BURST && rx.duplicates == FW_STREAM_MAX_BURST && rx.outoforder == 0);
    CHECK(stream_rx_close(&rx, l, 8) == 0 && rx.lost == 0);
}

/* Random arrivals (loss, duplicates, reordering across bursts, stale and invalid packets): every
 * packet is exactly one of received, duplicate, stale or invalid, and once closed the bursts'
 * packets are exactly received or lost. */
static void test_invariants(void)
{
    uint32_t x = 12345u;
    unsigned bad = 0;
    bool seen_stale = false;
    bool seen_dup = false;
    for (int run = 0; run < 200; run++) {
        struct stream_rx rx;
        struct stream_burst_loss l[8];
        uint32_t size = 1u + (x = x * 1103515245u + 12345u) % 40u;
        stream_rx_init(&rx, 7, size, 1000, 500);
        uint64_t fed = 0;
        uint64_t listed = 0;
        uint32_t burst = (x >> 8) % 3u;
        for (int i = 0; i < 2000; i++) {
            x = x * 1103515245u + 12345u;
            uint32_t r = x >> 8;
            if (r % 50u == 0) {
                burst += 1u + (r >> 8) % 12u; /* a jump: bursts lost entirely */
            } else if (r % 7u == 0) {
                burst++;
            }
            uint32_t back = (r >> 4) % 6u == 0 ? 1u + (r >> 12) % 6u : 0u; /* a straggler, maybe stale */
            uint32_t b = burst - (back < burst ? back : burst);
            uint16_t index = (uint16_t)((r >> 16) % (size + 1u)); /* size itself: invalid */
            struct stream_pkt p = {7, index, b, b * size + index, 0};
            listed += stream_rx_account(&rx, &p, (uint64_t)i * 100u, l, 8);
            fed++;
        }
        listed += stream_rx_close(&rx, l, 8);
        bad += rx.received + rx.duplicates + rx.stale + rx.invalid != fed;
        bad += rx.received + rx.lost != (uint64_t)size * ((uint64_t)rx.cur_burst + 1u);
        bad += listed + rx.losses_capped != rx.lossy_bursts;
        seen_stale |= rx.stale > 0;
        seen_dup |= rx.duplicates > 0 && rx.outoforder > 0 && rx.invalid > 0;
    }
    CHECK(bad == 0);
    CHECK(seen_stale && seen_dup);
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

    test_window();
    test_many_losses();
    test_duplicates();
    test_invariants();
    return check_summary("test_stream_wire");
}
