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
    /* a guard against hostile traffic switched off (1), its defect back (fw_fault_hooks.h, fw_guard) */
    FAULT_TRUST_PING_REPLIES,  /* ping counts a reply whatever its checksum and payload */
    FAULT_ANSWER_ANY_FIN,      /* a finished UDP server answers anyone's FIN with its report */
    FAULT_KEEP_FIRST_SENDER,   /* a UDP server's test stays with its first sender, silent or not */
    FAULT_TRUST_UDP_SEQ,       /* a UDP server takes any sequence number as data (a jump is loss) */
    FAULT_HOLD_HALF_OPEN,      /* half-open TCP connections neither make room nor are reaped (20 s) */
    FAULT_KEEP_SILENT_CLIENTS, /* a TCP server's connection is the test from its accept, bytes or not */
    FAULT_WAIT_CLOSED_WINDOW,  /* the TCP client waits on a peer that stopped reading */
    FAULT_TRUST_ARP_CHANGES,   /* any ARP packet naming a known address re-points its ARP entry */
    FAULT_FDB_NEVER_MOVES,      /* a learned address never moves to another bridge port until it ages out */
    FAULT_EVICT_ARP_FOR_SYN,   /* every SYN from an unresolved address answered: its ARP entry evicts a stable one */
    FAULT_TAKE_DATA_ACKING_UNSENT, /* a segment acknowledging data never sent still delivers its data */
    FAULT_COUNT
};

struct fault_def {
    const char *name;
    uint32_t max;     /* the largest value the command takes */
    const char *what; /* for `help` and the reply's documentation */
};

/** The guard (fw_fault_hooks.h, enum fw_guard) a defect switches off; FW_GUARD_COUNT: none, the
 *  defect is one of its own. */
int fault_guard(int id);

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
