/* fw_tcp_guard.c - half-open TCP connections under a SYN flood (fw_tcp_guard.h). */
#include "fw_tcp_guard.h"

#include <string.h>

#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "fw_lwip_hooks.h"
#include "lwip/etharp.h"
#include "lwip/ip.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"

#if !TCP_LISTEN_BACKLOG || !MEMP_STATS
#error "fw_tcp_guard.c needs TCP_LISTEN_BACKLOG (the listener's backlog) and MEMP_STATS (the PCB pool's use)"
#endif
#if !LWIP_ARP || !LWIP_IPV4 || LWIP_IPV6
#error "fw_tcp_guard.c looks SYNs' IPv4 source addresses up in the ARP table (LWIP_ARP, IPv4 only)"
#endif
_Static_assert(FW_TCP_UNRESOLVED_HALF_OPEN >= 1 && FW_TCP_UNRESOLVED_HALF_OPEN < FW_ARP_TABLE_SIZE,
               "a SYN flood's pending ARP entries leave room for the stable ones");

/* A half-open connection and when its SYN arrived. The hook runs before lwIP creates the
 * connection, so it announces it (pcb NULL, its addresses); the next scan finds it. */
struct half_open {
    bool used;
    struct tcp_pcb *pcb; /* NULL: announced by its SYN, not found yet */
    u32_t remote;        /* network order */
    u16_t remote_port;
    u16_t local_port;
    u32_t since_ms;
};

/* every PCB may be half-open, and one more announced */
static struct half_open table[MEMP_NUM_TCP_PCB + 1];

/* A SYN answered although the DUT held no ARP entry for its on-link source: lwIP queued its SYN-ACK
 * on a new pending ARP entry (etharp_query). It takes one of FW_TCP_UNRESOLVED_HALF_OPEN places
 * while that entry may exist: while its half-open connection exists (which re-sends the SYN-ACK)
 * and FW_TCP_UNRESOLVED_ARP_MS after it is gone, unless the address answers ARP first (its entry
 * is stable then, nothing of it pending). */
struct unresolved {
    bool used;
    bool gone;          /* its half-open connection is gone (reaped, evicted, reset, never created) */
    u8_t netif_idx;     /* the netif the SYN came in on, whose ARP entry it is */
    u32_t remote;       /* network order */
    u16_t remote_port;
    u16_t local_port;
    u32_t gone_ms;      /* when it was found gone */
};

static struct unresolved unresolved[FW_TCP_UNRESOLVED_HALF_OPEN];
static struct fw_tcp_guard_counts counts;
static bool timer_armed;

struct fw_tcp_guard_counts fw_tcp_guard_counts(void)
{
    return counts;
}

void fw_tcp_guard_reset(void)
{
    memset(&counts, 0, sizeof counts);
}

static bool same_connection(const struct half_open *e, const struct tcp_pcb *pcb)
{
    return e->remote == ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) && e->remote_port == pcb->remote_port &&
           e->local_port == pcb->local_port;
}

static bool tracked(const struct tcp_pcb *pcb)
{
    for (size_t i = 0; i < LWIP_ARRAYSIZE(table); i++) {
        if (table[i].used && table[i].pcb == pcb) {
            return true;
        }
    }
    return false;
}

static bool half_open_now(const struct half_open *e)
{
    for (const struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb == e->pcb) {
            return pcb->state == SYN_RCVD && same_connection(e, pcb);
        }
    }
    return false;
}

static struct half_open *free_entry(void)
{
    for (size_t i = 0; i < LWIP_ARRAYSIZE(table); i++) {
        if (!table[i].used) {
            return &table[i];
        }
    }
    return NULL;
}

/* Brings the table up to date with lwIP's half-open connections at now_ms: gone ones forgotten,
 * announced ones found, any other one (created while the guard was off) stamped now. */
