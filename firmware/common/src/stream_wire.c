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
    rx->burst_size = burst_size < FW_STREAM_MAX_BURST ? burst_size : FW_STREAM_MAX_BURST;
    rx->period_us = period_us;
    rx->threshold_us = threshold_us;
}

/* The losses found by one call: written while there is room, counted in any case. */
struct loss_out {
    struct stream_burst_loss *losses;
    unsigned max;
    unsigned n;
};

static void note_loss(struct stream_rx *rx, struct loss_out *out, uint32_t burst, uint32_t lost)
{
    rx->lost += lost;
    rx->lossy_bursts++;
    if (out->n < out->max) {
        out->losses[out->n].burst = burst;
        out->losses[out->n].lost = lost;
        out->n++;
    } else {
        rx->losses_capped++;
    }
}

/* `count` bursts from `first` on that never saw a packet: each lost in full. */
static void note_unseen(struct stream_rx *rx, struct loss_out *out, uint64_t first, uint64_t count)
{
    uint64_t listed = out->max - out->n < count ? out->max - out->n : count;
    for (uint64_t i = 0; i < listed; i++) {
        note_loss(rx, out, (uint32_t)(first + i), rx->burst_size);
    }
    rx->lost += (count - listed) * rx->burst_size;
    rx->lossy_bursts += count - listed;
    rx->losses_capped += count - listed;
}

static unsigned slot_of(uint64_t burst)
{
    return (unsigned)(burst % FW_STREAM_RX_WINDOW);
}

static void open_burst(struct stream_rx *rx, uint64_t burst)
{
    unsigned s = slot_of(burst);
    rx->count[s] = 0;
    memset(rx->seen[s], 0, sizeof rx->seen[s]);
}

/* Closes the open bursts before `end` (all of them: end = cur_burst + 1). */
static void close_open(struct stream_rx *rx, struct loss_out *out, uint64_t end)
{
    uint64_t last = (uint64_t)rx->cur_burst + 1u;
    for (uint64_t b = rx->base_burst; b < end && b < last; b++) {
        uint32_t got = rx->count[slot_of(b)];
        if (got < rx->burst_size) {
            note_loss(rx, out, (uint32_t)b, rx->burst_size - got);
        }
    }
}

/* The window moves up to `burst` (above cur_burst): bursts that fall out of it close. */
static void advance(struct stream_rx *rx, struct loss_out *out, uint32_t burst)
{
    uint64_t base = burst >= FW_STREAM_RX_WINDOW - 1u ? (uint64_t)burst - (FW_STREAM_RX_WINDOW - 1u) : 0;
    uint64_t first_new = (uint64_t)rx->cur_burst + 1u;
    if (base > rx->base_burst) {
        close_open(rx, out, base);
        if (base > first_new) {
            note_unseen(rx, out, first_new, base - first_new); /* skipped entirely, now out of reach */
        }
        rx->base_burst = (uint32_t)base;
    }
    for (uint64_t b = first_new > base ? first_new : base; b <= burst; b++) {
        open_burst(rx, b);
    }
    rx->cur_burst = burst;
}

unsigned stream_rx_account(struct stream_rx *rx, const struct stream_pkt *p, uint64_t now_us,
                           struct stream_burst_loss *losses, unsigned max_losses)
{
    struct loss_out out = {losses, max_losses, 0};
    if (rx->closed) {
        return 0;
    }
    if (p->index >= rx->burst_size) {
        rx->invalid++;
        return 0;
    }
    if (!rx->started) {
        rx->started = true;
        uint64_t offset = (uint64_t)p->burst * rx->period_us;
        rx->t0_us = now_us > offset ? now_us - offset : 0;
        /* bursts out of the window's reach before the first one seen were lost entirely; the
         * window's earlier ones may still see stragglers */
        uint32_t base = p->burst >= FW_STREAM_RX_WINDOW - 1u ? p->burst - (FW_STREAM_RX_WINDOW - 1u) : 0;
        note_unseen(rx, &out, 0, base);
        rx->base_burst = base;
        rx->cur_burst = p->burst;
        for (uint64_t b = base; b <= p->burst; b++) {
            open_burst(rx, b);
        }
    } else if (p->burst > rx->cur_burst) {
        advance(rx, &out, p->burst);
    } else if (p->burst < rx->base_burst) {
        rx->stale++; /* its burst closed already, this packet counted lost then */
        return out.n;
    }
    unsigned s = slot_of(p->burst);
    uint32_t bit = (uint32_t)1u << (p->index % 32u);
    if ((rx->seen[s][p->index / 32u] & bit) != 0) {
        rx->duplicates++;
        return out.n;
    }
    rx->seen[s][p->index / 32u] |= bit;
    rx->count[s]++;
    rx->received++;
    if (p->seq >= rx->next_seq) {
        rx->next_seq = (uint64_t)p->seq + 1u;
    } else {
        rx->outoforder++;
    }
    /* late: after t0 + burst x period + threshold (the sum stays below 2^64 for any u32 burst) */
    if (now_us > rx->t0_us && now_us - rx->t0_us > (uint64_t)p->burst * rx->period_us + rx->threshold_us) {
        rx->late++;
    }
    return out.n;
}

unsigned stream_rx_close(struct stream_rx *rx, struct stream_burst_loss *losses, unsigned max_losses)
{
    struct loss_out out = {losses, max_losses, 0};
    if (rx->started && !rx->closed) {
        close_open(rx, &out, (uint64_t)rx->cur_burst + 1u);
    }
    rx->closed = true;
    return out.n;
}
