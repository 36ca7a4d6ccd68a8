/*
 * fw_config.h - every static size of the common test firmware, in one place (a board's own sizes:
 * its board_config.h).
 *
 * Stack options that a build variant changes (MSS, window, send buffer) are given by the build
 * system as FW_TCP_MSS / FW_TCP_WND_MSS / FW_TCP_SND_BUF_MSS; the rest are fixed here and may be
 * overridden per port (a port defines the macro before this header is included, e.g. through
 * its compile definitions or its board's board_config.h) when its RAM is smaller than the host's.
 */
#ifndef FW_CONFIG_H
#define FW_CONFIG_H

/* ---- Identity -------------------------------------------------------------------------- */
#define FW_NAME "hil-fw"
#ifndef FW_VARIANT
#define FW_VARIANT "default"
#endif

/* ---- TCP stack configuration (build variants) ----------------------------------------- */
#ifndef FW_TCP_MSS
#define FW_TCP_MSS 1460
#endif
#ifndef FW_TCP_WND_MSS /* receive window, in segments */
#define FW_TCP_WND_MSS 8
#endif
#ifndef FW_TCP_SND_BUF_MSS /* send buffer, in segments */
#define FW_TCP_SND_BUF_MSS FW_TCP_WND_MSS
#endif

/* ---- A board's own sizes (its drivers' rings; lwIP pools for a smaller RAM) ------------------
 * kept in board_config.h in the board's directory, which its build puts on the include path along
 * with FW_BOARD_<board> (cortex-m/CMakeLists.txt); included before the defaults below. */
#if defined(FW_BOARD_SAME70_XPLAINED) || defined(FW_BOARD_MPS2_AN500)
#include "board_config.h"
#endif

/* ---- lwIP memory ------------------------------------------------------------------------ */
#ifndef FW_MEM_SIZE /* lwIP heap: PBUF_RAM (UDP datagrams, ICMP), TCP segment copies */
#define FW_MEM_SIZE (128 * 1024)
#endif
#ifndef FW_PBUF_POOL_SIZE /* receive buffers, one full Ethernet frame each */
#define FW_PBUF_POOL_SIZE 128
#endif
#define FW_PBUF_POOL_BUFSIZE 1536
#ifndef FW_MEMP_NUM_TCP_SEG
#define FW_MEMP_NUM_TCP_SEG 256
#endif
#ifndef FW_MEMP_NUM_PBUF /* PBUF_REF/ROM headers: the TCP client sends from a constant buffer */
#define FW_MEMP_NUM_PBUF 256
#endif
#define FW_MEMP_NUM_TCP_PCB 6
#define FW_MEMP_NUM_TCP_PCB_LISTEN 4
#define FW_MEMP_NUM_UDP_PCB 12 /* iperf, the lingering iperf server, FW_STREAM_MAX streams */
#define FW_MEMP_NUM_RAW_PCB 2
#define FW_ARP_TABLE_SIZE 8
#define FW_ARP_QUEUE_LEN 32 /* packets held per unresolved address: a first burst outlives ARP */
#define FW_TCP_TRACK_FLOWS 8 /* connections whose highest sent sequence number is kept (fw_tcp_track.c) */

/* ---- the iperf TCP client (iperf_tcp_client.c) ---------------------------------------------------
 *   FW_IPERF_CONNECT_TIMEOUT_US  the connect may take this long
 *   FW_IPERF_DRAIN_TIMEOUT_US    after the last write, the last ack may take this long. On a lossy
 *                                link a segment lost again waits for lwIP's retransmission timer,
 *                                which doubles each time (0.5-1 s, then 1-2, 2-4, 4-8 s): 5 s ended
 *                                a transfer at 2 % loss as `ack_timeout` while its connection was
 *                                still recovering. 20 s covers four more losses of the same segment
 *                                and stays below the suite's wait for the DUT's reply (twice the
 *                                test's duration + 30 s) */
