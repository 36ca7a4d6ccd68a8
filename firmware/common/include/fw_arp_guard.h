/*
 * fw_arp_guard.h - ARP poisoning of a live entry, in the project's own lwIP builds (lwipopts.h:
 * FW_ARP_GUARD; ESP-IDF's lwIP has none of it).
 *
 * lwIP 2.1.3's etharp_input updates an existing ARP entry from ANY ARP packet whose sender address
 * it holds (etharp_update_arp_entry: ETHARP_FLAG_TRY_HARD for a packet to the DUT's address, which
 * also creates an entry, ETHARP_FLAG_FIND_ONLY for the others), whatever its opcode. A stream of
 * forged replies "10.77.0.1 is at <bogus MAC>" therefore re-points the DUT's entry for the PC, and
 * every test between them stalls until the PC next sends an ARP request. The guard sits in front
 * of the netif's input (a frame lwIP's ethernet_input would hand to etharp_input) and behind its
 * link output (the DUT's own ARP requests), and drops, counted (`stats` etharp_ignored), an ARP
 * packet that would point the DUT's entry for its sender address at another hardware address
 * (or create one for it) unless it is
 *   - a request to the DUT's address from an address it holds no entry for (the sender wants to
 *     talk to the DUT: lwIP answers it; from a known address with another MAC the request is not
 *     taken: the DUT asks where that address is, and the answer to its request decides), or
 *   - the answer to the DUT's own request for that address: sent within FW_ARP_GUARD_ANSWER_MS of
 *     it, and either a reply to the DUT's address or, while the DUT has no stable entry for the
 *     address (lwIP's pending entry, which takes any ARP packet naming it), any ARP packet; the
 *     first such answer (or a reply confirming the address the entry holds) closes the request,
 *     so forged replies behind it are dropped again.
 * Gratuitous ARP (sender address = target address), replies the DUT did not ask for, requests to
 * other addresses and other opcodes never change an entry; nothing ever points one at a group or
 * all-zero hardware address; a frame of the ARP type too short for an ARP header is dropped (lwIP
 * would read the header past the frame's end, from whatever the receive buffer held before).
 * Packets that change nothing pass (a confirmation of the address an entry holds refreshes it, as
 * before), and so does everything lwIP refuses itself (an ARP header it does not take, a sender
 * address that is 0, broadcast or multicast). Stable entries: lwIP's ETHARP_STATE_STABLE and its
 * re-requesting states, which it asks for again (unicast 30 s, broadcast 15 s before ARP_MAXAGE)
 * while in use, so an entry whose host really moved changes at the latest when it expires.
 *
 * Where: every frame a port's driver receives goes to netif->input (the host's tapif_deliver, the
 * boards' lan9118.c and gmac.c, bridgeif for frames to the bridge netif), and every ARP request lwIP
 * sends goes through netif->linkoutput (etharp_raw -> ethernet_output), so one attach per port
 * covers both without touching a driver; lwIP 2.1.3 has no hook in etharp_input, and its
 * LWIP_HOOK_ETHARP_GET_GW only picks a gateway for off-link destinations (it never sees a request).
 *
 * The guard is off while the port plants the defect (FW_GUARD_ARP_CHANGES, fw_fault_hooks.h: the
 * host's `trust_arp_changes`): every frame then goes to lwIP as before.
 */
#ifndef FW_ARP_GUARD_H
#define FW_ARP_GUARD_H

#include <stdbool.h>
#include <stdint.h>

struct netif;

/**
 * Puts the guard in front of netif->input and behind netif->linkoutput of the netif that holds the
 * DUT's address and its ARP table (a port's netif, the bridge build's bridge netif), after
 * netif_add and before anything else wraps its input (the link delay line then delays frames into
 * the guard). One netif per program; false when netif is NULL, has no input or link output, or the
 * guard is already attached.
 */
bool fw_arp_guard_attach(struct netif *netif);

/** ARP packets dropped since boot or the last fw_arp_guard_reset (`stats` etharp_ignored). */
uint32_t fw_arp_guard_ignored(void);

/**
 * Answers not sent since boot or the last reset (`stats` etharp_unresolved_answers): a TCP reset,
 * an ICMP error or echo reply to an on-link address the DUT holds no ARP entry for, beyond the
 * FW_ARP_GUARD_UNRESOLVED_ANSWERS addresses being resolved at once (spoofed sources: resolving each
 * would recycle a stable entry; a real host's first answer resolves it). Off with FW_GUARD_SYN_UNRESOLVED (the host's
 * `evict_arp_for_syn`), as the SYN budget of fw_tcp_guard.c.
 */
uint32_t fw_arp_guard_unresolved_answers(void);
void fw_arp_guard_reset(void);

#endif /* FW_ARP_GUARD_H */
