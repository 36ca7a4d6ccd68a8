/*
 * Unit tests: the bridge variant's learning FDB (fw_bridge_fdb.c) through lwIP's bridgeif FDB
 * interface, compiled as the bridge build compiles it (FW_BRIDGE: BRIDGEIF_MAX_PORTS is
 * FW_BRIDGE_PORTS), with the test's own sys_now. A source address is learned on its port and a
 * lookup returns that port alone; an unknown destination returns BR_FLOOD, every bit set (the FDB
 * does not know the receiving port: bridgeif leaves that one out when it sends, and uses the bit
 * of the bridge netif itself only for group addresses); a station that moves is re-learned on
 * its new port and counted; an entry unheard for more than FW_BRIDGE_FDB_AGE_S is forgotten; a
 * full table replaces the entry heard longest ago; count, flush and reset_counters; the table is
 * handed out once, for 1..FW_BRIDGE_FDB_SIZE entries.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fw_bridge_fdb.h"
#include "fw_config.h"
#include "lwip/sys.h"
#include "netif/bridgeif.h"

#define AGE_MS ((u32_t)FW_BRIDGE_FDB_AGE_S * 1000u)

/* lwIP's clock as the FDB reads it; the test moves it (starts away from 0 on purpose) */
static u32_t now_ms = 5000u;

u32_t sys_now(void)
{
    return now_ms;
}

/* a locally administered unicast address numbered n */
static struct eth_addr mac(unsigned n)
{
    struct eth_addr a = {{0x02, 0x00, 0x5e, 0x10, (u8_t)(n >> 8), (u8_t)n}};
    return a;
}

static void heard(void *fdb, unsigned n, u8_t port)
{
    struct eth_addr a = mac(n);
    bridgeif_fdb_update_src(fdb, &a, port);
}

static bridgeif_portmask_t lookup(void *fdb, unsigned n)
{
    struct eth_addr a = mac(n);
    return bridgeif_fdb_get_dst_ports(fdb, &a);
}

#define PORT(i) ((bridgeif_portmask_t)(1u << (i)))

