/* air_queue.c - the AP's two-band transmit queue towards the simulated station (air_queue.h). */
#include "air_queue.h"

#include <string.h>

#include "fw_config.h"

struct slot {
    uint16_t len;
    uint8_t data[FW_AIR_QUEUE_FRAME_MAX];
};

struct band {
    struct slot *slots;
    size_t cap;
    size_t head;
    size_t count;
};

static struct slot data_slots[FW_AIR_QUEUE_DATA_FRAMES];
static struct slot mgmt_slots[FW_AIR_QUEUE_MGMT_FRAMES];
static struct slot carried_slots[FW_AIR_QUEUE_CARRIED_FRAMES];
static struct band data_band = {data_slots, FW_AIR_QUEUE_DATA_FRAMES, 0, 0};
static struct band mgmt_band = {mgmt_slots, FW_AIR_QUEUE_MGMT_FRAMES, 0, 0};
static struct band carried_band = {carried_slots, FW_AIR_QUEUE_CARRIED_FRAMES, 0, 0};
static struct air_queue_counts counts;

void air_queue_reset(void)
{
    data_band.head = data_band.count = 0;
    mgmt_band.head = mgmt_band.count = 0;
    carried_band.head = carried_band.count = 0;
    memset(&counts, 0, sizeof counts);
}

static bool band_put(struct band *b, const uint8_t *frame, size_t len)
{
    if (b->count == b->cap) {
        return false;
    }
    struct slot *s = &b->slots[(b->head + b->count) % b->cap];
    memcpy(s->data, frame, len);
    s->len = (uint16_t)len;
    b->count++;
    return true;
}

bool air_queue_put(const uint8_t *frame, size_t len, bool management)
{
    bool ok = len <= FW_AIR_QUEUE_FRAME_MAX && band_put(management ? &mgmt_band : &data_band, frame, len);
    if (ok) {
        counts.queued++;
    } else if (management) {
        counts.mgmt_dropped++;
    } else {
        counts.data_dropped++;
    }
    return ok;
}

static size_t band_take(struct band *b, uint8_t *out, size_t cap)
{
    if (b->count == 0) {
        return 0;
    }
    const struct slot *s = &b->slots[b->head];
    size_t len = s->len <= cap ? s->len : cap;
    memcpy(out, s->data, len);
    b->head = (b->head + 1) % b->cap;
    b->count--;
    return len;
}

size_t air_queue_take(uint8_t *out, size_t cap)
{
    size_t len = band_take(&mgmt_band, out, cap);
    return len != 0 ? len : band_take(&data_band, out, cap);
}

size_t air_queue_depth(void)
{
    return mgmt_band.count + data_band.count;
}

size_t air_queue_management_depth(void)
{
    return mgmt_band.count;
}

struct air_queue_counts air_queue_counts(void)
{
    return counts;
}

bool air_queue_hold_carried(const uint8_t *frame, size_t len)
{
    return len <= FW_AIR_QUEUE_FRAME_MAX && band_put(&carried_band, frame, len);
}

bool air_queue_carried_room(void)
{
    return carried_band.count < carried_band.cap;
}

size_t air_queue_carried_depth(void)
{
    return carried_band.count;
}

size_t air_queue_take_carried(uint8_t *out, size_t cap)
{
    return band_take(&carried_band, out, cap);
}
