/*
 * air_queue.h - the access point's transmit queue towards the simulated station, modelled at the
 * station beside its air (wifi_air.h), when the AP is another firmware on the link (--wifi-link).
 *
 * The station's air carries one frame at a time; what the AP sends faster waits in the AP's queue.
 * On the virtual bench the AP's frames arrive on the station's tap, whose kernel queue is one FIFO
 * of the tap's txqueuelen with no priority (a tap device passes its qdisc by). With a simulated AP
 * (wifi_sim.h) that FIFO is the AP's queue. With a SoftAP on the link its management frames
 * (beacons, association answers: wifi_link.h) cross the tap too, and behind a flood of data a
 * beacon would wait there past the station's beacon timeout: the station would lose its
 * association to a queue a real AP does not have, since a real AP sends its management frames from
 * a queue of their own, ahead of its data. So each time the air is free the station reads its tap
 * into this queue of two bands and takes from it, management frames first. Each band drops at its
 * tail when full (FW_AIR_QUEUE_DATA_FRAMES, FW_AIR_QUEUE_MGMT_FRAMES in fw_config.h). One queue: the
 * station has one air.
 *
 * The air is half duplex: while the station sends a stream of its own it takes the air whenever it
 * is free, but a management frame the AP has queued (a beacon) goes between two of the station's
 * frames (tapif.c), as the AP's beacon wins the air at its target time: a station that never let
 * a beacon through would lose its association to its own sending. Such a frame is carried at its
 * turn but reaches the station's stack only when its loop comes round (never from inside its own
 * send): it waits here, FW_AIR_QUEUE_CARRIED_FRAMES at most.
 */
#ifndef AIR_QUEUE_H
#define AIR_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Frames the queue took and dropped at its tails, since the last reset. */
struct air_queue_counts {
    uint32_t queued;
    uint32_t data_dropped;
    uint32_t mgmt_dropped;
};

/** Empties the queue and zeroes its counts. */
void air_queue_reset(void);

/** Queues a frame in the management band (`management`) or the data band. False: dropped (its band
 *  full, or longer than FW_AIR_QUEUE_FRAME_MAX). */
bool air_queue_put(const uint8_t *frame, size_t len, bool management);

/** Takes the next frame into `out` (`cap` bytes): the oldest management frame, else the oldest
 *  data frame. Returns its length, 0 when the queue is empty. */
size_t air_queue_take(uint8_t *out, size_t cap);

/** Frames waiting in both bands. */
size_t air_queue_depth(void);

/** Management frames waiting. */
size_t air_queue_management_depth(void);

/** Keeps a frame the air carried for the station's stack. False: no room (FW_AIR_QUEUE_CARRIED_FRAMES). */
bool air_queue_hold_carried(const uint8_t *frame, size_t len);

/** Room for another carried frame. */
bool air_queue_carried_room(void);

/** Carried frames waiting for the stack. */
size_t air_queue_carried_depth(void);

/** The oldest carried frame into `out`, its length; 0 when none waits. */
size_t air_queue_take_carried(uint8_t *out, size_t cap);

struct air_queue_counts air_queue_counts(void);

#endif /* AIR_QUEUE_H */
