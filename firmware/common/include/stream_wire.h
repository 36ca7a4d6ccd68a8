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

#include "fw_config.h"

#define STREAM_MAGIC 0x48494C53u
#define STREAM_HDR_LEN 24u
#define STREAM_RX_SEEN_WORDS ((FW_STREAM_MAX_BURST + 31u) / 32u)

struct stream_pkt {
    uint16_t id;
    uint16_t index;
    uint32_t burst;
    uint32_t seq;
    uint64_t sent_us;
};

void stream_pkt_encode(uint8_t *buf, const struct stream_pkt *p);
bool stream_pkt_decode(const uint8_t *buf, size_t len, struct stream_pkt *p);

/*
 * Receiver accounting of one stream. Every packet names its burst and its index in the burst;
 * the receiver tallies the last FW_STREAM_RX_WINDOW bursts in bitmaps of their indexes, so a
 * packet whose (burst, index) already arrived is a duplicate, counted apart and never received,
 * and a packet that arrives after later ones (reordered, up to the window's bursts late) still
 * counts in its own burst. A burst closes once a packet FW_STREAM_RX_WINDOW bursts later
 * arrives (or at the end, stream_rx_close): its missing packets are lost, final. Bursts skipped
 * entirely are closed as lost in full, however many (counted, not walked one by one).
 *
 * Exact figures: received + lost = burst_size x (last_burst + 1) once closed; every packet
 * accounted is exactly one of received, duplicate, stale or invalid.
 */
struct stream_rx {
    uint16_t id;
    uint32_t burst_size;
    uint64_t period_us;
    uint64_t threshold_us;
    bool started;
    bool closed;             /* stream_rx_close ran: nothing more is accounted */
    uint64_t t0_us;          /* arrival reference: when burst 0 would have arrived */
    uint64_t next_seq;       /* one past the highest sequence number received */
    uint64_t received;       /* distinct packets, each tallied in its burst */
    uint64_t outoforder;     /* of those, arrived after a higher sequence number (reordered) */
    uint64_t late;           /* of those, arrived after their burst's time + threshold */
    uint64_t duplicates;     /* packets whose (burst, index) had arrived already: not received */
    uint64_t stale;          /* packets of a burst already closed (and counted lost): not received */
    uint64_t invalid;        /* packets with an index outside the burst: not received */
    uint64_t lost;           /* packets missing from the closed bursts */
    uint64_t lossy_bursts;   /* closed bursts with packets missing */
    uint64_t losses_capped;  /* of those, the ones left out of the caller's losses array (no room) */
    uint32_t cur_burst;      /* the highest burst seen (the newest open one) */
    uint32_t base_burst;     /* the oldest open burst: [base_burst, cur_burst] are tallied */
    uint32_t count[FW_STREAM_RX_WINDOW]; /* packets received of burst b, at b % FW_STREAM_RX_WINDOW */
    uint32_t seen[FW_STREAM_RX_WINDOW][STREAM_RX_SEEN_WORDS]; /* its indexes received */
};

/* A burst that closed with fewer packets than its size (reported as it happens). */
struct stream_burst_loss {
    uint32_t burst;
    uint32_t lost;
};

/** burst_size is capped at FW_STREAM_MAX_BURST (the bitmaps' size). */
void stream_rx_init(struct stream_rx *rx, uint16_t id, uint32_t burst_size, uint64_t period_us,
                    uint64_t threshold_us);

/** Accounts one packet. Every lossy burst it closes is counted (lost, lossy_bursts); up to
 *  max_losses of them are written into losses (the number is returned), the rest counted in
 *  losses_capped. */
unsigned stream_rx_account(struct stream_rx *rx, const struct stream_pkt *p, uint64_t now_us,
                           struct stream_burst_loss *losses, unsigned max_losses);

/** The end of the run: closes the open bursts as stream_rx_account does (0 when never started
 *  or closed already). */
unsigned stream_rx_close(struct stream_rx *rx, struct stream_burst_loss *losses, unsigned max_losses);

#endif /* STREAM_WIRE_H */
