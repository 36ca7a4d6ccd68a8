/* libFuzzer target: the iperf 2 and stream decoders and their receiver accounting on arbitrary datagrams. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "iperf_wire.h"
#include "stream_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct iperf_udp_hdr h;
    struct iperf_server_report r;
    (void)iperf_udp_hdr_decode(data, size, false, &h);
    (void)iperf_udp_hdr_decode(data, size, true, &h);
    (void)iperf_udp_uses_seq64(data, size);
    if (iperf_server_reply_decode(data, size, &r)) {
        uint8_t out[IPERF_SERVER_REPLY_LEN];
        (void)iperf_server_reply_encode(out, sizeof out, data, &r);
    }
    /* split the input into a train of datagrams of varying length */
    struct iperf_udp_rx rx;
    iperf_udp_rx_init(&rx);
    size_t off = 0;
    uint64_t now = 0;
    while (off < size) {
        size_t len = 1u + data[off] % 40u;
        if (len > size - off) {
            len = size - off;
        }
        now += data[off];
        if (iperf_udp_rx_account(&rx, data + off, len, now) == IPERF_RX_FIN) {
            iperf_udp_rx_report(&rx, &r);
        }
        off += len;
    }
    iperf_udp_rx_report(&rx, &r);

    struct stream_rx srx;
    struct stream_burst_loss losses[8];
    stream_rx_init(&srx, 1, size > 0 ? 1u + data[0] % 50u : 4u, 200000, 250000);
    for (off = 0; off + STREAM_HDR_LEN <= size; off += STREAM_HDR_LEN) {
        struct stream_pkt p;
        if (stream_pkt_decode(data + off, STREAM_HDR_LEN, &p)) {
            (void)stream_rx_account(&srx, &p, off * 1000u, losses, 8);
        }
        uint8_t buf[STREAM_HDR_LEN];
        struct stream_pkt q = {(uint16_t)off, 0, (uint32_t)off, (uint32_t)off, off};
        stream_pkt_encode(buf, &q);
        struct stream_pkt back;
        if (!stream_pkt_decode(buf, sizeof buf, &back) || back.seq != q.seq) {
            __builtin_trap();
        }
        (void)stream_rx_account(&srx, &back, off * 1000u, losses, 8);
    }
    return 0;
}