int main(void)
{
    /* the configuration the bridge build uses */
    CHECK(BRIDGEIF_MAX_PORTS == FW_BRIDGE_PORTS);
    CHECK(sizeof(bridgeif_portmask_t) == 1);
    CHECK(BR_FLOOD == (bridgeif_portmask_t)0xffu);

    /* bridgeif_init's request: 1..FW_BRIDGE_FDB_SIZE entries, one bridge per program */
    CHECK(bridgeif_fdb_init(0) == NULL);
    CHECK(bridgeif_fdb_init(FW_BRIDGE_FDB_SIZE + 1) == NULL);
    void *fdb = bridgeif_fdb_init(FW_BRIDGE_FDB_SIZE);
    CHECK(fdb != NULL);
    CHECK(bridgeif_fdb_init(FW_BRIDGE_FDB_SIZE) == NULL);
    CHECK(fw_bridge_fdb_count() == 0 && fw_bridge_fdb_learned() == 0);

    /* unknown destination: flood (every bit, ports and the bridge's own bit BRIDGEIF_MAX_PORTS) */
    CHECK(lookup(fdb, 1) == BR_FLOOD);
    CHECK((lookup(fdb, 1) & (PORT(0) | PORT(1) | PORT(BRIDGEIF_MAX_PORTS))) ==
          (PORT(0) | PORT(1) | PORT(BRIDGEIF_MAX_PORTS)));

    /* learned on its port: a lookup returns that port only */
    heard(fdb, 1, 0);
    heard(fdb, 2, 1);
    CHECK(lookup(fdb, 1) == PORT(0));
    CHECK(lookup(fdb, 2) == PORT(1));
    CHECK(lookup(fdb, 3) == BR_FLOOD);
    CHECK(fw_bridge_fdb_count() == 2 && fw_bridge_fdb_learned() == 2);

    /* heard again on the same port: refreshed, not learned again */
    now_ms += 1000u;
    heard(fdb, 1, 0);
    CHECK(lookup(fdb, 1) == PORT(0));
    CHECK(fw_bridge_fdb_count() == 2 && fw_bridge_fdb_learned() == 2);

    /* a station that moves to the other port is re-learned there, and counted */
    heard(fdb, 1, 1);
    CHECK(lookup(fdb, 1) == PORT(1));
    CHECK(fw_bridge_fdb_count() == 2 && fw_bridge_fdb_learned() == 3);
    heard(fdb, 1, 0); /* and back */
    CHECK(lookup(fdb, 1) == PORT(0));
    CHECK(fw_bridge_fdb_count() == 2 && fw_bridge_fdb_learned() == 4);

    /* reset_counters zeroes learned only; flush forgets every address, not the counter */
    fw_bridge_fdb_reset_counters();
    CHECK(fw_bridge_fdb_learned() == 0 && fw_bridge_fdb_count() == 2);
    CHECK(lookup(fdb, 2) == PORT(1));
    fw_bridge_fdb_flush();
    CHECK(fw_bridge_fdb_count() == 0 && fw_bridge_fdb_learned() == 0);
    CHECK(lookup(fdb, 1) == BR_FLOOD && lookup(fdb, 2) == BR_FLOOD);
    heard(fdb, 2, 1);
    CHECK(lookup(fdb, 2) == PORT(1) && fw_bridge_fdb_learned() == 1);
    fw_bridge_fdb_flush();
    fw_bridge_fdb_reset_counters();

    /* ageing: known up to FW_BRIDGE_FDB_AGE_S after it was last heard, forgotten 1 ms later */
    u32_t t0 = now_ms;
    heard(fdb, 10, 0);
    heard(fdb, 11, 1);
    now_ms = t0 + AGE_MS / 2;
    heard(fdb, 11, 1); /* refreshed: its age starts again */
    now_ms = t0 + AGE_MS;
    CHECK(fw_bridge_fdb_count() == 2);
    CHECK(lookup(fdb, 10) == PORT(0));
    now_ms = t0 + AGE_MS + 1u;
    CHECK(fw_bridge_fdb_count() == 1); /* counted as gone before anything looks it up */
    CHECK(lookup(fdb, 10) == BR_FLOOD);
    CHECK(lookup(fdb, 10) == BR_FLOOD); /* forgotten, not back */
    CHECK(lookup(fdb, 11) == PORT(1));
    now_ms = t0 + AGE_MS / 2 + AGE_MS + 1u;
    CHECK(fw_bridge_fdb_count() == 0);
    CHECK(lookup(fdb, 11) == BR_FLOOD);
    CHECK(fw_bridge_fdb_learned() == 2);
    /* heard again after ageing out: learned again (counted), even on the same port */
    heard(fdb, 10, 0);
    CHECK(lookup(fdb, 10) == PORT(0) && fw_bridge_fdb_count() == 1 && fw_bridge_fdb_learned() == 3);
    /* an aged entry not yet looked up is learned again too */
    u32_t t1 = now_ms;
    now_ms = t1 + AGE_MS + 1u;
    heard(fdb, 10, 0);
    CHECK(lookup(fdb, 10) == PORT(0) && fw_bridge_fdb_count() == 1 && fw_bridge_fdb_learned() == 4);
    fw_bridge_fdb_flush();
    fw_bridge_fdb_reset_counters();

    /* a full table: addresses 100.. heard 1 ms apart, 100 first */
    for (unsigned i = 0; i < FW_BRIDGE_FDB_SIZE; i++) {
        now_ms++;
        heard(fdb, 100 + i, (u8_t)(i % FW_BRIDGE_PORTS));
    }
    CHECK(fw_bridge_fdb_count() == FW_BRIDGE_FDB_SIZE && fw_bridge_fdb_learned() == FW_BRIDGE_FDB_SIZE);
    /* 100 heard again: 101 is now the one heard longest ago and makes room for a new address */
    now_ms++;
    heard(fdb, 100, 0);
    now_ms++;
    heard(fdb, 500, 1);
    CHECK(fw_bridge_fdb_count() == FW_BRIDGE_FDB_SIZE);
    CHECK(fw_bridge_fdb_learned() == FW_BRIDGE_FDB_SIZE + 1);
    CHECK(lookup(fdb, 500) == PORT(1));
    CHECK(lookup(fdb, 101) == BR_FLOOD);
    CHECK(lookup(fdb, 100) == PORT(0));
    unsigned kept = 0;
    for (unsigned i = 2; i < FW_BRIDGE_FDB_SIZE; i++) {
        kept += lookup(fdb, 100 + i) == PORT(i % FW_BRIDGE_PORTS);
    }
    CHECK(kept == FW_BRIDGE_FDB_SIZE - 2);
    /* the next new address replaces the next oldest, 102 */
    now_ms++;
    heard(fdb, 501, 0);
    CHECK(lookup(fdb, 102) == BR_FLOOD && lookup(fdb, 501) == PORT(0) && lookup(fdb, 103) == PORT(1));
    CHECK(fw_bridge_fdb_count() == FW_BRIDGE_FDB_SIZE);

    /* an entry that has aged out is reused before any live one is replaced: at t2 + age only 501
     * (heard at t2) is live, the 63 others have aged out and take 63 new addresses */
    u32_t t2 = now_ms;
    now_ms = t2 + AGE_MS;
    for (unsigned i = 0; i < FW_BRIDGE_FDB_SIZE; i++) {
        if (i != 5) {
            heard(fdb, 1000 + i, (u8_t)(i % FW_BRIDGE_PORTS));
        }
    }
    CHECK(fw_bridge_fdb_count() == FW_BRIDGE_FDB_SIZE);
    CHECK(lookup(fdb, 501) == PORT(0));
    /* 1 ms later 501 has aged out: the new address takes its entry, not the live 1000's */
    now_ms = t2 + AGE_MS + 1u;
    CHECK(fw_bridge_fdb_count() == FW_BRIDGE_FDB_SIZE - 1);
    heard(fdb, 1005, 1);
    CHECK(fw_bridge_fdb_count() == FW_BRIDGE_FDB_SIZE);
    kept = 0;
    for (unsigned i = 0; i < FW_BRIDGE_FDB_SIZE; i++) {
        kept += lookup(fdb, 1000 + i) == PORT(i % FW_BRIDGE_PORTS);
    }
    CHECK(kept == FW_BRIDGE_FDB_SIZE);

    /* flush empties the full table; reset_counters zeroes learned */
    fw_bridge_fdb_flush();
    CHECK(fw_bridge_fdb_count() == 0);
    CHECK(lookup(fdb, 1000) == BR_FLOOD && lookup(fdb, 500) == BR_FLOOD);
    CHECK(fw_bridge_fdb_learned() > 0);
    fw_bridge_fdb_reset_counters();
    CHECK(fw_bridge_fdb_learned() == 0);
    heard(fdb, 7, 1);
    CHECK(lookup(fdb, 7) == PORT(1) && fw_bridge_fdb_count() == 1 && fw_bridge_fdb_learned() == 1);

    return check_summary("test_bridge_fdb");
}