static void scan(u32_t now_ms)
{
    for (size_t i = 0; i < LWIP_ARRAYSIZE(table); i++) {
        struct half_open *e = &table[i];
        if (e->used && e->pcb != NULL && !half_open_now(e)) {
            e->used = false; /* established, reset, aborted or timed out by lwIP */
        }
    }
    for (size_t i = 0; i < LWIP_ARRAYSIZE(table); i++) {
        struct half_open *e = &table[i];
        if (!e->used || e->pcb != NULL) {
            continue;
        }
        e->used = false; /* lwIP did not create it (no PCB), unless found */
        for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
            if (pcb->state == SYN_RCVD && same_connection(e, pcb) && !tracked(pcb)) {
                e->pcb = pcb;
                e->used = true;
                break;
            }
        }
    }
    for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        struct half_open *e;
        if (pcb->state == SYN_RCVD && !tracked(pcb) && (e = free_entry()) != NULL) {
            *e = (struct half_open){true, pcb, ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)), pcb->remote_port,
                                    pcb->local_port, now_ms};
        }
    }
}

/* The oldest known half-open connection, of `listener` (NULL: of any). */
static struct half_open *oldest(const struct tcp_pcb_listen *listener, u32_t now_ms)
{
    struct half_open *found = NULL;
    for (size_t i = 0; i < LWIP_ARRAYSIZE(table); i++) {
        struct half_open *e = &table[i];
        if (!e->used || e->pcb == NULL || (listener != NULL && e->pcb->listener != listener)) {
            continue;
        }
        if (found == NULL || (u32_t)(now_ms - e->since_ms) > (u32_t)(now_ms - found->since_ms)) {
            found = e;
        }
    }
    return found;
}

/* The half-open connection of an unresolved source's place is gone now (the guard aborts it). */
static void unresolved_gone(const struct tcp_pcb *pcb, u32_t now_ms)
{
    for (size_t i = 0; i < LWIP_ARRAYSIZE(unresolved); i++) {
        struct unresolved *u = &unresolved[i];
        if (u->used && !u->gone && u->remote == ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) &&
            u->remote_port == pcb->remote_port && u->local_port == pcb->local_port) {
            u->gone = true;
            u->gone_ms = now_ms;
        }
    }
}

/* Aborts a half-open connection without a RST (lwIP frees it and gives its listener's backlog
 * back; a SYN_RCVD connection has no error callback to call). */
static void drop(struct half_open *e, uint32_t *counter)
{
    struct tcp_pcb *pcb = e->pcb;
    e->used = false;
    unresolved_gone(pcb, sys_now());
    tcp_abandon(pcb, 0);
    (*counter)++;
}

/* Whether tcp_alloc would fail now: the pool is full and holds nothing lwIP frees itself for a new
 * connection (TIME_WAIT, LAST_ACK, CLOSING). */
static bool pool_full(void)
{
    const struct stats_mem *m = lwip_stats.memp[MEMP_TCP_PCB];
    if (m->used < m->avail || tcp_tw_pcbs != NULL) {
        return false;
    }
    for (const struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb->state == LAST_ACK || pcb->state == CLOSING) {
            return false;
        }
    }
    return true;
}

/* Whether the DUT holds a stable ARP entry for addr (network order) on the netif of that index;
 * lwIP's pending entries (an ARP request unanswered) are not: etharp_find_addr skips them. */
static bool resolved(u8_t netif_idx, u32_t addr)
{
    struct netif *netif = netif_get_by_index(netif_idx);
    ip4_addr_t a;
    ip4_addr_set_u32(&a, addr);
    struct eth_addr *eth;
    const ip4_addr_t *found;
    return netif != NULL && etharp_find_addr(netif, &a, &eth, &found) >= 0;
}

/* Brings the unresolved sources' places up to date at now_ms: a place whose address answered ARP,
 * or whose half-open connection has been gone FW_TCP_UNRESOLVED_ARP_MS (its pending ARP entry
 * expired), is free again. A connection lwIP ended itself (a RST, or a SYN it did not take) is
 * found gone here, later than it went: the place is held longer, never shorter. */