#define FW_IPERF_CONNECT_TIMEOUT_US 5000000u
#define FW_IPERF_DRAIN_TIMEOUT_US 20000000u
/*   FW_IPERF_PEER_STALL_MS       a peer whose window is closed (it stopped reading) and that has
 *                                acknowledged nothing this long ends the test at once with status
 *                                `peer_not_reading` (-n: while writing too; -t: once the time is up)
 *                                instead of waiting for FW_IPERF_DRAIN_TIMEOUT_US or forever (-n). A
 *                                lossy link keeps its window open and is not affected */
#define FW_IPERF_PEER_STALL_MS 500u

/* ---- TCP under hostile traffic (fw_tcp_guard.c, the project's own lwIP builds) -------------------
 *   FW_IPERF_TCP_BACKLOG      half-open connections the iperf TCP server's listener holds at once
 *                             (lwIP's TCP_LISTEN_BACKLOG); a SYN beyond them, or one that finds the
 *                             TCP PCB pool full, makes room by aborting the oldest half-open one,
 *                             so a real client's SYN always finds room
 *   FW_TCP_HALF_OPEN_MAX_MS   a half-open connection (SYN_RCVD: the SYN-ACK unanswered, e.g. sent
 *                             to an address nobody answers ARP for) is aborted this long after its
 *                             SYN instead of lwIP's TCP_SYN_RCVD_TIMEOUT (20 s, not an option in
 *                             2.1.3): after a SYN flood every TCP PCB is free again within ~3 s */
#define FW_IPERF_TCP_BACKLOG 4
#define FW_TCP_HALF_OPEN_MAX_MS 3000u
/*   FW_TCP_UNRESOLVED_HALF_OPEN  SYNs to a listener from on-link addresses the DUT holds no ARP entry
 *                             for that are answered while an earlier one's ARP entry may still be
 *                             pending (`stats` tcp_syn_unresolved_dropped: the SYNs beyond, dropped
 *                             silently). Each SYN-ACK to such an address makes lwIP 2.1.3 create an
 *                             ARP entry, and a full table (FW_ARP_TABLE_SIZE) recycles its oldest
 *                             STABLE entry first (etharp_find_entry), e.g. the DUT's entry for its
 *                             real client: at most this many pending entries of a SYN flood leave
 *                             the rest of the table to the stable ones. A real client ARPs for the
 *                             DUT before its SYN (the DUT learns it) and is never counted, nor is
 *                             one that did not (a cached entry) while it holds a connection with
 *                             the DUT (fw_tcp_guard.c: tcp_syn_known_readmitted)
 *   FW_TCP_UNRESOLVED_ARP_MS  how long such an address's pending ARP entry may outlive its half-open
 *                             connection (the last SYN-ACK it queued): lwIP frees a pending entry
 *                             ARP_MAXPENDING (5, private to etharp.c) ARP timer ticks after it was
 *                             created, one tick (ARP_TMR_INTERVAL, 1 s) added for a late timer */
#define FW_TCP_UNRESOLVED_HALF_OPEN 2
#define FW_TCP_UNRESOLVED_ARP_MS 6000u

/* ---- ARP under hostile traffic (fw_arp_guard.c, the project's own lwIP builds) -------------------
 * lwIP 2.1.3 re-points an existing ARP entry from any ARP packet naming its address; the guard lets
 * an entry change only through a request to the DUT from that address or the answer to the DUT's
 * own request (fw_arp_guard.h):
 *   FW_ARP_GUARD_ASKED      addresses the DUT asked for (its ARP requests) remembered at once: one
 *                           per ARP table entry (lwIP asks for no address it has no entry for); a
 *                           full list forgets the oldest
 *   FW_ARP_GUARD_ANSWER_MS  a reply counts as the answer to the DUT's request this long after it
 *                           (lwIP re-sends a pending entry's request every second: ARP_TMR_INTERVAL) */
#define FW_ARP_GUARD_ASKED FW_ARP_TABLE_SIZE
#define FW_ARP_GUARD_ANSWER_MS 3000u
/* answers (a reset, an ICMP error or echo reply) that may make the DUT resolve an on-link address
 * it holds no entry for, at once (fw_arp_guard.c): a real host's first answer resolves it, a flood
 * of spoofed sources takes no more of the ARP table */
