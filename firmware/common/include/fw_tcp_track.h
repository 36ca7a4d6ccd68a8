/*
 * fw_tcp_track.h - the stack's TCP segments counted where lwIP has no counter of its own: segments
 * it sent again (retransmissions, by RTO or fast retransmit alike: lwIP's MIB-2 counter sees only
 * the latter), and data segments it received away from the next expected byte (out of sequence:
 * ahead of it, a gap before them; or already received: a duplicate).
 *
 * Sent segments are read on the netif's IPv4 output (fw_netif_ethernet_setup wraps etharp_output),
 * per connection the highest sequence number sent so far; received ones in lwIP's
 * LWIP_HOOK_TCP_INPACKET_PCB (fw_lwip_hooks.h) against the connection's rcv_nxt.
 */
#ifndef FW_TCP_TRACK_H
#define FW_TCP_TRACK_H

#include <stdint.h>

#include "lwip/err.h"
#include "lwip/ip4_addr.h"

struct netif;
struct pbuf;

struct fw_tcp_track_counts {
    uint32_t retrans; /* segments sent again (data, SYN or FIN below the highest sequence sent) */
    uint32_t ooseq;   /* data segments received ahead of the next expected byte */
    uint32_t rx_dup;  /* data segments received that start before the next expected byte */
    uint32_t tx_segs; /* segments sent with data (retransmissions included) */
    uint32_t rx_segs; /* segments received with data (duplicates included) */
};

/** The counts since boot or the last fw_tcp_track_reset. */
struct fw_tcp_track_counts fw_tcp_track_counts(void);
void fw_tcp_track_reset(void);

/** netif->output: counts the TCP segment it carries, then hands it to etharp_output. */
err_t fw_tcp_track_output(struct netif *netif, struct pbuf *p, const ip4_addr_t *ipaddr);

/** Classifies one received segment of a sequence space whose next expected byte is rcv_nxt
 * (pure: the hook's arithmetic, tested on its own). */
void fw_tcp_track_received(uint32_t seqno, uint32_t len, uint32_t rcv_nxt);

/** Counts one sent segment of a connection (pure: the output wrapper's arithmetic). */
void fw_tcp_track_sent(uint32_t remote, uint16_t local_port, uint16_t remote_port, uint32_t seqno,
                       uint32_t seg_len, int syn);

#endif /* FW_TCP_TRACK_H */
