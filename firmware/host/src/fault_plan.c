/* fault_plan.c - the planted defects' pure decisions (fault_plan.h). */
#include "fault_plan.h"

#include <string.h>

#include "fw_config.h"
#include "fw_fault_hooks.h"

#define PPM 1000000u
#define ETH_HLEN 14
#define ETHERTYPE_IPV4_HI 0x08
#define ETHERTYPE_IPV4_LO 0x00
#define IPPROTO_TCP_NUM 6
#define TCP_FLAGS_MASK 0x3Fu /* URG ACK PSH RST SYN FIN */
#define TCP_FLAG_ACK 0x10u

const struct fault_def fault_defs[FAULT_COUNT] = {
    [FAULT_TX_WORK_US] = {"tx_work_us", FW_FAULT_MAX_WORK_US, "CPU busy per frame sent (us)"},
    [FAULT_RX_WORK_US] = {"rx_work_us", FW_FAULT_MAX_WORK_US, "CPU busy per frame received (us)"},
    [FAULT_TX_DROP_PPM] = {"tx_drop_ppm", PPM, "frames to send dropped, counted as sent (per million)"},
    [FAULT_RX_DROP_PPM] = {"rx_drop_ppm", PPM, "frames received dropped silently (per million)"},
    [FAULT_RX_REORDER_PPM] = {"rx_reorder_ppm", PPM, "received frames delivered after the next few (per million)"},
    [FAULT_STALL_MS] = {"stall_ms", FW_FAULT_MAX_STALL_MS, "the firmware stops this long (ms) ..."},
    [FAULT_STALL_EVERY_MS] = {"stall_every_ms", FW_FAULT_MAX_PERIOD_MS, "... once per this period (ms)"},
    [FAULT_ACK_DELAY_US] = {"ack_delay_us", FW_FAULT_MAX_HOLD_US, "pure TCP ACKs sent held (us)"},
    [FAULT_ACK_DROP_PPM] = {"ack_drop_ppm", PPM, "pure TCP ACKs dropped, sent and received (per million)"},
    [FAULT_LATENCY_US] = {"latency_us", FW_FAULT_MAX_HOLD_US, "every frame sent held (us)"},
    [FAULT_TX_CLUMP_US] = {"tx_clump_us", FW_FAULT_MAX_HOLD_US, "frames to send sent together every window (us)"},
    [FAULT_UDP_RATE_PCT] = {"udp_rate_pct", 100u, "the UDP client's rate, % of the asked (0: as asked)"},
    [FAULT_LEAK_PER_TEST] = {"leak_per_test", FW_PBUF_POOL_SIZE, "receive buffers leaked per iperf test"},
    [FAULT_TRUST_PING_REPLIES] = {"trust_ping_replies", 1u, "ping counts replies with a wrong checksum or payload"},
    [FAULT_ANSWER_ANY_FIN] = {"answer_any_fin", 1u, "a finished UDP server answers anyone's FIN with its report"},
    [FAULT_KEEP_FIRST_SENDER] = {"keep_first_sender", 1u, "a UDP server's test stays with its first sender"},
    [FAULT_TRUST_UDP_SEQ] = {"trust_udp_seq", 1u, "a UDP server counts a forged sequence jump as loss"},
    [FAULT_HOLD_HALF_OPEN] = {"hold_half_open", 1u, "half-open TCP connections held 20 s, SYNs beyond dropped"},
    [FAULT_KEEP_SILENT_CLIENTS] = {"keep_silent_clients", 1u, "a TCP connection without a byte holds the server"},
    [FAULT_WAIT_CLOSED_WINDOW] = {"wait_closed_window", 1u, "the TCP client waits on a peer that stopped reading"},
    [FAULT_TRUST_ARP_CHANGES] = {"trust_arp_changes", 1u, "unsolicited ARP (forged replies) re-points ARP entries"},
    [FAULT_FDB_NEVER_MOVES] = {"fdb_never_moves", 1u, "a learned address never moves to another bridge port"},
    [FAULT_EVICT_ARP_FOR_SYN] = {"evict_arp_for_syn", 1u, "SYNs from unresolved addresses evict stable ARP entries"},
    [FAULT_TAKE_DATA_ACKING_UNSENT] = {"take_data_acking_unsent", 1u,
                                       "a TCP segment acknowledging data never sent still delivers its data"},
};

/* the guard each guard defect switches off, in their order */
static const int guards[] = {FW_GUARD_PING_REPLIES,   FW_GUARD_UDP_LINGER_PEER, FW_GUARD_UDP_TAKEOVER,
                             FW_GUARD_UDP_SEQ_WINDOW, FW_GUARD_TCP_HALF_OPEN,   FW_GUARD_TCP_SILENT_CLIENT,
                             FW_GUARD_TCP_PEER_STALL, FW_GUARD_ARP_CHANGES,     FW_GUARD_FDB_MOVES,
                             FW_GUARD_SYN_UNRESOLVED, FW_GUARD_TCP_ACK_UNSENT};
_Static_assert(sizeof guards / sizeof guards[0] == FAULT_COUNT - FAULT_TRUST_PING_REPLIES,
               "one guard per guard defect");
_Static_assert(FW_GUARD_COUNT == FAULT_COUNT - FAULT_TRUST_PING_REPLIES, "a defect for every guard");

int fault_guard(int id)
{
    return id >= FAULT_TRUST_PING_REPLIES && id < FAULT_COUNT ? guards[id - FAULT_TRUST_PING_REPLIES] : FW_GUARD_COUNT;
}

int fault_find(const char *name)
{
    for (int i = 0; i < FAULT_COUNT; i++) {
        if (strcmp(fault_defs[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

bool fault_ppm_hit(uint32_t *acc, uint32_t ppm)
{
    if (ppm == 0) {
        return false;
    }
    *acc += ppm > PPM ? PPM : ppm;
    if (*acc >= PPM) {
        *acc -= PPM;
        return true;
    }
    return false;
}

bool fault_is_pure_tcp_ack(const uint8_t *frame, size_t len)
{
    if (len < ETH_HLEN + 20 || frame[12] != ETHERTYPE_IPV4_HI || frame[13] != ETHERTYPE_IPV4_LO) {
        return false;
    }
    const uint8_t *ip = frame + ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0x0Fu) * 4u;
    size_t total = ((size_t)ip[2] << 8) | ip[3];
    if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != IPPROTO_TCP_NUM || total > len - ETH_HLEN || total < ihl + 20) {
        return false;
    }
    const uint8_t *tcp = ip + ihl;
    size_t thl = (size_t)(tcp[12] >> 4) * 4u;
    if (thl < 20 || ihl + thl > total) {
        return false;
    }
    return total == ihl + thl && (tcp[13] & TCP_FLAGS_MASK) == TCP_FLAG_ACK;
}