#define FW_ARP_GUARD_UNRESOLVED_ANSWERS 2

/* ---- IPv4 reassembly (lwIP's ip4_frag.c; fragments are received, never sent: IP_FRAG stays 0) -------
 * Fragments wait in the receive pool's own pbufs, so reassembly takes no memory of its own but a
 * few ip_reassdata records; what it may hold is bounded so that a fragment flood (datagrams that
 * never complete) cannot take the pool from ordinary traffic:
 *   FW_IP_REASS_MAX_PBUFS  pbufs held by all incomplete datagrams together: a quarter of the receive
 *                          pool, at most 16 (a datagram of up to 16 full fragments, ~23 KB), at least 1
 *                          (the pool study builds' 2-4 pbufs: 1, which completes no datagram of two
 *                          or more fragments: such a build drops them, counted in `stats` ipfrag_*);
 *                          always below PBUF_POOL_SIZE, so the stack keeps receiving while it is full
 *                          (with IP_REASS_FREE_OLDEST, lwIP's default, a new datagram evicts the oldest)
 *   FW_IP_REASS_SLOTS      datagrams reassembled at once (MEMP_NUM_REASSDATA): one per two of those
 *                          pbufs, at most 4, at least 1; never above FW_IP_REASS_MAX_PBUFS (lwIP's
 *                          init.c refuses more: each datagram holds two pbufs at least)
 *   FW_IP_REASS_MAXAGE_S   an incomplete datagram is freed, its pbufs back in the pool, this many
 *                          seconds after its first fragment (IP_REASS_MAXAGE, ticks of lwIP's 1-s
 *                          reassembly timer: freed on the tick after it counts down, i.e. 2-3 s;
 *                          lwIP's own default 15) */
#define FW_IP_REASS_QUARTER (FW_PBUF_POOL_SIZE / 4)
#define FW_IP_REASS_MAX_PBUFS (FW_IP_REASS_QUARTER > 16 ? 16 : (FW_IP_REASS_QUARTER < 1 ? 1 : FW_IP_REASS_QUARTER))
#define FW_IP_REASS_SLOTS (FW_IP_REASS_MAX_PBUFS / 2 > 4 ? 4 : (FW_IP_REASS_MAX_PBUFS / 2 < 1 ? 1 : FW_IP_REASS_MAX_PBUFS / 2))
#define FW_IP_REASS_MAXAGE_S 2

/* ---- Console ------------------------------------------------------------------------------ */
#define FW_CONSOLE_LINE_MAX 256 /* bytes of one command line, terminator excluded */
#define FW_CONSOLE_MAX_ARGS 24  /* tokens of one command line, command name included */
#define FW_OUT_LINE_MAX 512     /* longest single formatted output chunk */
#define FW_APP_MAX_COMMANDS 16  /* console commands: the common modules' plus a port's own */
#define FW_APP_MAX_PORT_POLLS 4 /* a port's modules with periodic work (e.g. the link delay line) */
#define FW_OUT_HOLD_BYTES 1024  /* output held back while a transfer owns the console (fw_out_hold) */

/* ---- Tests at once -------------------------------------------------------------------------- */
#define FW_TEST_SLOTS 3 /* an iperf server and client together (both directions), a ping beside them; any other test alone */

/* ---- the simulated Wi-Fi station's air (host/src/wifi_air.h, host/src/air_queue.h) ------------ */
#define FW_AIR_QUEUE_DATA_FRAMES 1000 /* the access point's transmit queue towards the station: data frames
                                      * (as the tap's own queue, a Linux default txqueuelen; over 250 ms of MCS 7's air,
                                      * so an iperf FIN resent after one lost at a full queue finds frames
                                      * still ahead of it: the air stays busy up to the FIN) */
#define FW_AIR_QUEUE_MGMT_FRAMES 8   /* ... and its management frames (beacons, association answers), sent first */
#define FW_AIR_QUEUE_CARRIED_FRAMES 64 /* frames the air carried while the station was sending, for the stack
                                       * when the station's loop comes round (FW_IPERF_UDP_BURST_MAX per poll) */
