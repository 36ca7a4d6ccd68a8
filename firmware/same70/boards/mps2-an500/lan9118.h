/* lan9118.h - lwIP netif driver for the SMSC LAN9118 (polled, programmed I/O). */
#ifndef LAN9118_H
#define LAN9118_H

#include <stdbool.h>
#include <stdint.h>

#include "lwip/netif.h"

/** netif init callback; netif->state points to the 6-byte MAC address. */
err_t lan9118_netif_init(struct netif *netif);

/** Moves received frames into the stack (at most max_frames). Returns how many. */
int lan9118_poll(struct netif *netif, int max_frames);

#endif /* LAN9118_H */