static void unresolved_refresh(u32_t now_ms)
{
    for (size_t i = 0; i < LWIP_ARRAYSIZE(unresolved); i++) {
        struct unresolved *u = &unresolved[i];
        if (!u->used) {
            continue;
        }
        if (netif_get_by_index(u->netif_idx) == NULL || resolved(u->netif_idx, u->remote)) {
            u->used = false; /* a stable entry (or no netif, no entries): nothing of it pending */
            continue;
        }
        if (!u->gone) {
            bool alive = false;
            for (const struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL && !alive; pcb = pcb->next) {
                alive = pcb->state == SYN_RCVD && u->remote == ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) &&
                        u->remote_port == pcb->remote_port && u->local_port == pcb->local_port;
            }
            if (!alive) {
                u->gone = true;
                u->gone_ms = now_ms;
            }
        }
        if (u->gone && (u32_t)(now_ms - u->gone_ms) >= FW_TCP_UNRESOLVED_ARP_MS) {
            u->used = false;
        }
    }
}

/* Whether `addr` holds a connection with the DUT past its handshake (any state but SYN_SENT and
 * SYN_RCVD, TIME_WAIT too): it answered the DUT's SYN-ACK or SYN at that address, so it is a real
 * host there and answers ARP, which a spoofed source of a flood never does. */
static bool connected(const ip4_addr_t *addr)
{
    for (const struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb->state != SYN_SENT && pcb->state != SYN_RCVD && ip4_addr_cmp(ip_2_ip4(&pcb->remote_ip), addr)) {
            return true;
        }
    }
    for (const struct tcp_pcb *pcb = tcp_tw_pcbs; pcb != NULL; pcb = pcb->next) {
        if (ip4_addr_cmp(ip_2_ip4(&pcb->remote_ip), addr)) {
            return true;
        }
    }
    return false;
}

/* Whether the SYN being received (lwIP's current IPv4 packet) is answered: always from an off-link
 * source (its SYN-ACK goes to the gateway's entry), from one the DUT holds an ARP entry for, or from
 * one that holds a connection with the DUT; from another on-link one while a place is free, which it
 * takes. */
static bool unresolved_admit(const struct tcp_hdr *hdr)
{
    struct netif *inp = ip_current_input_netif();
    const ip4_addr_t *src = ip4_current_src_addr();
    /* on-link as etharp_output decides it: the netif's subnet, or link-local */
    if (inp == NULL || (inp->flags & NETIF_FLAG_ETHARP) == 0 ||
        (!ip4_addr_netcmp(src, netif_ip4_addr(inp), netif_ip4_netmask(inp)) && !ip4_addr_islinklocal(src))) {
        return true;
    }
    const u8_t idx = netif_get_index(inp);
    if (resolved(idx, ip4_addr_get_u32(src))) {
        return true;
    }
    if (connected(src)) { /* a real host whose entry was recycled: no place of the flood's taken */
        counts.known_readmitted++;
        return true;
    }
    for (size_t i = 0; i < LWIP_ARRAYSIZE(unresolved); i++) {
        if (!unresolved[i].used) {
            unresolved[i] = (struct unresolved){true, false, idx, ip4_addr_get_u32(src), hdr->src, hdr->dest, 0};
            return true;
        }
    }
    return false;
}

static void reap(void *arg);

/* Arms the reaping timeout for the oldest known half-open connection (none known: not armed). New
 * connections are always younger than the ones the armed timeout serves. */
static void arm(u32_t now_ms)
{
    if (timer_armed) {
        return;
    }
    struct half_open *first = NULL;
    for (size_t i = 0; i < LWIP_ARRAYSIZE(table); i++) {
        const struct half_open *e = &table[i];
        if (e->used && (first == NULL || (u32_t)(now_ms - e->since_ms) > (u32_t)(now_ms - first->since_ms))) {
            first = &table[i];
        }
    }
    if (first == NULL) {
        return;
    }
    u32_t age = now_ms - first->since_ms;
    u32_t wait = age < FW_TCP_HALF_OPEN_MAX_MS ? FW_TCP_HALF_OPEN_MAX_MS - age : 1u;
    sys_timeout(wait, reap, NULL);
    timer_armed = true;
}

