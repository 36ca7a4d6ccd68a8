/* fw_arp_guard.c - unsolicited ARP never re-points an ARP entry (fw_arp_guard.h). */
#include "fw_arp_guard.h"

#include <string.h>

#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "lwip/etharp.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/prot/etharp.h"
#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/sys.h"

#if !LWIP_ARP || !LWIP_ETHERNET || ETHARP_SUPPORT_VLAN
#error "fw_arp_guard.c reads untagged Ethernet ARP frames (LWIP_ARP, LWIP_ETHERNET, no ETHARP_SUPPORT_VLAN)"
#endif

/* An Ethernet frame carrying an ARP packet for IPv4 over Ethernet, as etharp_input reads it */
#define ARP_FRAME_LEN (SIZEOF_ETH_HDR + SIZEOF_ETHARP_HDR) /* 14 + 28 */
#define OFF_TYPE 12
#define OFF_HWTYPE (SIZEOF_ETH_HDR + 0)
#define OFF_PROTO (SIZEOF_ETH_HDR + 2)
#define OFF_HWLEN (SIZEOF_ETH_HDR + 4)
#define OFF_PROTOLEN (SIZEOF_ETH_HDR + 5)
#define OFF_OPCODE (SIZEOF_ETH_HDR + 6)
#define OFF_SHWADDR (SIZEOF_ETH_HDR + 8)
#define OFF_SIPADDR (SIZEOF_ETH_HDR + 14)
#define OFF_DIPADDR (SIZEOF_ETH_HDR + 24)

struct asked {
    bool used;
    ip4_addr_t ip;
    u32_t at_ms; /* sys_now() when the DUT last sent a request for ip */
};

static struct {
    struct netif *netif;
    netif_input_fn input;           /* the netif's input the guard is in front of */
    netif_linkoutput_fn linkoutput; /* the netif's link output the guard watches */
    netif_output_fn output;         /* the netif's IPv4 output (etharp_output) the guard is in front of */
    uint32_t ignored;
    uint32_t unresolved_answers; /* answers not sent to on-link addresses without an ARP entry */
    struct asked resolving[FW_ARP_GUARD_UNRESOLVED_ANSWERS]; /* answers' addresses being resolved */
    struct asked asked[FW_ARP_GUARD_ASKED];
} g;

static u16_t get16(const u8_t *b)
{
    return (u16_t)((b[0] << 8) | b[1]);
}

static ip4_addr_t get_ip(const u8_t *b)
{
    ip4_addr_t a;
    memcpy(&a.addr, b, sizeof a.addr); /* network order, as ip4_addr_t holds it */
    return a;
}

/* The ARP packet in a frame, if lwIP would read one there (IPv4 over Ethernet): its first byte. */
static const u8_t *arp_packet(const struct pbuf *p)
{
    const u8_t *f = (const u8_t *)p->payload;
    if (p->len < ARP_FRAME_LEN || get16(f + OFF_TYPE) != ETHTYPE_ARP || get16(f + OFF_HWTYPE) != 1u ||
        get16(f + OFF_PROTO) != ETHTYPE_IP || f[OFF_HWLEN] != ETH_HWADDR_LEN || f[OFF_PROTOLEN] != sizeof(ip4_addr_t)) {
        return NULL;
    }
    return f;
}

static bool expired(const struct asked *a, u32_t now)
{
    return !a->used || (u32_t)(now - a->at_ms) > FW_ARP_GUARD_ANSWER_MS;
}

static int asked_slot(const ip4_addr_t *ip)
{
    const u32_t now = sys_now();
    for (int i = 0; i < FW_ARP_GUARD_ASKED; i++) {
        const struct asked *a = &g.asked[i];
        if (!expired(a, now) && ip4_addr_cmp(&a->ip, ip)) {
            return i;
        }
    }
    return -1;
}

static void remember(const ip4_addr_t *ip)
{
    const u32_t now = sys_now();
    struct asked *slot = &g.asked[0]; /* the address's own, else a free or expired one, else the oldest */
    for (int i = 0; i < FW_ARP_GUARD_ASKED; i++) {
        struct asked *a = &g.asked[i];
        if (a->used && ip4_addr_cmp(&a->ip, ip)) {
            slot = a;
            break;
        }
        if (!expired(slot, now) && (expired(a, now) || (u32_t)(now - a->at_ms) > (u32_t)(now - slot->at_ms))) {
            slot = a;
        }
    }
    slot->used = true;
    slot->ip = *ip;
    slot->at_ms = now;
}

