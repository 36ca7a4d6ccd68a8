/*
 * test_peer.h - a peer on the test netif (test_platform.h) for the unit tests of the firmware
 * under hostile traffic: the frames the DUT sends are kept and read back as TCP segments, and the
 * peer's ARP, TCP and ICMP packets are crafted with valid checksums (or a wrong one on purpose).
 */
#ifndef TEST_PEER_H
#define TEST_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "fw_fault_hooks.h"
#include "lwip/netif.h"

#define PEER_SYN 0x02u
#define PEER_RST 0x04u
#define PEER_PSH 0x08u
#define PEER_ACK 0x10u
#define PEER_FIN 0x01u

/** A TCP segment the DUT sent (addresses host order). */
struct peer_seg {
    uint32_t src, dst;
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t wnd;
    uint16_t len; /* payload bytes */
};

/** Makes the netif the default route and keeps every frame it sends from now on (its linkoutput). */
void peer_attach(struct netif *netif);

/** Forgets the frames kept so far. */
void peer_clear(void);

/** Frames the DUT sent since the last peer_clear. */
unsigned peer_frames(void);

/** The length of a frame the DUT sent, the last kept first (0: the newest), its bytes in *bytes;
 *  0 when there is no such frame (the last 256 since peer_clear are kept). */
uint16_t peer_frame_back(unsigned back, const uint8_t **bytes);

/** The last TCP segment the DUT sent to dst:dport (host order), false when none since peer_clear. */
bool peer_last_tcp(uint32_t dst, uint16_t dport, struct peer_seg *out);

/** TCP segments the DUT sent to dst:dport with all of `flags` set, since peer_clear. */
unsigned peer_count_tcp(uint32_t dst, uint16_t dport, uint8_t flags);

/** UDP datagrams the DUT sent to dst:dport (host order) since peer_clear. */
unsigned peer_count_udp(uint32_t dst, uint16_t dport);

/** An ARP request from ip/mac for the DUT's address: the DUT learns where ip is. */
void peer_arp(struct netif *netif, uint32_t ip, const uint8_t mac[6]);

/** One TCP segment from src:sport to the DUT's dst:dport, checksum computed. */
void peer_tcp(struct netif *netif, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t seq,
              uint32_t ack, uint8_t flags, uint16_t wnd, const uint8_t *data, uint16_t len);

/** The 16-bit one's complement checksum of data, seeded with sum (a pseudo header's), network order. */
uint16_t peer_chksum(uint32_t sum, const uint8_t *data, uint32_t len);

/** One TCP connection of the peer's with the DUT (numbers: the peer's next to send, the next it
 *  expects from the DUT). */
struct peer_conn {
    struct netif *netif;
    uint32_t ip, dut_ip;
    uint16_t port, dut_port;
    uint32_t seq, ack;
    uint16_t wnd; /* the window the peer advertises */
};

/** The peer connects to the DUT's listening port: SYN, the DUT's SYN-ACK read back, ACK. False
 *  when the DUT sent no SYN-ACK (the SYN was dropped). */
bool peer_connect(struct peer_conn *c);

/** The peer accepts the DUT's connection (the DUT's last SYN to c->ip:c->port): SYN-ACK. False
 *  when the DUT sent no SYN. */
bool peer_accept(struct peer_conn *c);

/** Data from the peer (PSH|ACK). */
void peer_send(struct peer_conn *c, const uint8_t *data, uint16_t len);

/** The peer acknowledges everything the DUT sent it so far with window wnd; returns the bytes
 *  of data the DUT has sent it in all (its sequence space past the SYN). */
uint32_t peer_ack_all(struct peer_conn *c, uint16_t wnd);

/** The peer's FIN. */
void peer_fin(struct peer_conn *c);

/**
 * Installs the test's planted-defect hooks (fw_fault_hooks.h): every guard on unless
 * test_guard_plant switched it off, or unless the environment has TEST_GUARDS_OFF=1, which
 * switches every guard off so that a run shows each test failing without its fix.
 */
void test_guards_install(void);

/** Switches a guard off (true: its defect planted, as the host's `fault` does) or on again. */
void test_guard_plant(enum fw_guard guard, bool off);

/** lwIP and the DUT's netif at ip/24 with the peer attached, the test's guards installed, the
 * application started on it. */
void peer_bring_up(struct netif *netif, uint32_t ip);

/** A console line to the application. */
void peer_feed(const char *line);

/** Time passes to t (us), in steps of at most step_us: lwIP's timeouts and the application's polls run. */
void peer_advance_to(uint64_t t, uint64_t step_us);

/** TCP PCBs in use now (lwIP's MEMP_TCP_PCB pool). */
unsigned peer_tcp_pcbs_used(void);

#endif /* TEST_PEER_H */
