/*
 * fw_bridge_fdb.h - the learning forwarding database of the bridge variant: lwIP's bridgeif FDB
 * interface (bridgeif_fdb_init, bridgeif_fdb_update_src, bridgeif_fdb_get_dst_ports, declared in
 * netif/bridgeif.h) on a static table of FW_BRIDGE_FDB_SIZE entries, with the entry count the
 * `stats` command reports. It replaces lwIP's example FDB (bridgeif_fdb.c), which allocates its
 * table from the heap, ages it with a timer and cannot be read.
 *
 * A source address is learned on the port a frame came in on (or moved there); a destination
 * found on a port goes to that port only, an unknown one is flooded. An entry not refreshed for
 * FW_BRIDGE_FDB_AGE_S seconds is forgotten (checked when it is looked up or counted); a full table
 * replaces the entry heard longest ago, unless that one was heard within FW_BRIDGE_FDB_FULL_KEEP_MS
 * (the new address is then not learned). One bridge per program.
 *
 * The planted defect `fdb_never_moves` (the host's `fault`: FW_GUARD_FDB_MOVES off, fw_fault_hooks.h)
 * makes it a table whose stations never move: a learned address stays on the port it was first
 * heard on until it ages out (FW_BRIDGE_FDB_AGE_S), so an address learned on the wrong port (a
 * frame on the PC's side from the peer's address) keeps the peer's traffic away from it.
 */
#ifndef FW_BRIDGE_FDB_H
#define FW_BRIDGE_FDB_H

#include <stdint.h>

/** Learned addresses that have not aged out. */
unsigned fw_bridge_fdb_count(void);

/** Addresses learned since start (a new address, or one that moved to another port). */
uint32_t fw_bridge_fdb_learned(void);

/**
 * Frames whose source address the table holds on another port, where it has been settled for
 * FW_BRIDGE_FDB_MOVE_HOLD_MS and was heard less than that before: the address did not move (a
 * station that moved is silent on its old port; a frame forged with a live station's address, the
 * poisoning of the table, is not). An entry learned less than that ago moves at once, so a station
 * whose address was just forged on another port takes it back with its next frame.
 */
uint32_t fw_bridge_fdb_moves_held(void);

/**
 * New source addresses not learned because the table was full and every entry had been heard
 * within FW_BRIDGE_FDB_FULL_KEEP_MS: a flood of random sources (a MAC flooding attack) never evicts
 * a station that is talking, so its traffic keeps going to its port alone (frames to the addresses
 * not learned are flooded). An entry heard longer ago is replaced as before.
 */
uint32_t fw_bridge_fdb_not_learned(void);

/** Zeroes fw_bridge_fdb_learned, fw_bridge_fdb_moves_held and fw_bridge_fdb_not_learned (`stats reset`). */
void fw_bridge_fdb_reset_counters(void);

/** Forgets every learned address. */
void fw_bridge_fdb_flush(void);

#endif /* FW_BRIDGE_FDB_H */