/* Whether the guard drops this frame (guard on). Frames that are not ARP pass. */
static bool ignore(struct netif *netif, const struct pbuf *p)
{
    if (p->len < SIZEOF_ETH_HDR || get16((const u8_t *)p->payload + OFF_TYPE) != ETHTYPE_ARP) {
        return false; /* not ARP (ethernet_input drops a frame of a header or less itself) */
    }
    if (p->len < ARP_FRAME_LEN) {
        return true; /* etharp_input would read its header past the frame's end */
    }
    const u8_t *f = arp_packet(p);
    if (f == NULL) {
        return false; /* not IPv4 over Ethernet: etharp_input drops it itself (proterr) */
    }
    const u16_t op = get16(f + OFF_OPCODE);
    const u8_t *shw = f + OFF_SHWADDR;
    const ip4_addr_t sip = get_ip(f + OFF_SIPADDR), dip = get_ip(f + OFF_DIPADDR);
    if (ip4_addr_isany_val(sip) || ip4_addr_isbroadcast(&sip, netif) || ip4_addr_ismulticast(&sip)) {
        return false; /* etharp_update_arp_entry refuses it itself */
    }
    const bool for_us = !ip4_addr_isany_val(*netif_ip4_addr(netif)) && ip4_addr_cmp(&dip, netif_ip4_addr(netif));
    struct eth_addr *known = NULL;
    const ip4_addr_t *known_ip = NULL;
    const bool stable = etharp_find_addr(netif, &sip, &known, &known_ip) >= 0;
    const int asked = asked_slot(&sip);
    /* the answer to the DUT's own request: a reply to it, or anything naming a pending address */
    const bool answer = asked >= 0 && (!stable || (for_us && op == ARP_REPLY));
    if (stable && memcmp(known->addr, shw, ETH_HWADDR_LEN) == 0) {
        if (answer) {
            g.asked[asked].used = false; /* confirmed: later replies are unsolicited again */
        }
        return false; /* changes nothing (refreshes the entry) */
    }
    if (!stable && !for_us && !answer) {
        return false; /* lwIP looks for an entry only (ETHARP_FLAG_FIND_ONLY) and finds none */
    }
    static const u8_t zero[ETH_HWADDR_LEN];
    if ((shw[0] & 1u) != 0 || memcmp(shw, zero, ETH_HWADDR_LEN) == 0) {
        return true; /* an entry never points at a group or an all-zero address */
    }
    if (answer) {
        g.asked[asked].used = false;
        return false;
    }
    if (!(for_us && op == ARP_REQUEST)) {
        return true; /* unsolicited: a reply nobody asked for, gratuitous ARP, another opcode */
    }
    if (!stable) {
        return false; /* a host asking for the DUT: lwIP answers and learns it */
    }
    /* a request from an address whose stable entry names another MAC (a forged request, or a host
     * whose interface changed): not taken; the DUT asks where that address is, and the answer to
     * its own request decides (the real owner answers it) */
    if (asked < 0) {
        etharp_request(netif, &sip);
    }
    return true;
}

static err_t guard_input(struct pbuf *p, struct netif *netif)
{
    if (fw_guard_on(FW_GUARD_ARP_CHANGES) && ignore(netif, p)) {
        g.ignored++;
        pbuf_free(p);
        return ERR_OK;
    }
    return g.input(p, netif);
}

static err_t guard_linkoutput(struct netif *netif, struct pbuf *p)
{
    const u8_t *f = arp_packet(p);
    if (f != NULL && get16(f + OFF_OPCODE) == ARP_REQUEST) {
        const ip4_addr_t sip = get_ip(f + OFF_SIPADDR), dip = get_ip(f + OFF_DIPADDR);
        if (ip4_addr_cmp(&sip, netif_ip4_addr(netif)) && !ip4_addr_cmp(&dip, &sip)) {
            remember(&dip); /* the DUT asks where dip is (not its own announcement) */
        }
    }
    return g.linkoutput(netif, p);
}

