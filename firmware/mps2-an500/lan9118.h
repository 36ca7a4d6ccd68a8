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

/** Raises the controller's interrupt line whenever a frame is received (a WFI wake-up source). */
void lan9118_wake_on_rx(void);

/** Acknowledges the receive interrupt before the frames are read. */
void lan9118_clear_wake(void);

#endif /* LAN9118_H */
