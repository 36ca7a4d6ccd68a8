/* fw_lwip_hooks.h - lwIP's hooks of the test firmware (LWIP_HOOK_FILENAME): the received segment's
 * place in its connection's sequence space (fw_tcp_track.h). */
#ifndef FW_LWIP_HOOKS_H
#define FW_LWIP_HOOKS_H

#include "lwip/err.h"

struct tcp_pcb;
struct tcp_hdr;
struct pbuf;

err_t fw_tcp_track_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, struct pbuf *p);

#endif /* FW_LWIP_HOOKS_H */