#define FW_AIR_QUEUE_FRAME_MAX 1518  /* longest frame it holds: an Ethernet frame with a VLAN tag, no FCS */

/* ---- link delay line (test equipment: a known bandwidth-delay product) ----------------------- */
#define FW_LINK_DELAY_SLOTS 32    /* frames held at once: a 16 x MSS window twice over, half the smallest
                                     * board pbuf pool, so the stack keeps pbufs of its own (power of two) */
#define FW_LINK_DELAY_MAX_MS 1000

/* ---- planted defects (the host port's `fault` command: the suite's own test equipment) ---------
 * A defect the suite plants on purpose to show that its verdicts fail a defective DUT; none is
 * active until `fault` plants it (firmware/host/src/fault_inject.h).
 *   FW_FAULT_HOLD_SLOTS        frames to send held at once by a hold defect (latency, ACK delay,
 *                              clumps): 2 ms of a 100 Mbit/s link is 16 full frames; a frame that
 *                              finds them all taken goes out at once (counted: hold_overflow)
 *   FW_FAULT_MAX_HOLD_US       the longest hold the command takes
 *   FW_FAULT_MAX_WORK_US       the most CPU per frame it takes
 *   FW_FAULT_MAX_STALL_MS      the longest stall, FW_FAULT_MAX_PERIOD_MS its longest period
 *   FW_FAULT_REORDER_DISTANCE  a reordered received frame reaches the stack after this many more,
 *                              or FW_FAULT_REORDER_MAX_US after it arrived when fewer come: enough
 *                              for a TCP sender's three duplicate ACKs, so it resends what arrived */
#define FW_FAULT_HOLD_SLOTS 256
#define FW_FAULT_MAX_HOLD_US 100000u
#define FW_FAULT_MAX_WORK_US 10000u
#define FW_FAULT_MAX_STALL_MS 1000u
#define FW_FAULT_MAX_PERIOD_MS 60000u
#define FW_FAULT_REORDER_DISTANCE 4
#define FW_FAULT_REORDER_MAX_US 2000u

/* ---- layer-2 bridge (the `bridge` build variant, preset host-bridge) ----------------------------
 * lwIP's bridgeif over FW_BRIDGE_PORTS port netifs (one per tap or MAC), the management address on
 * the bridge netif itself; learned addresses in a static table (fw_bridge_fdb.c). */
#define FW_BRIDGE_PORTS 2           /* ports of the bridge (lwIP's BRIDGEIF_MAX_PORTS) */
#define FW_BRIDGE_FDB_SIZE 64       /* learned (dynamic) MAC addresses held at once */
#define FW_BRIDGE_FDB_STATIC 0      /* static FDB entries (bridgeif_fdb_add): none are configured */
#define FW_BRIDGE_FDB_AGE_S 300     /* a learned address unheard this long is forgotten (802.1D default) */
#define FW_BRIDGE_FDB_MOVE_HOLD_MS 1000 /* an address settled on its port this long and heard there this recently
                                          * does not move to another */
#define FW_BRIDGE_FDB_FULL_KEEP_MS 1000 /* a full table replaces no entry heard this recently: a new address
                                          * is then not learned (frames to it are flooded) */

/* ---- iperf ---------------------------------------------------------------------------------- */
#define FW_IPERF_DEFAULT_PORT 5001
#define FW_IPERF_DEFAULT_TIME_S 10     /* client duration when neither -t nor -n is given (iperf 2) */
#define FW_IPERF_DEFAULT_INTERVAL_MS 0 /* no interval reports unless -i is given (iperf 2) */
#define FW_IPERF_MAX_TIME_S 86400
#define FW_IPERF_TCP_DEFAULT_LEN 16384 /* as Espressif's iperf-cmd */
#define FW_IPERF_TCP_MAX_LEN 65536
#define FW_IPERF_TCP_TX_BUF 16384      /* constant payload the TCP client sends from (no copy) */
#define FW_IPERF_UDP_DEFAULT_LEN 1470
#define FW_IPERF_UDP_MIN_LEN 16        /* sequence number + timestamp + upper sequence number */
#define FW_IPERF_UDP_MAX_LEN 1472      /* one Ethernet frame; lwIP is built without IP fragmentation */
#define FW_IPERF_UDP_FIN_RETRIES 10    /* as iperf 2 */
#define FW_IPERF_UDP_FIN_WAIT_MS 250   /* as iperf 2 */
#define FW_IPERF_UDP_IDLE_MS 2000      /* a UDP server whose client fell silent ends the test */
#define FW_IPERF_UDP_LINGER_MS 1500    /* a finished UDP server still answers its client's repeated FINs */
#define FW_IPERF_UDP_TAKEOVER_MS 250   /* a UDP server's test whose sender is silent this long goes to
                                        * another sender (a stray datagram that claimed it, a client gone) */
