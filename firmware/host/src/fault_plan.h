/*
 * fault_plan.h - the planted defects of the host port's `fault` command (fault_inject.h), as pure
 * decisions without I/O: which defects there are, their limits, the every-Nth choice of the
 * frames a ppm defect hits, and which frames are pure TCP acknowledgements.
 *
 * A planted defect is the suite's own test equipment: it makes this firmware a defective DUT on
 * purpose (slower, lossy, late) so the suite's verdicts can be shown to fail it. None is active
 * until the console plants it; a restart clears them all.
 */
#ifndef FAULT_PLAN_H
#define FAULT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fault_id {
    FAULT_TX_WORK_US,     /* CPU spent (busy) per frame sent */
    FAULT_RX_WORK_US,     /* CPU spent (busy) per frame received */
    FAULT_TX_DROP_PPM,    /* frames to send dropped, counted as sent */
    FAULT_RX_DROP_PPM,    /* frames received dropped, counted as received, never delivered */
    FAULT_RX_REORDER_PPM, /* a received frame delivered after the next FAULT_REORDER_DISTANCE */
    FAULT_STALL_MS,       /* the whole firmware stops this long ... */
    FAULT_STALL_EVERY_MS, /* ... once per this period */
    FAULT_ACK_DELAY_US,   /* pure TCP ACKs sent held this long */
    FAULT_ACK_DROP_PPM,   /* pure TCP ACKs dropped, sent and received (each way's own count) */
    FAULT_LATENCY_US,     /* every frame sent held this long */
    FAULT_TX_CLUMP_US,    /* frames to send held and sent together at the end of a window this long */
    FAULT_UDP_RATE_PCT,   /* the UDP client paces at this share of the asked rate (0: as asked) */
    FAULT_LEAK_PER_TEST,  /* receive-pool buffers never freed, per iperf test ended */
    FAULT_COUNT
};

struct fault_def {
    const char *name;
    uint32_t max;     /* the largest value the command takes */
    const char *what; /* for `help` and the reply's documentation */
};

extern const struct fault_def fault_defs[FAULT_COUNT];

/** The id of a defect's name, or -1. */
int fault_find(const char *name);

/**
 * The every-Nth choice of a ppm defect: adds `ppm` to the accumulator and says whether this frame
 * is hit (each millionth of the accumulated share hits one frame). Deterministic: exactly
 * ppm / 1e6 of the frames, evenly spread; 0 never hits.
 */
bool fault_ppm_hit(uint32_t *acc, uint32_t ppm);

/**
 * Whether an Ethernet frame is a pure TCP acknowledgement: untagged IPv4, TCP, no payload, and of
 * the flags only ACK (a SYN, FIN, RST or data segment is not one).
 */
bool fault_is_pure_tcp_ack(const uint8_t *frame, size_t len);

#endif /* FAULT_PLAN_H */
