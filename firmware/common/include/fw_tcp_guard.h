/*
 * fw_tcp_guard.h - half-open TCP connections under a SYN flood, in the project's own lwIP builds
 * (lwipopts.h: FW_TCP_GUARD; ESP-IDF's lwIP has none of it); and a segment of a live connection
 * acknowledging data never sent (SEG.ACK > SND.NXT), dropped with its data and answered with an ACK
 * as RFC 793 says (lwIP 2.1.3 took its data: counts.acks_unsent, guard FW_GUARD_TCP_ACK_UNSENT).
 *
 * lwIP 2.1.3 keeps a half-open connection (SYN_RCVD: its SYN-ACK unanswered, e.g. sent to an
 * address nobody answers ARP for) for TCP_SYN_RCVD_TIMEOUT, 20 s, which is no option; it drops a
 * SYN that finds its listener's backlog full (tcp_listen_input), and one that finds the TCP PCB pool
 * full unless a connection of lower priority can be killed (tcp_alloc, tcp_kill_prio), which every
 * connection of the same priority is not. A few spoofed SYNs therefore keep a real client out and
 * every TCP PCB taken for 20 s. The guard:
 *   - a SYN to a listening port always finds room: in lwIP's LWIP_HOOK_TCP_INPACKET_PCB (called
 *     for the listener before tcp_listen_input), when the listener's backlog is full or the PCB
 *     pool is (with nothing lwIP itself would free), the oldest half-open connection (of that
 *     listener, or of any) is aborted first (`stats` tcp_half_open_evicted);
 *   - a half-open connection older than FW_TCP_HALF_OPEN_MAX_MS is aborted (an lwIP timeout the
 *     guard arms while half-open connections exist: `stats` tcp_half_open_reaped).
 * An aborted half-open connection is dropped without a RST (its peer, real or spoofed, gets none:
 * a real one's late ACK is answered with a RST by the listener anyway). Both are off while the
 * port plants the defect (FW_GUARD_TCP_HALF_OPEN, fw_fault_hooks.h: the host's `hold_half_open`).
 *
 * SYNs from addresses nobody answers ARP for also cost the DUT its ARP entries: the SYN-ACK to an
 * on-link address without an ARP entry makes lwIP 2.1.3 create one (etharp_output -> etharp_query
 * -> etharp_find_entry with ETHARP_FLAG_TRY_HARD), and a full table (ARP_TABLE_SIZE,
 * FW_ARP_TABLE_SIZE) recycles its oldest STABLE entry before any pending one. A flood from a few
 * such addresses (more than the table holds) therefore evicts the DUT's entry for its real client
 * again and again, and each of the client's packets waits for a new ARP exchange (a TCP test
 * stalled ~2 s under 2,000 SYNs/s). The guard, in the same hook: a SYN to a listener from an on-link
 * address the DUT holds no stable ARP entry for (etharp_find_addr) is answered only while fewer
 * than FW_TCP_UNRESOLVED_HALF_OPEN such SYNs may still have their pending ARP entry (their
 * half-open connection exists, or went less than FW_TCP_UNRESOLVED_ARP_MS ago, and the address did
 * not answer ARP); beyond that it is dropped silently, before lwIP creates anything for it
 * (`stats` tcp_syn_unresolved_dropped). So a flood holds at most FW_TCP_UNRESOLVED_HALF_OPEN pending
 * ARP entries and never fills the table. A real client ARPs for the DUT before its SYN (the DUT
 * learns it from the request) and is always answered, as is an off-link source (its SYN-ACK goes
 * to the gateway's entry), and so is a host that holds a connection with the DUT past its handshake
 * (established, closing or in TIME_WAIT: it answered a SYN-ACK, so it answers ARP) whose entry a
 * full table recycled for a newer one: a real client that kept its own entry for the DUT sends its
 * next SYN without asking first (`stats` tcp_syn_known_readmitted). Off while the port plants the defect (FW_GUARD_SYN_UNRESOLVED: the
 * host's `evict_arp_for_syn`). Other answers to spoofed on-link sources (a RST to an ACK or to a
 * closed port, an ICMP reply) still create ARP entries as lwIP does: this guard sees only the
 * segments to a listener's PCB.
 */
#ifndef FW_TCP_GUARD_H
#define FW_TCP_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "lwip/err.h"

struct tcp_pcb;
struct tcp_hdr;

struct fw_tcp_guard_counts {
    uint32_t evicted; /* half-open connections aborted to make room for a SYN or a new PCB */
    uint32_t reaped;  /* half-open connections aborted after FW_TCP_HALF_OPEN_MAX_MS */
    uint32_t unresolved_dropped; /* SYNs from unresolved on-link addresses beyond FW_TCP_UNRESOLVED_HALF_OPEN */
    uint32_t known_readmitted;   /* SYNs from unresolved on-link addresses that hold a connection with the DUT */
    uint32_t acks_unsent;        /* segments of a connection acknowledging data never sent, dropped (their data too) */
};

/** The counts since boot or the last fw_tcp_guard_reset. */
struct fw_tcp_guard_counts fw_tcp_guard_counts(void);
void fw_tcp_guard_reset(void);

/** lwIP's LWIP_HOOK_TCP_INPACKET_PCB for every received segment (fw_lwip_hooks.h): acts on a SYN
 *  to a listening PCB only. ERR_OK: lwIP takes the segment; otherwise (ERR_RTE: a SYN from an
 *  unresolved address beyond the budget) lwIP drops it. */
err_t fw_tcp_guard_inpacket(struct tcp_pcb *pcb, const struct tcp_hdr *hdr);

/** Aborts the oldest half-open connection, for a PCB the pool could not give (the application's
 *  own connection under a SYN flood). True when one was aborted (a PCB is free now). */
bool fw_tcp_guard_make_room(void);

/** Half-open connections the guard knows of now (test and diagnostics). */
unsigned fw_tcp_guard_half_open(void);

#endif /* FW_TCP_GUARD_H */
