/*
 * Unit tests: the bridge variant's learning FDB (fw_bridge_fdb.c) through lwIP's bridgeif FDB
 * interface, compiled as the bridge build compiles it (FW_BRIDGE: BRIDGEIF_MAX_PORTS is
 * FW_BRIDGE_PORTS), with the test's own sys_now. A source address is learned on its port and a
 * lookup returns that port alone; an unknown destination returns BR_FLOOD, every bit set (the FDB
 * does not know the receiving port: bridgeif leaves that one out when it sends, and uses the bit
 * of the bridge netif itself only for group addresses); a station that moves is re-learned on
 * its new port and counted; an entry unheard for more than FW_BRIDGE_FDB_AGE_S is forgotten; a
 * full table replaces the entry heard longest ago, none heard within FW_BRIDGE_FDB_FULL_KEEP_MS; count, flush and reset_counters; the table is
 * handed out once, for 1..FW_BRIDGE_FDB_SIZE entries. A flood of 1,000 random source addresses
 * (a MAC flooding attack) while two stations talk: they keep their entries (a full table replaces
 * none heard within FW_BRIDGE_FDB_FULL_KEEP_MS) and a frame to an address not held is flooded.
 * A station learned on the wrong port moves back when it is heard on its own; with the
 * planted defect `fdb_never_moves` (FW_GUARD_FDB_MOVES off, as the host's `fault` plants it) it
 * stays on the first port until it ages out.
 * TEST_GUARDS_OFF=1 in the environment plants the defect for the whole run (the checks of the
 * table's own behaviour then fail).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_bridge_fdb.h"
#include "fw_config.h"
#include "fw_fault_hooks.h"
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

/* the planted defect, as the host's `fault fdb_never_moves 1` switches it (fw_fault_hooks.h) */
static bool fdb_never_moves;

static bool guard_off(enum fw_guard guard)
{
    const char *all = getenv("TEST_GUARDS_OFF");
    return (guard == FW_GUARD_FDB_MOVES && fdb_never_moves) || (all != NULL && strcmp(all, "1") == 0);
}

static const struct fw_fault_hooks hooks = {NULL, NULL, guard_off};

