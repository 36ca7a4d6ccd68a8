/*
 * planted_defect.c - the host-planted build's deliberate defect (planted_defect.h): reachable from
 * the wire through tapif_poll, compiled into no other build.
 */
#include "planted_defect.h"

#define PLANTED_ETH_HLEN 14
#define PLANTED_BUF_SIZE 1500 /* one Ethernet MTU: what "normal" traffic never exceeds */

static uint8_t planted_ip_copy[PLANTED_BUF_SIZE];

uint8_t fw_planted_defect_inspect(const uint8_t *frame, size_t len)
{
    if (len < PLANTED_ETH_HLEN + 20 || frame[12] != 0x08 || frame[13] != 0x00) {
        return 0; /* not an untagged IPv4 frame with room for the fixed header */
    }
    const uint8_t *ip = frame + PLANTED_ETH_HLEN;
    size_t total = ((size_t)ip[2] << 8) | ip[3];
    /* THE DEFECT: the length comes from the wire; neither `len` nor sizeof planted_ip_copy bounds it.
     * Byte by byte, so the first access out of bounds is the write to planted_ip_copy[1500] (the
     * read of ip[1500], frame[1514], is still inside tapif_poll's 1518-byte receive buffer): ASan
     * reports a global-buffer-overflow WRITE here for any total length above 1500. */
    uint8_t *dst = planted_ip_copy; /* through a pointer: UBSan's array-bounds check stays out, ASan reports */
    for (size_t i = 0; i < total; i++) {
        dst[i] = ip[i];
    }
    return planted_ip_copy[9];
}