/* An answer the DUT would resolve an address for: a TCP reset, an ICMP error or echo reply to an
 * on-link address it holds no ARP entry for. A host that talks to the DUT asked for the DUT's
 * address first (the DUT then holds its entry); one nobody answers for is a spoofed source, and
 * resolving it (lwIP's etharp_query, ETHARP_FLAG_TRY_HARD) recycles the oldest stable entry: a
 * flood of such sources evicted the DUT's entry for its real peer again and again. */
static bool unresolved_answer(struct netif *netif, const struct pbuf *p, const ip4_addr_t *dst)
{
    if (ip4_addr_isbroadcast(dst, netif) || ip4_addr_ismulticast(dst) ||
        !ip4_addr_netcmp(dst, netif_ip4_addr(netif), netif_ip4_netmask(netif))) {
        return false; /* not resolved for itself: off-link goes to the gateway's entry */
    }
    struct eth_addr *known = NULL;
    const ip4_addr_t *known_ip = NULL;
    if (etharp_find_addr(netif, dst, &known, &known_ip) >= 0 || p->len < IP_HLEN) {
        return false;
    }
    const u8_t *ip = (const u8_t *)p->payload;
    const u16_t hlen = (u16_t)((ip[0] & 0x0fu) * 4u);
    if (ip[9] == IP_PROTO_TCP && p->len >= hlen + TCP_HLEN) {
        return (ip[hlen + 13] & TCP_RST) != 0;
    }
    if (ip[9] == IP_PROTO_ICMP && p->len > hlen) {
        const u8_t type = ip[hlen];
        return type == 0 || type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
    }
    return false;
}

/* Whether an answer to the unresolved dst may make lwIP resolve it: its address already being
 * resolved, or a free place of FW_ARP_GUARD_UNRESOLVED_ANSWERS (held FW_TCP_UNRESOLVED_ARP_MS, as
 * lwIP's pending entry lives). A real host whose entry the DUT lost (the DUT restarted, the host
 * kept the DUT's) is resolved by its first answer; a flood of spoofed sources holds no more than
 * these places of the ARP table, never its stable entries. */
static bool may_resolve(const ip4_addr_t *dst)
{
    const u32_t now = sys_now();
    struct asked *free_slot = NULL;
    for (size_t i = 0; i < FW_ARP_GUARD_UNRESOLVED_ANSWERS; i++) {
        struct asked *r = &g.resolving[i];
        bool live = r->used && (u32_t)(now - r->at_ms) < FW_TCP_UNRESOLVED_ARP_MS;
        if (live && ip4_addr_cmp(&r->ip, dst)) {
            return true;
        }
        if (!live && free_slot == NULL) {
            free_slot = r;
        }
    }
    if (free_slot == NULL) {
        return false;
    }
    free_slot->used = true;
    free_slot->ip = *dst;
    free_slot->at_ms = now;
    return true;
}

static err_t guard_output(struct netif *netif, struct pbuf *p, const ip4_addr_t *ipaddr)
{
    if (fw_guard_on(FW_GUARD_SYN_UNRESOLVED) && unresolved_answer(netif, p, ipaddr) && !may_resolve(ipaddr)) {
        g.unresolved_answers++;
        return ERR_OK; /* not sent (the caller frees p, as after any output) */
    }
    return g.output(netif, p, ipaddr);
}

bool fw_arp_guard_attach(struct netif *netif)
{
    if (g.netif != NULL || netif == NULL || netif->input == NULL || netif->linkoutput == NULL) {
        return false;
    }
    g.netif = netif;
    g.input = netif->input;
    g.linkoutput = netif->linkoutput;
    g.output = netif->output;
    netif->input = guard_input;
    netif->linkoutput = guard_linkoutput;
    if (netif->output != NULL) {
        netif->output = guard_output;
    }
    return true;
}

uint32_t fw_arp_guard_ignored(void)
{
    return g.ignored;
}

uint32_t fw_arp_guard_unresolved_answers(void)
{
    return g.unresolved_answers;
}

void fw_arp_guard_reset(void)
{
    g.ignored = 0;
    g.unresolved_answers = 0;
}