#define FW_IPERF_UDP_SEQ_WINDOW 1048576u /* a datagram (or FIN) numbered more than this ahead of the highest
                                        * sequence number seen is invalid, not loss: a legitimate jump is a
                                        * burst lost within FW_IPERF_UDP_IDLE_MS (2 s of 1470-byte datagrams
                                        * at 1 Gbit/s: 170,000); one forged 0x7fffffff would be 2^31 lost */
#ifndef FW_IPERF_UDP_BURST_MAX
#define FW_IPERF_UDP_BURST_MAX 64      /* datagrams per poll when the client is behind schedule */
#endif

/* ---- ping ----------------------------------------------------------------------------------- */
#define FW_PING_ID 0xAFAF
#define FW_PING_DEFAULT_COUNT 5
#define FW_PING_DEFAULT_INTERVAL_MS 1000
#define FW_PING_DEFAULT_TIMEOUT_MS 1000
#define FW_PING_DEFAULT_SIZE 56 /* ICMP payload bytes, as ping(8) */
#define FW_PING_MAX_SIZE 1472
#define FW_PING_MAX_COUNT 1000000
#define FW_PING_SLOTS 64 /* send times kept for replies in flight */

/* ---- serial transfer (the console's own throughput, serial_xfer.h) -------------------------
 * a file of pseudo-random bytes moved through the console in acknowledged blocks; the DUT checks
 * or generates each byte as it goes, so the file is never stored: one block's buffer. */
#define FW_SERIAL_MAX_BLOCK 1024           /* bytes of one block (the thesis: 8 ... 256) */
#define FW_SERIAL_MAX_BYTES 16777216u      /* a file of at most 16 MiB (ezTCP's largest test file) */
#define FW_SERIAL_DEFAULT_TIMEOUT_MS 2000  /* no byte for this long ends a transfer (status=timeout) */
#define FW_SERIAL_MAX_TIMEOUT_MS 60000
#define FW_SERIAL_BAUD_CONFIRM_MS 3000     /* a new baud rate not confirmed this long is undone */

/* ---- stream (bursty multi-stream UDP) ------------------------------------------------------- */
#define FW_STREAM_MAX 8           /* streams configured at once (both directions) */
#define FW_STREAM_MIN_SIZE 24     /* the stream header */
#define FW_STREAM_MAX_SIZE 1472
#define FW_STREAM_MAX_BURST 1000
#define FW_STREAM_LINGER_MS 1000  /* after the last burst, receivers wait this long for stragglers */
#define FW_STREAM_MAX_START_DELAY_MS 10000 /* `stream start S DELAY_MS`: senders begin at most this late */
#ifndef FW_STREAM_RX_WINDOW
#define FW_STREAM_RX_WINDOW 4     /* bursts a receiver tallies at once (a bitmap of FW_STREAM_MAX_BURST bits
                                   * each): a burst closes, its loss final, once a packet FW_STREAM_RX_WINDOW
                                   * bursts later arrives; a packet up to that late still counts in its burst */
#endif
#ifndef FW_STREAM_LOSS_LINES
#define FW_STREAM_LOSS_LINES 16   /* STREAMLOSS lines one packet (or the end of the run) may print: a jump over
                                   * more lossy bursts is counted in full, the bursts beyond in losses_capped */
#endif

#endif /* FW_CONFIG_H */