static void reap(void *arg)
{
    (void)arg;
    timer_armed = false;
    if (!fw_guard_on(FW_GUARD_TCP_HALF_OPEN)) { /* a planted defect: lwIP's own 20 s */
        memset(table, 0, sizeof table);
        return;
    }
    u32_t now = sys_now();
    scan(now);
    for (size_t i = 0; i < LWIP_ARRAYSIZE(table); i++) {
        struct half_open *e = &table[i];
        if (e->used && e->pcb != NULL && (u32_t)(now - e->since_ms) >= FW_TCP_HALF_OPEN_MAX_MS) {
            drop(e, &counts.reaped);
        }
    }
    if (fw_guard_on(FW_GUARD_SYN_UNRESOLVED)) {
        unresolved_refresh(now);
    }
    arm(now);
}

/*
 * A segment of a synchronized connection whose ACK acknowledges data the DUT never sent (SEG.ACK >
 * SND.NXT): RFC 793 (and RFC 5961 5.2) says send an ACK and drop the segment. lwIP 2.1.3 sends the
 * ACK but still takes the segment's data (tcp_receive), so a forged segment at the connection's
 * receive edge moved the DUT's rcv_nxt past what the real peer sent: the peer's own segments were
 * then old to the DUT, and the connection stalled until a retransmission timeout. Dropped here,
 * before lwIP sees it. A RST or SYN goes on to lwIP's own checks (RFC 5961 3 and 4).
 */
static bool acks_unsent(const struct tcp_pcb *pcb, const struct tcp_hdr *hdr)
{
    u8_t flags = TCPH_FLAGS(hdr);
    return pcb->state >= ESTABLISHED && pcb->state != TIME_WAIT && (flags & TCP_ACK) != 0 &&
           (flags & (TCP_RST | TCP_SYN)) == 0 && TCP_SEQ_GT(hdr->ackno, pcb->snd_nxt);
}

err_t fw_tcp_guard_inpacket(struct tcp_pcb *pcb, const struct tcp_hdr *hdr)
{
    if (pcb->state != LISTEN && acks_unsent(pcb, hdr) && fw_guard_on(FW_GUARD_TCP_ACK_UNSENT)) {
        counts.acks_unsent++;
        tcp_send_empty_ack(pcb);
        return ERR_RTE; /* dropped: not an ACK of anything, and its data not the peer's */
    }
    /* only a SYN to a listener (lwIP has turned the header's numbers to host order, not its flags) */
    if (pcb->state != LISTEN || (TCPH_FLAGS(hdr) & (TCP_SYN | TCP_ACK | TCP_RST)) != TCP_SYN) {
        return ERR_OK;
    }
    u32_t now = sys_now();
    if (fw_guard_on(FW_GUARD_SYN_UNRESOLVED)) { /* off: a planted defect (evict_arp_for_syn) */
        unresolved_refresh(now);
        if (!unresolved_admit(hdr)) {
            counts.unresolved_dropped++;
            return ERR_RTE; /* lwIP drops it: no PCB, no SYN-ACK, no ARP entry, no half-open evicted */
        }
    }
    if (!fw_guard_on(FW_GUARD_TCP_HALF_OPEN)) {
        return ERR_OK;
    }
    struct tcp_pcb_listen *listener = (struct tcp_pcb_listen *)pcb;
    scan(now);
    struct half_open *victim;
    if (listener->accepts_pending >= listener->backlog && (victim = oldest(listener, now)) != NULL) {
        drop(victim, &counts.evicted);
    }
    if (pool_full() && (victim = oldest(NULL, now)) != NULL) {
        drop(victim, &counts.evicted);
    }
    struct half_open *e = free_entry();
    if (e != NULL) {
        *e = (struct half_open){true, NULL, ip4_addr_get_u32(ip_2_ip4(ip_current_src_addr())), hdr->src, hdr->dest,
                                now};
    }
    arm(now);
    return ERR_OK;
}

bool fw_tcp_guard_make_room(void)
{
    if (!fw_guard_on(FW_GUARD_TCP_HALF_OPEN)) {
        return false;
    }
    u32_t now = sys_now();
    scan(now);
    struct half_open *victim = oldest(NULL, now);
    if (victim == NULL) {
        return false;
    }
    drop(victim, &counts.evicted);
    return true;
}

unsigned fw_tcp_guard_half_open(void)
{
    scan(sys_now());
    unsigned n = 0;
    for (size_t i = 0; i < LWIP_ARRAYSIZE(table); i++) {
        n += table[i].used && table[i].pcb != NULL;
    }
    return n;
}