static uint32_t xorshift32(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

#define FLOOD_SOURCES 1000u

/*
 * A MAC flooding attack: 1,000 random unicast source addresses, one a millisecond (all live: far
 * within FW_BRIDGE_FDB_AGE_S), on random ports, while two stations talk (the PC on port 0 and the
 * peer on port 1, each heard every 5 ms). The table fills; after that a new address replaces only an
 * entry not heard for FW_BRIDGE_FDB_FULL_KEEP_MS, so the talking stations are never evicted (their
 * frames go to their port alone), the flood's first sources are replaced once they have been quiet
 * that long, and the addresses not learned are counted; a frame to one the table does not hold is
 * flooded.
 */
static void test_overflow(void *fdb)
{
    fw_bridge_fdb_flush();
    fw_bridge_fdb_reset_counters();
    static struct eth_addr addrs[FLOOD_SOURCES];
    static u8_t ports[FLOOD_SOURCES];
    uint32_t rng = 0x2545f491u;
    const u32_t t0 = now_ms;
    heard(fdb, 100, 0);
    heard(fdb, 101, 1);
    for (unsigned i = 0; i < FLOOD_SOURCES; i++) {
        const uint32_t r = xorshift32(&rng);
        /* random, unicast (bit 0 of the first byte clear), distinct (the last two bytes count) */
        struct eth_addr a = {{(u8_t)(r & 0xfeu), (u8_t)(r >> 8), (u8_t)(r >> 16), (u8_t)(r >> 24), (u8_t)(i >> 8),
                              (u8_t)i}};
        addrs[i] = a;
        ports[i] = (u8_t)(xorshift32(&rng) % FW_BRIDGE_PORTS);
        now_ms = t0 + 1u + i;
        bridgeif_fdb_update_src(fdb, &addrs[i], ports[i]);
        if (i % 5u == 0) {
            heard(fdb, 100, 0); /* the PC and the peer keep talking */
            heard(fdb, 101, 1);
        }
        CHECK(lookup(fdb, 100) == PORT(0) && lookup(fdb, 101) == PORT(1));
    }
    CHECK(fw_bridge_fdb_count() == FW_BRIDGE_FDB_SIZE);
    /* the first 62 fill the table; none is replaced before it has been quiet FULL_KEEP_MS */
    CHECK(FLOOD_SOURCES <= FW_BRIDGE_FDB_FULL_KEEP_MS);
    CHECK(fw_bridge_fdb_learned() == FW_BRIDGE_FDB_SIZE);
    CHECK(fw_bridge_fdb_not_learned() == FLOOD_SOURCES - (FW_BRIDGE_FDB_SIZE - 2u));
    unsigned held = 0;
    for (unsigned i = 0; i < FLOOD_SOURCES; i++) {
        const bool known = bridgeif_fdb_get_dst_ports(fdb, &addrs[i]) == PORT(ports[i]);
        CHECK(known == (i < FW_BRIDGE_FDB_SIZE - 2u));
        held += known;
    }
    CHECK(held == FW_BRIDGE_FDB_SIZE - 2u);
    CHECK(bridgeif_fdb_get_dst_ports(fdb, &addrs[500]) == BR_FLOOD);
    /* the flood's first source quiet FULL_KEEP_MS: a new address takes its place, the stations stay */
    now_ms = t0 + 1u + FW_BRIDGE_FDB_FULL_KEEP_MS;
    heard(fdb, 100, 0);
    heard(fdb, 101, 1);
    bridgeif_fdb_update_src(fdb, &addrs[500], ports[500]);
    CHECK(bridgeif_fdb_get_dst_ports(fdb, &addrs[500]) == PORT(ports[500]));
    CHECK(bridgeif_fdb_get_dst_ports(fdb, &addrs[0]) == BR_FLOOD);
    CHECK(lookup(fdb, 100) == PORT(0) && lookup(fdb, 101) == PORT(1));
    CHECK(fw_bridge_fdb_learned() == FW_BRIDGE_FDB_SIZE + 1u);
    fw_bridge_fdb_reset_counters();
    CHECK(fw_bridge_fdb_not_learned() == 0);
}

/*
 * A station learned on the wrong port (a frame on the PC's side from the peer's address, after a
 * flood evicted the peer's entry) moves back when the station itself is heard on its own port;
 * with the planted defect (fdb_never_moves) it stays where it was first heard until it ages out.
 */
static void test_station_moves(void *fdb, bool defect)
{
    fdb_never_moves = defect;
    fw_bridge_fdb_flush();
    fw_bridge_fdb_reset_counters();
    heard(fdb, 9, 0); /* the forged frame, on the PC's side */
    CHECK(lookup(fdb, 9) == PORT(0));
    now_ms += FW_BRIDGE_FDB_MOVE_HOLD_MS; /* the forged frames stopped: the address is quiet there */
    heard(fdb, 9, 1); /* the peer itself, on its own side */
    CHECK(lookup(fdb, 9) == (defect ? PORT(0) : PORT(1)));
    now_ms += AGE_MS + 1u; /* aged out: learned again where it is heard, also with the defect */
    heard(fdb, 9, 1);
    CHECK(lookup(fdb, 9) == PORT(1));
    fdb_never_moves = false;
}

/*
 * Poisoning while the station talks: a frame with its address from another port, while it is settled
 * on its own (learned there FW_BRIDGE_FDB_MOVE_HOLD_MS ago or more) and was heard there less than
 * that before, does not move it (counted); once it has been quiet on its port that long, a frame from
 * elsewhere moves it (a station that really moved), and an entry that new moves back at once.
 */
static void test_move_held_while_heard(void *fdb)
{
    fw_bridge_fdb_flush();
    fw_bridge_fdb_reset_counters();
    heard(fdb, 11, 1); /* the peer, talking, settled on its port */
    for (unsigned i = 0; i < 20; i++) {
        now_ms += 50u;
        heard(fdb, 11, 1);
    }
    for (unsigned i = 0; i < 10; i++) {
        now_ms += 50u;
        heard(fdb, 11, 0); /* forged on the PC's side */
        CHECK(lookup(fdb, 11) == PORT(1));
        heard(fdb, 11, 1); /* the peer again */
    }
    CHECK(fw_bridge_fdb_moves_held() == 10u);
    now_ms += FW_BRIDGE_FDB_MOVE_HOLD_MS; /* the peer fell silent: it may have moved */
    heard(fdb, 11, 0);
    CHECK(lookup(fdb, 11) == PORT(0));
    now_ms += 100u; /* learned there just now, not settled: the peer's next frame takes it back */
    heard(fdb, 11, 1);
    CHECK(lookup(fdb, 11) == PORT(1));
    fw_bridge_fdb_reset_counters();
    CHECK(fw_bridge_fdb_moves_held() == 0);
}

int main(void)
{
    fw_app_set_fault_hooks(&hooks);
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

    /* a station that moves to the other port (silent on the old one for FW_BRIDGE_FDB_MOVE_HOLD_MS:
     * a move, not a forged frame) is re-learned there, and counted */
    now_ms += FW_BRIDGE_FDB_MOVE_HOLD_MS;
    heard(fdb, 1, 1);
    CHECK(lookup(fdb, 1) == PORT(1));
    CHECK(fw_bridge_fdb_count() == 2 && fw_bridge_fdb_learned() == 3);
    now_ms += FW_BRIDGE_FDB_MOVE_HOLD_MS;
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
    /* every entry heard within FULL_KEEP_MS: a new address is not learned, none is evicted */
    now_ms++;
    heard(fdb, 499, 1);
    CHECK(lookup(fdb, 499) == BR_FLOOD && lookup(fdb, 100) == PORT(0) && fw_bridge_fdb_not_learned() == 1);
    /* all quiet that long, 100 heard again: 101 is now the one heard longest ago and makes room */
    now_ms += FW_BRIDGE_FDB_FULL_KEEP_MS;
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

    test_overflow(fdb);
    test_station_moves(fdb, false);
    test_station_moves(fdb, true);
    test_move_held_while_heard(fdb);

    return check_summary("test_bridge_fdb");
}
