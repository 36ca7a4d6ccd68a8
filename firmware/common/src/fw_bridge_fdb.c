#include "fw_bridge_fdb.h"

#include <stdbool.h>
#include <string.h>

#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "lwip/sys.h"
#include "netif/bridgeif.h"

#define AGE_MS ((u32_t)FW_BRIDGE_FDB_AGE_S * 1000u)

struct fdb_entry {
    bool used;
    u8_t port;
    u32_t heard_ms; /* sys_now() when the address last appeared as a source */
    u32_t since_ms; /* sys_now() when it was learned on its port */
    struct eth_addr addr;
};

static struct {
    bool in_use; /* handed to a bridge by bridgeif_fdb_init */
    u16_t size;  /* entries the bridge asked for, at most FW_BRIDGE_FDB_SIZE */
    uint32_t learned;
    uint32_t moves_held; /* frames from another port while the address was heard on its own */
    uint32_t not_learned; /* new addresses while every entry was heard within FW_BRIDGE_FDB_FULL_KEEP_MS */
    struct fdb_entry entries[FW_BRIDGE_FDB_SIZE];
} fdb;

static bool expired(const struct fdb_entry *e, u32_t now)
{
    return (u32_t)(now - e->heard_ms) > AGE_MS;
}

void *bridgeif_fdb_init(u16_t max_fdb_entries)
{
    if (fdb.in_use || max_fdb_entries == 0 || max_fdb_entries > FW_BRIDGE_FDB_SIZE) {
        return NULL; /* bridgeif_init then fails with ERR_MEM */
    }
    memset(&fdb, 0, sizeof fdb);
    fdb.in_use = true;
    fdb.size = max_fdb_entries;
    return &fdb;
}

void bridgeif_fdb_update_src(void *fdb_ptr, struct eth_addr *src_addr, u8_t port_idx)
{
    (void)fdb_ptr;
    u32_t now = sys_now();
    struct fdb_entry *slot = NULL; /* a free or expired entry, else the live one heard longest ago */
    bool slot_live = false;
    for (u16_t i = 0; i < fdb.size; i++) {
        struct fdb_entry *e = &fdb.entries[i];
        if (e->used && memcmp(&e->addr, src_addr, sizeof e->addr) == 0) {
            if (e->port != port_idx && !expired(e, now) && !fw_guard_on(FW_GUARD_FDB_MOVES)) {
                e->heard_ms = now; /* the planted defect (fdb_never_moves): a station never moves */
                return;
            }
            if (e->port != port_idx && (u32_t)(now - e->heard_ms) < FW_BRIDGE_FDB_MOVE_HOLD_MS &&
                (u32_t)(now - e->since_ms) >= FW_BRIDGE_FDB_MOVE_HOLD_MS) {
                fdb.moves_held++; /* settled on its port and heard there just now: a frame from elsewhere is forged */
                return;
            }
            if (e->port != port_idx) {
                e->since_ms = now;
            }
            if (e->port != port_idx || expired(e, now)) {
                fdb.learned++; /* moved to another port, or back after ageing out */
            }
            e->port = port_idx;
            e->heard_ms = now;
            return;
        }
        bool live = e->used && !expired(e, now);
        if (slot == NULL || (slot_live && !live) ||
            (slot_live && live && (u32_t)(now - e->heard_ms) > (u32_t)(now - slot->heard_ms))) {
            slot = e;
            slot_live = live;
        }
    }
    if (slot == NULL) {
        return; /* no table (size 0) */
    }
    if (slot_live && (u32_t)(now - slot->heard_ms) < FW_BRIDGE_FDB_FULL_KEEP_MS) {
        fdb.not_learned++; /* full of stations heard just now: a flood of new sources evicts none (frames to it flood) */
        return;
    }
    slot->used = true;
    slot->port = port_idx;
    slot->heard_ms = now;
    slot->since_ms = now;
    memcpy(&slot->addr, src_addr, sizeof slot->addr);
    fdb.learned++;
}

bridgeif_portmask_t bridgeif_fdb_get_dst_ports(void *fdb_ptr, struct eth_addr *dst_addr)
{
    (void)fdb_ptr;
    for (u16_t i = 0; i < fdb.size; i++) {
        struct fdb_entry *e = &fdb.entries[i];
        if (e->used && memcmp(&e->addr, dst_addr, sizeof e->addr) == 0) {
            if (expired(e, sys_now())) {
                e->used = false;
                break;
            }
            return (bridgeif_portmask_t)(1u << e->port);
        }
    }
    return BR_FLOOD;
}

unsigned fw_bridge_fdb_count(void)
{
    u32_t now = sys_now();
    unsigned n = 0;
    for (u16_t i = 0; i < fdb.size; i++) {
        if (fdb.entries[i].used && !expired(&fdb.entries[i], now)) {
            n++;
        }
    }
    return n;
}

uint32_t fw_bridge_fdb_learned(void)
{
    return fdb.learned;
}

uint32_t fw_bridge_fdb_moves_held(void)
{
    return fdb.moves_held;
}

uint32_t fw_bridge_fdb_not_learned(void)
{
    return fdb.not_learned;
}

void fw_bridge_fdb_reset_counters(void)
{
    fdb.learned = 0;
    fdb.moves_held = 0;
    fdb.not_learned = 0;
}

void fw_bridge_fdb_flush(void)
{
    for (u16_t i = 0; i < fdb.size; i++) {
        fdb.entries[i].used = false;
    }
}
