#include "host_bridge.h"

#include <stdio.h>
#include <string.h>

#include "fw_app.h"
#include "fw_bridge_fdb.h"
#include "fw_config.h"
#include "fw_out.h"
#include "netif/bridgeif.h"
#include "netif/ethernet.h"

#if !defined(FW_BRIDGE) || !LWIP_NUM_NETIF_CLIENT_DATA || LWIP_SINGLE_NETIF
#error "host_bridge.c is the bridge variant's (FW_BRIDGE: lwipopts.h then allows several netifs)"
#endif

static struct {
    struct netif bridge;
    struct netif ports[FW_BRIDGE_PORTS];
    netif_input_fn forward[FW_BRIDGE_PORTS]; /* each port's input as bridgeif_add_port set it (bridgeif's) */
    struct tapif *taps;
    size_t count;
    uint32_t reserved_drop; /* frames to an 802.1D reserved group address, dropped (bridge_reserved_drop) */
    uint32_t runt_drop;     /* frames shorter than an Ethernet header, dropped (bridge_runt_drop) */
} br;

static void report_identity(void)
{
    fw_printf(" bridge_ports=%u bridge_fdb_size=%u", (unsigned)br.count, (unsigned)FW_BRIDGE_FDB_SIZE);
}

static void report_stats_text(void)
{
    fw_printf("bridge ports=%u fdb=%u fdb_size=%u fdb_learned=%lu fdb_moves_held=%lu fdb_not_learned=%lu"
              " fdb_age_s=%u reserved_drop=%lu runt_drop=%lu\r\n",
              (unsigned)br.count, fw_bridge_fdb_count(), (unsigned)FW_BRIDGE_FDB_SIZE,
              (unsigned long)fw_bridge_fdb_learned(), (unsigned long)fw_bridge_fdb_moves_held(),
              (unsigned long)fw_bridge_fdb_not_learned(), (unsigned)FW_BRIDGE_FDB_AGE_S, (unsigned long)br.reserved_drop, (unsigned long)br.runt_drop);
    for (size_t i = 0; i < br.count; i++) {
        const struct tapif *t = &br.taps[i];
        fw_printf("port%u  %-8s rx=%lu tx=%lu drop=%lu rx_drop=%lu tx_drop=%lu\r\n", (unsigned)i, t->ifname,
                  (unsigned long)t->rx, (unsigned long)t->tx, (unsigned long)(t->rx_drop + t->tx_drop),
                  (unsigned long)t->rx_drop, (unsigned long)t->tx_drop);
    }
}

static void report_stats_fields(void)
{
    fw_printf(" bridge_ports=%u bridge_fdb=%u bridge_fdb_size=%u bridge_fdb_learned=%lu bridge_fdb_moves_held=%lu"
              " bridge_fdb_not_learned=%lu bridge_reserved_drop=%lu bridge_runt_drop=%lu",
              (unsigned)br.count, fw_bridge_fdb_count(), (unsigned)FW_BRIDGE_FDB_SIZE,
              (unsigned long)fw_bridge_fdb_learned(), (unsigned long)fw_bridge_fdb_moves_held(),
              (unsigned long)fw_bridge_fdb_not_learned(), (unsigned long)br.reserved_drop, (unsigned long)br.runt_drop);
    for (size_t i = 0; i < br.count; i++) {
        const struct tapif *t = &br.taps[i];
        fw_printf(" port%u_rx=%lu port%u_tx=%lu port%u_drop=%lu", (unsigned)i, (unsigned long)t->rx, (unsigned)i,
                  (unsigned long)t->tx, (unsigned)i, (unsigned long)(t->rx_drop + t->tx_drop));
    }
}

static void report_stats_reset(void)
{
    for (size_t i = 0; i < br.count; i++) {
        tapif_reset_counters(&br.taps[i]);
    }
    fw_bridge_fdb_reset_counters();
    br.reserved_drop = 0;
    br.runt_drop = 0;
}

