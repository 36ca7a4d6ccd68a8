/*
 * fw_fault_hooks.h - where the common application lets a port plant a defect on purpose (the host
 * port's `fault` command, the suite's own test equipment: fault_inject.h): a table of hooks, none
 * set in a build that plants nothing (every board), so the common code pays one pointer test.
 */
#ifndef FW_FAULT_HOOKS_H
#define FW_FAULT_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The firmware's guards against hostile traffic, each of which a port may switch off to plant the
 * defect it prevents (the suite shows its check failing without it). Every guard is on unless the
 * port's guard_off says otherwise.
 */
enum fw_guard {
    FW_GUARD_PING_REPLIES,   /* ping counts a reply only with a valid ICMP checksum and its own payload */
    FW_GUARD_UDP_LINGER_PEER, /* a finished UDP server answers repeated FINs of its own client only */
    FW_GUARD_UDP_TAKEOVER,   /* a UDP server's test goes to another sender once its own is silent */
    FW_GUARD_UDP_SEQ_WINDOW, /* a UDP server ignores sequence numbers far ahead (FW_IPERF_UDP_SEQ_WINDOW) */
    FW_GUARD_TCP_HALF_OPEN,  /* half-open TCP connections make room for a SYN and are reaped (fw_tcp_guard.c) */
    FW_GUARD_TCP_SILENT_CLIENT, /* a TCP server's connection without a byte is not a test yet */
    FW_GUARD_TCP_PEER_STALL, /* the TCP client ends a test whose peer stopped reading (window closed) */
    FW_GUARD_ARP_CHANGES,    /* an unsolicited ARP packet never re-points an ARP entry (fw_arp_guard.c) */
    FW_GUARD_FDB_MOVES,      /* a learned address moves to the bridge port it is heard on (fw_bridge_fdb.c) */
    FW_GUARD_SYN_UNRESOLVED, /* SYNs from on-link addresses without an ARP entry are answered within a budget,
                              * so a SYN flood never evicts a stable ARP entry (fw_tcp_guard.c) */
    FW_GUARD_TCP_ACK_UNSENT, /* a segment acknowledging data never sent is dropped, its data too, and
                              * answered with an ACK (RFC 793, RFC 5961 5.2; fw_tcp_guard.c) */
    FW_GUARD_COUNT
};

struct fw_fault_hooks {
    /* the share of the asked rate (-b) the UDP client paces at, in per cent; 0 or 100: as asked */
    uint32_t (*udp_rate_pct)(void);
    /* an iperf test ended (TCP or UDP, client or server), after its result was reported */
    void (*test_finished)(void);
    /* true: the guard is switched off (its defect planted); NULL: every guard on */
    bool (*guard_off)(enum fw_guard guard);
};

/** Sets the port's hooks (NULL: none). Defined in fw_fault_hooks.c (fw_pure: no lwIP). */
void fw_app_set_fault_hooks(const struct fw_fault_hooks *hooks);

/** The port's hooks, NULL when it plants nothing. */
const struct fw_fault_hooks *fw_app_fault_hooks(void);

/** Whether a guard is on: true unless the port's hooks switched it off. */
bool fw_guard_on(enum fw_guard guard);

#endif /* FW_FAULT_HOOKS_H */
