#include "stream_wire.h"

#include <string.h>

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
    put16(b, (uint16_t)(v >> 16));
    put16(b + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)(((unsigned)b[0] << 8) | b[1]);
}

static uint32_t get32(const uint8_t *b)
{
    return ((uint32_t)get16(b) << 16) | get16(b + 2);
}

void stream_pkt_encode(uint8_t *buf, const struct stream_pkt *p)
{
    put32(buf, STREAM_MAGIC);
    put16(buf + 4, p->id);
    put16(buf + 6, p->index);
    put32(buf + 8, p->burst);
    put32(buf + 12, p->seq);
    put32(buf + 16, (uint32_t)(p->sent_us >> 32));
    put32(buf + 20, (uint32_t)p->sent_us);
}

bool stream_pkt_decode(const uint8_t *buf, size_t len, struct stream_pkt *p)
{
    if (len < STREAM_HDR_LEN || get32(buf) != STREAM_MAGIC) {
        return false;
    }
    p->id = get16(buf + 4);
    p->index = get16(buf + 6);
    p->burst = get32(buf + 8);
    p->seq = get32(buf + 12);
    p->sent_us = ((uint64_t)get32(buf + 16) << 32) | get32(buf + 20);
    return true;
}

void stream_rx_init(struct stream_rx *rx, uint16_t id, uint32_t burst_size, uint64_t period_us,
                    uint64_t threshold_us)
{
    memset(rx, 0, sizeof *rx);
    rx->id = id;
    rx->burst_size = burst_size;
    rx->period_us = period_us;
    rx->threshold_us = threshold_us;
}

unsigned stream_rx_account(struct stream_rx *rx, const struct stream_pkt *p, uint64_t now_us,
                           struct stream_burst_loss *losses, unsigned max_losses)
{
    unsigned n = 0;
    if (!rx->started) {
        rx->started = true;
        uint64_t offset = (uint64_t)p->burst * rx->period_us;
        rx->t0_us = now_us > offset ? now_us - offset : 0;
        rx->cur_burst = p->burst;
        /* bursts before the first one seen were lost entirely */
        for (uint32_t b = 0; b < p->burst && n < max_losses; b++) {
            losses[n].burst = b;
            losses[n].lost = rx->burst_size;
            n++;
        }
    }
    rx->received++;
    if (p->seq + 1u > rx->next_seq) {
        rx->next_seq = p->seq + 1u;
    } else {
        rx->outoforder++;
    }
    uint64_t due = rx->t0_us + (uint64_t)p->burst * rx->period_us + rx->threshold_us;
    if (now_us > due) {
        rx->late++;
    }
    if (p->burst == rx->cur_burst) {
        rx->cur_count++;
    } else if (p->burst > rx->cur_burst) {
        /* the current burst is over: report it and any bursts skipped entirely */
        if (rx->cur_count < rx->burst_size && n < max_losses) {
            losses[n].burst = rx->cur_burst;
            losses[n].lost = rx->burst_size - rx->cur_count;
            n++;
        }
        for (uint32_t b = rx->cur_burst + 1u; b < p->burst && n < max_losses; b++) {
            losses[n].burst = b;
            losses[n].lost = rx->burst_size;
            n++;
        }
        rx->cur_burst = p->burst;
        rx->cur_count = 1;
    }
    /* a packet of an earlier burst arriving late is counted, not tallied */
    return n;
}
