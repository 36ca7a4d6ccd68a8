/* libFuzzer target: the iperf 2 decoders and the receiver accounting on arbitrary datagrams. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "iperf_wire.h"

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
    return 0;
}
