/* fw_lwip_hooks.h - lwIP's hooks of the test firmware (LWIP_HOOK_FILENAME): a SYN to a listener
 * makes room among half-open connections, or is dropped when it comes from an on-link address
 * without an ARP entry beyond the budget (fw_tcp_guard.h), then the received segment's place in
 * its connection's sequence space (fw_tcp_track.h). */
#ifndef FW_LWIP_HOOKS_H
#define FW_LWIP_HOOKS_H

#include "lwip/err.h"

struct tcp_pcb;
struct tcp_hdr;
struct pbuf;

err_t fw_tcp_guard_inpacket(struct tcp_pcb *pcb, const struct tcp_hdr *hdr);
err_t fw_tcp_track_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, struct pbuf *p);

#endif /* FW_LWIP_HOOKS_H */
