/*
 * lwipopts.h - lwIP configuration of the test firmware (NO_SYS=1, raw API only).
 * Sizes come from fw_config.h; nothing here is target specific.
 */
#ifndef LWIPOPTS_H
#define LWIPOPTS_H

#include "fw_config.h"

#define NO_SYS 1
#define LWIP_TIMERS 1
#define SYS_LIGHTWEIGHT_PROT 0
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#ifdef FW_BRIDGE /* the bridge variant: a bridge netif (bridgeif) and FW_BRIDGE_PORTS port netifs */
#define LWIP_SINGLE_NETIF 0
#define LWIP_NUM_NETIF_CLIENT_DATA 1 /* bridgeif's per-port data */
#define BRIDGEIF_MAX_PORTS FW_BRIDGE_PORTS
#else
#define LWIP_SINGLE_NETIF 1
#endif
#define LWIP_NETIF_LINK_CALLBACK 0
#define LWIP_NETIF_STATUS_CALLBACK 0

#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define ARP_QUEUEING 1
#define ARP_TABLE_SIZE FW_ARP_TABLE_SIZE
#define ARP_QUEUE_LEN FW_ARP_QUEUE_LEN
/* Fragments received are reassembled (bounded: fw_config.h); none are sent: ip4_output passes a
 * datagram larger than the MTU on whole and the driver drops it by length (counted as link
 * lenerr/drop), e.g. the reply to a reassembled 4,000-byte echo; iperf and ping keep theirs within
 * one frame */
#define IP_REASSEMBLY 1
#define IP_REASS_MAX_PBUFS FW_IP_REASS_MAX_PBUFS
#define IP_REASS_MAXAGE FW_IP_REASS_MAXAGE_S
#define IP_FRAG 0
#define LWIP_ICMP 1
#define LWIP_RAW 1
#define LWIP_UDP 1
#define LWIP_TCP 1
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_IGMP 0
#define LWIP_DNS 0

/* Memory */
#ifndef MEM_ALIGNMENT
#define MEM_ALIGNMENT 4
#endif
#define MEM_SIZE FW_MEM_SIZE
#define MEMP_NUM_PBUF FW_MEMP_NUM_PBUF
#define MEMP_NUM_RAW_PCB FW_MEMP_NUM_RAW_PCB
#define MEMP_NUM_UDP_PCB FW_MEMP_NUM_UDP_PCB
#define MEMP_NUM_TCP_PCB FW_MEMP_NUM_TCP_PCB
#define MEMP_NUM_TCP_PCB_LISTEN FW_MEMP_NUM_TCP_PCB_LISTEN
#define MEMP_NUM_TCP_SEG FW_MEMP_NUM_TCP_SEG
#define MEMP_NUM_REASSDATA FW_IP_REASS_SLOTS
#define MEMP_NUM_FRAG_PBUF 0
#define MEMP_NUM_ARP_QUEUE (2 * FW_ARP_QUEUE_LEN)
#define PBUF_POOL_SIZE FW_PBUF_POOL_SIZE
#define PBUF_POOL_BUFSIZE FW_PBUF_POOL_BUFSIZE

/* A study build whose receive pool holds less than one window (PBUF_POOL_SIZE ladder): lwIP's
 * compile-time sanity check refuses that configuration, the study measures what it does */
#ifdef FW_POOLS_BELOW_WINDOW
#define LWIP_DISABLE_TCP_SANITY_CHECKS 1
#endif

/* TCP */
#define TCP_MSS FW_TCP_MSS
#define TCP_WND (FW_TCP_WND_MSS * TCP_MSS)
#define TCP_SND_BUF (FW_TCP_SND_BUF_MSS * TCP_MSS)
#define TCP_SND_QUEUELEN ((4 * TCP_SND_BUF + TCP_MSS - 1) / TCP_MSS)
#define TCP_SNDLOWAT LWIP_MIN(LWIP_MAX(((TCP_SND_BUF) / 2), (2 * TCP_MSS) + 1), (TCP_SND_BUF)-1)
#define TCP_QUEUE_OOSEQ 1
#define TCP_OVERSIZE TCP_MSS
#define LWIP_TCP_TIMESTAMPS 0
#define LWIP_WND_SCALE 0
#define TCP_LISTEN_BACKLOG 1
/* SOF_REUSEADDR: the iperf TCP server binds its port again while the last test's connection still
 * waits in LAST_ACK for the peer's final ACK (as iperf itself does with SO_REUSEADDR) */
#define SO_REUSE 1

/* Checksums in software: frames from a tap or a MAC without offload */
#define CHECKSUM_GEN_IP 1
#define CHECKSUM_GEN_UDP 1
#define CHECKSUM_GEN_TCP 1
#define CHECKSUM_GEN_ICMP 1
#define CHECKSUM_CHECK_IP 1
#define CHECKSUM_CHECK_UDP 1
#define CHECKSUM_CHECK_TCP 1
#define CHECKSUM_CHECK_ICMP 1

/* Statistics: 32-bit counters (16-bit ones wrap in under a second at 100 Mbit/s) */
#define LWIP_STATS 1
#define LWIP_STATS_LARGE 1
#define LWIP_STATS_DISPLAY 0
#define LINK_STATS 1
#define ETHARP_STATS 1
#define IP_STATS 1
#define ICMP_STATS 1
#define UDP_STATS 1
#define TCP_STATS 1
#define MEM_STATS 1
#define MEMP_STATS 1
#define SYS_STATS 0
#define IPFRAG_STATS 1 /* fragments received, dropped (lenerr, memerr, proterr): `stats` ipfrag */

/* Hooks: each received TCP segment, first for the SYN-flood guard (fw_tcp_guard.h: a SYN to a
 * listener makes room by aborting the oldest half-open connection; one from an on-link address
 * without an ARP entry beyond FW_TCP_UNRESOLVED_HALF_OPEN is dropped: not ERR_OK), then for its
 * place in its connection's sequence space (fw_tcp_track.h) */
#define LWIP_HOOK_FILENAME "fw_lwip_hooks.h"
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
    (fw_tcp_guard_inpacket((pcb), (hdr)) != ERR_OK ? ERR_RTE : fw_tcp_track_inpacket((pcb), (hdr), (p)))
#define FW_TCP_TRACK 1 /* fw_tcp_track.c counts this stack's TCP segments (stats: tcp_retrans ...) */
#define FW_TCP_GUARD 1 /* fw_tcp_guard.c: half-open connections evicted and reaped, SYNs from unresolved
                        * addresses bounded (stats: tcp_half_open_..., tcp_syn_unresolved_dropped) */
#define FW_ARP_GUARD 1 /* fw_arp_guard.c: unsolicited ARP never re-points an entry (stats: etharp_ignored) */
#define FW_TCP_TIME_WAIT 1 /* stats: tcp_time_wait, the TCP PCBs in TIME_WAIT (lwIP's tcp_tw_pcbs) */
/* lwIP's own timeouts and the guard's reaping timeout (armed while half-open connections exist) */
#define MEMP_NUM_SYS_TIMEOUT (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 1)

unsigned int fw_platform_random(void);
#define LWIP_RAND() fw_platform_random()

#endif /* LWIPOPTS_H */
