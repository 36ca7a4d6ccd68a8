#include "iperf_wire.h"

#include <string.h>

#include "fw_config.h"

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

void iperf_udp_hdr_encode(uint8_t *buf, int64_t seq, uint64_t sent_us)
{
    uint64_t useq = (uint64_t)seq;
    put_u32(buf + 0, (uint32_t)useq);
    put_u32(buf + 4, (uint32_t)(sent_us / 1000000u));
    put_u32(buf + 8, (uint32_t)(sent_us % 1000000u));
    put_u32(buf + 12, (uint32_t)(useq >> 32));
}

bool iperf_udp_hdr_decode(const uint8_t *buf, size_t len, bool seq64, struct iperf_udp_hdr *out)
{
    if (len < IPERF_UDP_HDR_LEN) {
        return false;
    }
    uint32_t id = get_u32(buf);
    if (seq64) {
        uint64_t useq = ((uint64_t)get_u32(buf + 12) << 32) | id;
        memcpy(&out->seq, &useq, sizeof out->seq);
    } else {
        out->seq = (int32_t)id;
    }
    uint32_t usec = get_u32(buf + 8);
    out->sent_us = (uint64_t)get_u32(buf + 4) * 1000000u + (usec < 1000000u ? usec : 999999u);
    return true;
}

bool iperf_udp_uses_seq64(const uint8_t *buf, size_t len)
{
    if (len < IPERF_UDP_HDR_LEN + 4u) {
        return false;
    }
    uint32_t flags = get_u32(buf + IPERF_UDP_HDR_LEN);
    bool has_header = (flags & (IPERF_FLAG_VERSION1 | IPERF_FLAG_EXTEND | IPERF_FLAG_UDPTESTS)) != 0;
    return has_header && (flags & IPERF_FLAG_SEQNO64B) != 0;
}

static uint32_t clamp32(uint64_t v)
{
    return v > 0x7fffffffu ? 0x7fffffffu : (uint32_t)v;
}

size_t iperf_server_reply_encode(uint8_t *buf, size_t size, const uint8_t *fin_hdr,
                                 const struct iperf_server_report *rep)
{
    if (size < IPERF_SERVER_REPLY_LEN) {
        return 0;
    }
    memcpy(buf, fin_hdr, IPERF_UDP_HDR_LEN);
    uint8_t *p = buf + IPERF_UDP_HDR_LEN;
    put_u32(p + 0, IPERF_FLAG_VERSION1);
    put_u32(p + 4, (uint32_t)(rep->total_bytes >> 32));
    put_u32(p + 8, (uint32_t)rep->total_bytes);
    put_u32(p + 12, clamp32(rep->duration_us / 1000000u));
    put_u32(p + 16, (uint32_t)(rep->duration_us % 1000000u));
    put_u32(p + 20, clamp32(rep->lost));
    put_u32(p + 24, clamp32(rep->outoforder));
    put_u32(p + 28, clamp32(rep->datagrams));
    put_u32(p + 32, clamp32(rep->jitter_us / 1000000u));
    put_u32(p + 36, (uint32_t)(rep->jitter_us % 1000000u));
    return IPERF_SERVER_REPLY_LEN;
}

bool iperf_server_reply_decode(const uint8_t *buf, size_t len, struct iperf_server_report *out)
{
    if (len < IPERF_SERVER_REPLY_LEN) {
        return false;
    }
    const uint8_t *p = buf + IPERF_UDP_HDR_LEN;
    uint32_t flags = get_u32(p);
    if ((flags & IPERF_FLAG_VERSION1) == 0) {
        return false;
    }
    uint32_t usec = get_u32(p + 16);
    uint32_t jusec = get_u32(p + 36);
    if (usec >= 1000000u || jusec >= 1000000u) {
        return false;
    }
    out->total_bytes = ((uint64_t)get_u32(p + 4) << 32) | get_u32(p + 8);
    out->duration_us = (uint64_t)get_u32(p + 12) * 1000000u + usec;
    out->lost = get_u32(p + 20);
    out->outoforder = get_u32(p + 24);
    out->datagrams = get_u32(p + 28);
    out->jitter_us = (uint64_t)get_u32(p + 32) * 1000000u + jusec;
    size_t ext2 = IPERF_SERVER_REPLY_LEN + IPERF_SERVER_REPORT_EXT_LEN;
    if ((flags & IPERF_FLAG_SEQNO64B) != 0 && len >= ext2 + IPERF_SERVER_REPORT_EXT2_LEN) {
        out->lost |= (uint64_t)get_u32(buf + ext2) << 32;
        out->outoforder |= (uint64_t)get_u32(buf + ext2 + 4) << 32;
        out->datagrams |= (uint64_t)get_u32(buf + ext2 + 8) << 32;
    }
    return true;
}

