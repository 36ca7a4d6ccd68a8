/*
 * stream_wire.h - the packet of the bursty multi-stream UDP test and its receiver accounting,
 * pure functions shared by the firmware's `stream` command (and mirrored by the PC side).
 *
 * Packet (network byte order): u32 magic 'HILS' | u16 stream id | u16 index in burst |
 * u32 burst number | u32 sequence number | u64 send time (us, sender's clock) | zero padding.
 */
#ifndef STREAM_WIRE_H
#define STREAM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STREAM_MAGIC 0x48494C53u
#define STREAM_HDR_LEN 24u

struct stream_pkt {
    uint16_t id;
    uint16_t index;
    uint32_t burst;
    uint32_t seq;
    uint64_t sent_us;
};

void stream_pkt_encode(uint8_t *buf, const struct stream_pkt *p);
bool stream_pkt_decode(const uint8_t *buf, size_t len, struct stream_pkt *p);

/* Receiver accounting of one stream. */
struct stream_rx {
    uint16_t id;
    uint32_t burst_size;
    uint64_t period_us;
    uint64_t threshold_us;
    bool started;
    uint64_t t0_us;          /* arrival reference: when burst 0 would have arrived */
    uint32_t next_seq;       /* one past the highest sequence number seen */
    uint64_t received;
    uint64_t outoforder;
    uint64_t late;
    uint32_t cur_burst;      /* burst being tallied */
    uint32_t cur_count;      /* its packets so far */
};

/* A burst that ended with fewer packets than its size (reported as it happens). */
struct stream_burst_loss {
    uint32_t burst;
    uint32_t lost;
};

void stream_rx_init(struct stream_rx *rx, uint16_t id, uint32_t burst_size, uint64_t period_us,
                    uint64_t threshold_us);

/** Accounts one packet; when it closes earlier incomplete bursts, writes up to max_losses of
 *  them into losses and returns how many. */
unsigned stream_rx_account(struct stream_rx *rx, const struct stream_pkt *p, uint64_t now_us,
                           struct stream_burst_loss *losses, unsigned max_losses);

#endif /* STREAM_WIRE_H */
