#include "fw_tcp_track.h"

#include <stdbool.h>
#include <string.h>

#include "fw_config.h"
#include "fw_lwip_hooks.h"
#include "lwip/def.h"
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/tcp.h"

#define SEQ_LT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)

struct flow {
    bool used;
    uint32_t remote;
    uint16_t local_port;
    uint16_t remote_port;
    uint32_t snd_max; /* one past the highest sequence number sent */
    uint32_t last_use;
};

static struct flow flows[FW_TCP_TRACK_FLOWS];
static uint32_t use_clock;
static struct fw_tcp_track_counts counts;

struct fw_tcp_track_counts fw_tcp_track_counts(void)
{
    return counts;
}

void fw_tcp_track_reset(void)
{
    memset(&counts, 0, sizeof counts);
}

static struct flow *flow_for(uint32_t remote, uint16_t local_port, uint16_t remote_port, bool *fresh)
{
    struct flow *oldest = &flows[0];
    for (size_t i = 0; i < FW_TCP_TRACK_FLOWS; i++) {
        struct flow *f = &flows[i];
        if (f->used && f->remote == remote && f->local_port == local_port && f->remote_port == remote_port) {
            *fresh = false;
            return f;
        }
        if (!f->used || (oldest->used && f->last_use < oldest->last_use)) {
            oldest = f;
        }
    }
    *fresh = true; /* the least recently used entry makes room: its connection is forgotten */
    *oldest = (struct flow){true, remote, local_port, remote_port, 0, 0};
    return oldest;
}

void fw_tcp_track_sent(uint32_t remote, uint16_t local_port, uint16_t remote_port, uint32_t seqno,
                       uint32_t seg_len, int syn)
{
    if (seg_len == 0) { /* a pure ACK, a keepalive: no sequence space */
        return;
    }
    bool fresh;
    struct flow *f = flow_for(remote, local_port, remote_port, &fresh);
    f->last_use = ++use_clock;
    uint32_t end = seqno + seg_len;
    if (syn && (fresh || end != f->snd_max)) { /* a new connection's first SYN: its own sequence space */
        f->snd_max = end;
        return;
    }
    if (!fresh && SEQ_LT(seqno, f->snd_max)) {
        counts.retrans++;
    }
    if (fresh || SEQ_LT(f->snd_max, end)) {
        f->snd_max = end;
    }
}

void fw_tcp_track_received(uint32_t seqno, uint32_t len, uint32_t rcv_nxt)
{
    counts.rx_segs += len > 0 ? 1u : 0u;
    if (len == 0 || seqno == rcv_nxt) {
        return;
    }
    if (SEQ_LT(rcv_nxt, seqno)) {
        counts.ooseq++;
    } else {
        counts.rx_dup++;
    }
}

err_t fw_tcp_track_output(struct netif *netif, struct pbuf *p, const ip4_addr_t *ipaddr)
{
    struct ip_hdr iph; /* copies: the headers in the pbuf need not be aligned for the structs */
    if (pbuf_copy_partial(p, &iph, sizeof iph, 0) == sizeof iph && IPH_V(&iph) == 4 &&
        IPH_PROTO(&iph) == IP_PROTO_TCP) {
        const struct ip_hdr *ip = &iph;
        uint16_t ihl = (uint16_t)(IPH_HL(ip) * 4u);
        uint16_t total = lwip_ntohs(IPH_LEN(ip));
        struct tcp_hdr tcp;
        if (ihl >= IP_HLEN && pbuf_copy_partial(p, &tcp, sizeof tcp, ihl) == sizeof tcp) {
            uint16_t thl = (uint16_t)(TCPH_HDRLEN_BYTES(&tcp));
            uint8_t flags = (uint8_t)TCPH_FLAGS(&tcp);
            if (total >= ihl + thl) {
                uint32_t payload = (uint32_t)(total - ihl - thl);
                uint32_t len = payload + ((flags & (TCP_SYN | TCP_FIN)) ? 1u : 0u);
                counts.tx_segs += payload > 0 ? 1u : 0u;
                fw_tcp_track_sent(ip4_addr_get_u32(&ip->dest), lwip_ntohs(tcp.src), lwip_ntohs(tcp.dest),
                                  lwip_ntohl(tcp.seqno), len, (flags & TCP_SYN) != 0);
            }
        }
    }
    return etharp_output(netif, p, ipaddr);
}

err_t fw_tcp_track_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, struct pbuf *p)
{
    /* lwIP has turned the header to host order and p to the segment's data; a listening pcb is a
     * smaller struct (tcp_pcb_listen) with no rcv_nxt, a SYN_SENT one has none yet */
    if (pcb->state == LISTEN || pcb->state == SYN_SENT || pcb->state == CLOSED) {
        return ERR_OK;
    }
    fw_tcp_track_received(hdr->seqno, p->tot_len, pcb->rcv_nxt);
    return ERR_OK;
}