void iperf_udp_rx_init(struct iperf_udp_rx *rx)
{
    memset(rx, 0, sizeof *rx);
    rx->expected = 1; /* iperf 2 clients number datagrams from 1 */
    rx->seq_window = FW_IPERF_UDP_SEQ_WINDOW;
}

static void account_jitter(struct iperf_udp_rx *rx, uint64_t sent_us, uint64_t now_us)
{
    int64_t transit = (int64_t)(now_us - sent_us);
    if (rx->have_transit) {
        int64_t d = transit - rx->prev_transit_us;
        uint64_t ad = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
        if (ad > 60000000u) {
            ad = 60000000u; /* a clock jump is not jitter */
        }
        /* J += (|D| - J) / 16, with J kept scaled by 16 (RFC 3550, A.8) */
        rx->jitter_x16 = rx->jitter_x16 + ad - ((rx->jitter_x16 + 8u) >> 4);
    }
    rx->prev_transit_us = transit;
    rx->have_transit = true;
}

/* Whether datagram number `seq` (> 0) lies beyond the window ahead of the highest number seen
 * (expected - 1): a single forged or corrupted number must not turn into billions of lost datagrams. */
static bool beyond_window(const struct iperf_udp_rx *rx, int64_t seq)
{
    return rx->seq_window != 0 && seq >= rx->expected && (uint64_t)(seq - rx->expected) >= rx->seq_window;
}

enum iperf_rx_kind iperf_udp_rx_account(struct iperf_udp_rx *rx, const uint8_t *buf, size_t len,
                                        uint64_t now_us)
{
    struct iperf_udp_hdr hdr;
    if (!rx->started) {
        rx->seq64 = iperf_udp_uses_seq64(buf, len);
    }
    if (!iperf_udp_hdr_decode(buf, len, rx->seq64, &hdr)) {
        return IPERF_RX_INVALID;
    }
    if (hdr.seq == INT64_MIN || hdr.seq == INT64_MAX) {
        return IPERF_RX_INVALID;
    }
    if (hdr.seq < 0) {
        if (!rx->started) {
            return IPERF_RX_INVALID; /* a FIN of a test we never saw */
        }
        if (!rx->finished) {
            uint64_t sent = (uint64_t)(-hdr.seq) - 1u;
            if (sent > 0 && beyond_window(rx, (int64_t)sent)) {
                rx->out_of_window++;
                return IPERF_RX_INVALID; /* a FIN claiming far more than was ever seen */
            }
            rx->finished = true;
            rx->last_us = now_us;
            rx->sent_total = sent;
            if ((int64_t)sent >= rx->expected) {
                rx->lost += sent - (uint64_t)rx->expected + 1u; /* trailing datagrams never arrived */
                rx->expected = (int64_t)sent + 1;
            }
            memcpy(rx->fin_hdr, buf, IPERF_UDP_HDR_LEN);
        }
        return IPERF_RX_FIN;
    }
    if (rx->finished) {
        return IPERF_RX_INVALID; /* data after the end of the test */
    }
    if (beyond_window(rx, hdr.seq)) {
        rx->out_of_window++;
        return IPERF_RX_INVALID;
    }
    if (!rx->started) {
        rx->started = true;
        rx->first_us = now_us;
    }
    rx->last_us = now_us;
    rx->bytes += len;
    rx->received++;
    if (hdr.seq == rx->expected) {
        rx->expected++;
    } else if (hdr.seq > rx->expected) {
        rx->lost += (uint64_t)(hdr.seq - rx->expected);
        rx->expected = hdr.seq + 1;
    } else {
        rx->outoforder++;
        if (rx->lost > 0) {
            rx->lost--;
        }
    }
    account_jitter(rx, hdr.sent_us, now_us);
    return IPERF_RX_DATA;
}

void iperf_udp_rx_report(const struct iperf_udp_rx *rx, struct iperf_server_report *rep)
{
    rep->total_bytes = rx->bytes;
    rep->duration_us = rx->started ? rx->last_us - rx->first_us : 0;
    rep->lost = rx->lost;
    rep->outoforder = rx->outoforder;
    rep->datagrams = rx->received + rx->lost;
    rep->jitter_us = rx->jitter_x16 >> 4;
}
