/*
 * iperf_wire.h - the iperf 2 UDP wire format (as spoken by iperf 2.0.x/2.1.x), pure functions.
 *
 * Every UDP datagram starts with a 16-byte header in network byte order:
 *   u32 id (sequence number, low 32 bits) | u32 tv_sec | u32 tv_usec | u32 id2 (high 32 bits)
 * A client may follow it with a client header whose first word is a flags bitmap; iperf 2.1
 * sets HEADER_SEQNO64B there when id2 carries the upper sequence bits. The client ends a test
 * with datagrams carrying the negated next sequence number (the "FIN") and waits for the server
 * to answer with the 16-byte header followed by a server report (iperf_server_report).
 */
#ifndef IPERF_WIRE_H
#define IPERF_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPERF_UDP_HDR_LEN 16u
#define IPERF_FLAG_VERSION1 0x80000000u
#define IPERF_FLAG_EXTEND 0x40000000u
#define IPERF_FLAG_UDPTESTS 0x20000000u
#define IPERF_FLAG_SEQNO64B 0x08000000u
#define IPERF_SERVER_REPORT_V1_LEN 40u  /* flags .. jitter2: ten 32-bit words */
#define IPERF_SERVER_REPORT_EXT_LEN 60u /* transit statistics, ignored here */
#define IPERF_SERVER_REPORT_EXT2_LEN 12u /* upper halves of the 64-bit counters */
#define IPERF_SERVER_REPLY_LEN (IPERF_UDP_HDR_LEN + IPERF_SERVER_REPORT_V1_LEN)

struct iperf_udp_hdr {
    int64_t seq;      /* negative: end of test (FIN) */
    uint64_t sent_us; /* sender's timestamp */
};

struct iperf_server_report {
    uint64_t total_bytes;
    uint64_t duration_us;
    uint64_t lost;
    uint64_t outoforder;
    uint64_t datagrams;
    uint64_t jitter_us;
};

/** Writes the 16-byte datagram header (sequence number split into id/id2). */
void iperf_udp_hdr_encode(uint8_t *buf, int64_t seq, uint64_t sent_us);

/**
 * Decodes a datagram header. With seq64 the sequence is id2:id, else the sign-extended 32-bit
 * id (id2 ignored). Returns false when len is shorter than the header.
 */
bool iperf_udp_hdr_decode(const uint8_t *buf, size_t len, bool seq64, struct iperf_udp_hdr *out);

/** True when the datagram's client header announces 64-bit sequence numbers. */
bool iperf_udp_uses_seq64(const uint8_t *buf, size_t len);

/** Writes the server's answer to a FIN: the FIN's own header, then a v1 server report.
 *  Returns the number of bytes written (IPERF_SERVER_REPLY_LEN), or 0 if size is too small. */
size_t iperf_server_reply_encode(uint8_t *buf, size_t size, const uint8_t *fin_hdr,
                                 const struct iperf_server_report *rep);

/** Decodes a server's answer to a FIN. Returns false unless it carries a v1 report. */
bool iperf_server_reply_decode(const uint8_t *buf, size_t len, struct iperf_server_report *out);

/* ---- Receiver-side accounting, as an iperf 2 server does it --------------------------------- */

struct iperf_udp_rx {
    bool started;
    bool seq64;
    bool finished;
    uint64_t first_us;
    uint64_t last_us;
    int64_t expected; /* next in-order sequence number */
    uint64_t bytes;
    uint64_t received;
    uint64_t lost;
    uint64_t outoforder;
    uint64_t sent_total; /* data datagrams the client sent, known from the FIN */
    int64_t prev_transit_us;
    bool have_transit;
    uint64_t jitter_x16; /* RFC 3550 jitter in microseconds, scaled by 16 */
    uint64_t seq_window; /* a datagram (or FIN) numbered more than this ahead of the highest sequence
                          * number seen is invalid (a forged or corrupted number, not loss); 0: no limit */
    uint64_t out_of_window; /* datagrams refused for that */
    uint8_t fin_hdr[IPERF_UDP_HDR_LEN];
};

enum iperf_rx_kind { IPERF_RX_INVALID, IPERF_RX_DATA, IPERF_RX_FIN };

/** A fresh accounting, its sequence window FW_IPERF_UDP_SEQ_WINDOW. */
void iperf_udp_rx_init(struct iperf_udp_rx *rx);

/** Accounts one received datagram arriving at now_us. */
enum iperf_rx_kind iperf_udp_rx_account(struct iperf_udp_rx *rx, const uint8_t *buf, size_t len,
                                        uint64_t now_us);

/** Fills a server report from the accounting so far. */
void iperf_udp_rx_report(const struct iperf_udp_rx *rx, struct iperf_server_report *rep);

#endif /* IPERF_WIRE_H */