/*
 * A port's input in front of bridgeif's. IEEE 802.1D (7.12.6) reserves the group addresses
 * 01-80-C2-00-00-00 ... 0F for the link's own protocols (STP BPDUs, pause frames, LACP, 802.1X,
 * LLDP): a bridge never forwards them. lwIP's bridgeif floods every group address that no static
 * FDB entry names (bridgeif.c, bridgeif_find_dst_ports: `if (dst_addr->addr[0] & 1) ... return
 * BR_FLOOD;`), so they are dropped here, counted, before it sees them; the bridge runs none of those
 * protocols itself, so they are not for the management netif either. A frame shorter than an
 * Ethernet header is dropped too: bridgeif_input reads both addresses without a length check.
 */
static err_t port_input(struct pbuf *p, struct netif *netif)
{
    const u8_t i = (u8_t)(netif - br.ports);
    if (p->len < SIZEOF_ETH_HDR) {
        br.runt_drop++;
        pbuf_free(p);
        return ERR_OK;
    }
    const uint8_t *dst = (const uint8_t *)p->payload;
    if (dst[0] == 0x01 && dst[1] == 0x80 && dst[2] == 0xc2 && dst[3] == 0x00 && dst[4] == 0x00 &&
        (dst[5] & 0xf0u) == 0x00) {
        br.reserved_drop++;
        pbuf_free(p);
        return ERR_OK;
    }
    return br.forward[i](p, netif);
}

/*
 * The bridge netif's input: bridgeif hands it frames for the bridge itself with the receiving
 * port's index in p->if_idx, and bridgeif never sends a frame back out of the port whose index it
 * carries. lwIP answers an echo request in the request's own pbuf, so that reply would be dropped:
 * the frame is marked as received on the bridge netif instead (what ethernet_input sets itself
 * for a frame without an index).
 */
static err_t bridge_input(struct pbuf *p, struct netif *netif)
{
    p->if_idx = netif_get_index(netif);
    return ethernet_input(p, netif);
}

static const struct fw_app_report bridge_report = {
    "bridge", report_identity, report_stats_text, report_stats_fields, report_stats_reset,
};

struct netif *host_bridge_add(struct tapif *taps, size_t count, const uint8_t mac[6], const ip4_addr_t *ip,
                              const ip4_addr_t *mask, const ip4_addr_t *gw)
{
    if (count == 0 || count > FW_BRIDGE_PORTS) {
        fprintf(stderr, "hil-fw-host: the bridge takes 1..%u ports\n", (unsigned)FW_BRIDGE_PORTS);
        return NULL;
    }
    br.taps = taps;
    br.count = count;
    static bridgeif_initdata_t init;
    memcpy(init.ethaddr.addr, mac, sizeof init.ethaddr.addr);
    init.max_ports = (u8_t)count;
    init.max_fdb_dynamic_entries = FW_BRIDGE_FDB_SIZE;
    init.max_fdb_static_entries = FW_BRIDGE_FDB_STATIC;
    if (netif_add(&br.bridge, ip, mask, gw, &init, bridgeif_init, bridge_input) == NULL) {
        fprintf(stderr, "hil-fw-host: cannot add the bridge netif (lwIP heap: MEM_SIZE)\n");
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        /* a port's own MAC never goes on the wire (frames to it would stop at the bridge) */
        memcpy(taps[i].mac, mac, sizeof taps[i].mac);
        taps[i].mac[4] = (uint8_t)(taps[i].mac[4] ^ (0xb0u + i));
        if (netif_add(&br.ports[i], NULL, NULL, NULL, &taps[i], tapif_init, ethernet_input) == NULL ||
            bridgeif_add_port(&br.bridge, &br.ports[i]) != ERR_OK) {
            fprintf(stderr, "hil-fw-host: cannot add %s as a bridge port\n", taps[i].ifname);
            return NULL;
        }
        br.forward[i] = br.ports[i].input; /* bridgeif's, behind the reserved-address filter */
        br.ports[i].input = port_input;
        netif_set_up(&br.ports[i]);
    }
    netif_set_default(&br.bridge);
    netif_set_up(&br.bridge);
    fw_app_set_report(&bridge_report);
    return &br.bridge;
}

struct netif *host_bridge_port(size_t i)
{
    return i < br.count ? &br.ports[i] : NULL;
}
