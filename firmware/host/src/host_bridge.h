/*
 * host_bridge.h - the bridge variant of the host port (preset host-bridge): lwIP's bridgeif
 * forwarding frames between FW_BRIDGE_PORTS taps, the management address on the bridge netif
 * (console ping and iperf reach the bridge itself, a managed bridge), and the bridge's part of
 * the identity (role=bridge) and of `stats` (FDB size, per-port frame counters, frames to 802.1D
 * reserved group addresses and runts, dropped rather than forwarded).
 */
#ifndef HOST_BRIDGE_H
#define HOST_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "tapif.h"

/**
 * Adds one port netif per tap (taps[i] opened; its MAC is derived from `mac`, never seen on the
 * wire) and the bridge netif over them with address ip/mask/gw and MAC `mac`, sets the bridge up
 * as the default netif and registers the bridge's report with the application. Returns the
 * bridge netif, or NULL with a message on stderr.
 */
struct netif *host_bridge_add(struct tapif *taps, size_t count, const uint8_t mac[6], const ip4_addr_t *ip,
                              const ip4_addr_t *mask, const ip4_addr_t *gw);

/** The port netif of taps[i] (to poll its tap). */
struct netif *host_bridge_port(size_t i);

#endif /* HOST_BRIDGE_H */
