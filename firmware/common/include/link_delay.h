/*
 * link_delay.h - a delay line in front of a netif's input: every received frame reaches the stack
 * a set time after it arrived, as if the link were that much longer. Test equipment for a known
 * bandwidth-delay product: with the delay D much larger than the link's own round trip, a TCP
 * receiver whose window W limits the rate moves W bytes per D, whatever the host's CPU.
 *
 * Frames wait in their lwIP pool pbufs (no other memory); FW_LINK_DELAY_SLOTS of them at most, a
 * frame arriving at a full line is dropped and counted. Delay 0 (the default) passes frames
 * straight through. Console: `linkdelay [MS]`.
 */
#ifndef LINK_DELAY_H
#define LINK_DELAY_H

#include <stdbool.h>
#include <stdint.h>

struct netif;

/**
 * Puts the delay line in front of netif->input (call after netif_add, before fw_app_init) and
 * registers its `linkdelay` command and its poll with the application. Returns false when the
 * application's tables are full or a delay line is already installed.
 */
bool link_delay_install(struct netif *netif);

/** Sets the delay (0 ... FW_LINK_DELAY_MAX_MS); 0 hands every waiting frame to the stack now. */
bool link_delay_set_ms(uint32_t ms);

/** Hands every frame whose time has come to the stack. */
void link_delay_poll(uint64_t now_us);

/** When the next waiting frame is due (UINT64_MAX: none waiting). */
uint64_t link_delay_next_deadline_us(void);

#endif /* LINK_DELAY_H */
