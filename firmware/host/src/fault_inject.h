/*
 * fault_inject.h - the host port's planted defects: the `fault` console command and the hooks the
 * tap driver (tapif.c) calls for every frame. Test equipment for the suite's own verdicts: a
 * defect planted on purpose makes this firmware a defective DUT (a sender that got slower, a
 * receiver that loses frames silently, ACKs held back, a buffer leaked per test, one of the
 * firmware's guards against hostile traffic switched off, ...), and the suite must fail it as the
 * DUT's. None is active until `fault NAME VALUE` plants it; a restart
 * clears them. The defects and their units: fault_plan.h.
 *
 * Console:
 *   fault                 show what is planted (RESULT fault NAME=VALUE ... planted=N)
 *   fault NAME VALUE      plant one (0 removes it; fdb_never_moves: the bridge build only, the
 *                         others refuse it, having no address table)
 *   fault clear           remove every one
 */
#ifndef FAULT_INJECT_H
#define FAULT_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct netif;

/** Registers the `fault` command, its poll (held frames, stalls) and the common code's hooks. */
bool fault_inject_install(void);

/**
 * A frame the stack hands the driver of tap descriptor `fd`, before it is written: spends the
 * planted CPU, then drops or holds it. True when the fault took the frame (dropped, or held to be
 * written later): the driver counts it as sent and writes nothing.
 */
bool fault_on_send(int fd, const uint8_t *frame, size_t len);

/**
 * A frame read from a tap, before the stack sees it: spends the planted CPU, then drops or holds
 * it. True when the fault took the frame (dropped silently, or held to reach the stack later).
 */
bool fault_on_receive(struct netif *netif, const uint8_t *frame, size_t len);

/** After the driver handed a frame to the stack: a held (reordered) frame may follow it now. */
void fault_after_receive(void);

/**
 * Hands one received frame to the stack as the tap driver does (defined in tapif.c): counted
 * received, dropped when the netif is down or the pool is empty.
 */
void tapif_deliver(struct netif *netif, const uint8_t *frame, size_t len);

#endif /* FAULT_INJECT_H */
