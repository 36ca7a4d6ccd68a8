/* tapif.h - lwIP netif on a Linux tap device, one struct tapif per tap. */
#ifndef TAPIF_H
#define TAPIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lwip/netif.h"

/** A medium between the tap and the stack (the simulated station's air, wifi_air.h): a frame
 *  waits until it is free, then occupies it and may be lost there. With `management` (the AP is
 *  another firmware on the link, wifi_link.h) frames read from the tap wait in the AP's queue
 *  (air_queue.h), its management frames in a band of their own, sent first; without (the AP is
 *  simulated in this program, wifi_sim.h) the tap's own queue is the AP's. */
struct tapif_air {
    uint64_t (*free_at_us)(void);
    bool (*carry)(size_t len, bool outgoing); /* false: lost on the medium */
    bool (*management)(const uint8_t *frame, size_t len); /* an AP's management frame; NULL: see above */
};

/** One tap: its name and MAC (set before tapif_open), its descriptor and frame counters. */
struct tapif {
    const char *ifname;
    uint8_t mac[6];
    int fd;           /* -1 until tapif_open */
    uint32_t rx;      /* frames read from the tap */
    uint32_t tx;      /* frames written to the tap */
    uint32_t rx_drop; /* frames read but dropped: no pbuf, link down */
    uint32_t tx_drop; /* frames the tap refused (its kernel queue full) or too long */
    const struct tapif_air *air; /* NULL: frames pass straight */
    bool air_ap_turn;             /* the station sent last: a management frame the AP queued goes next */
    /* frames that are not the stack's (the simulated Wi-Fi's management frames, wifi_link.h):
     * given here first, whatever the link state; true: taken. NULL: none. */
    bool (*side_input)(const uint8_t *frame, size_t len);
};

/** Opens the tap (IFF_TAP | IFF_NO_PI, non-blocking) into t->fd. Returns the fd or -1 with a
 *  message on stderr. */
int tapif_open(struct tapif *t);

/** netif init callback; netif->state must point to the struct tapif. */
err_t tapif_init(struct netif *netif);

/** Reads up to max_frames waiting frames into the stack; with an air, one each time it is free,
 *  or with the AP's queue (management) into that queue, then gives the stack what the air carries
 *  while it is free, and first what it carried while the station sent. Call it when the air is free
 *  or tapif_air_carried says frames wait. Returns the number read. */
int tapif_poll(struct netif *netif, int max_frames);

/** Frames the air carried for the stack while the station was sending (air_queue.h). */
bool tapif_air_carried(const struct tapif *t);

/** Microseconds until the tap's air is free for the next frame (0: free, or no air). */
uint64_t tapif_air_wait_us(const struct tapif *t);

/** Writes one whole frame to the tap past the stack and the air (wifi_link.h's frames). */
void tapif_write_frame(struct tapif *t, const uint8_t *frame, size_t len);

/** Zeroes the frame counters. */
void tapif_reset_counters(struct tapif *t);

#endif /* TAPIF_H */
