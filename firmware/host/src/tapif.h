/* tapif.h - lwIP netif on a Linux tap device. */
#ifndef TAPIF_H
#define TAPIF_H

#include <stdint.h>

#include "lwip/netif.h"

struct tapif_config {
    const char *ifname;
    uint8_t mac[6];
};

/** Opens the tap (IFF_TAP | IFF_NO_PI, non-blocking). Returns the fd or -1 with a message on stderr. */
int tapif_open(const char *ifname);

/** netif init callback; netif->state must point to the struct tapif_config. */
err_t tapif_init(struct netif *netif);

/** Reads up to max_frames waiting frames into the stack. Returns the number read. */
int tapif_poll(struct netif *netif, int max_frames);

#endif /* TAPIF_H */
