/* gmac.h - lwIP netif driver for the SAME70's GMAC (RMII, polled DMA descriptor rings). */
#ifndef GMAC_H
#define GMAC_H

#include <stdbool.h>
#include <stdint.h>

#include "ksz8081.h"
#include "lwip/netif.h"

/** netif init callback; netif->state points to the 6-byte MAC address. Never fails: without a
 *  PHY the netif stays link-down (gmac_link_check keeps looking for one). */
err_t gmac_netif_init(struct netif *netif);

/** Moves received frames into the stack (at most max_frames) and services the transmit ring.
 *  Returns how many frames it took. */
int gmac_poll(struct netif *netif, int max_frames);

/** Reads the PHY's link, reprograms the MAC's speed/duplex on a change and sets the netif's link
 *  up/down; call it periodically (every 500 ms). Returns whether the link is up (*state: details). */
bool gmac_link_check(struct netif *netif, struct ksz8081_link *state);

/** The PHY's MDIO address (-1: none found yet) and its PHYID2 register. */
int gmac_phy_address(uint16_t *id2);

/** Clause 22 MDIO through GMAC_MAN; false when the management logic did not finish in time. */
bool gmac_mdio_read(unsigned phy, unsigned reg, uint16_t *value);
bool gmac_mdio_write(unsigned phy, unsigned reg, uint16_t value);

#endif /* GMAC_H */
