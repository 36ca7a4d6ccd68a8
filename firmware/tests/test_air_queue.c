/* Unit tests: the AP's queue towards the simulated station (host/src/air_queue.c): management frames
 * leave before data queued ahead of them, each band keeps its order and drops at its tail when
 * full, the counts say what was queued and dropped, and frames the air carried while the station
 * sent wait in order for its stack. */
#include <stdint.h>
#include <string.h>

#include "air_queue.h"
#include "check.h"
#include "fw_config.h"

static uint8_t frame[FW_AIR_QUEUE_FRAME_MAX + 1];

static void put(uint32_t tag, size_t len, bool management, bool expect)
{
    memset(frame, 0, sizeof frame);
    memcpy(frame, &tag, sizeof tag);
    CHECK(air_queue_put(frame, len, management) == expect);
}

static uint32_t take(size_t *len)
{
    uint8_t out[FW_AIR_QUEUE_FRAME_MAX];
    uint32_t tag = UINT32_MAX;
    *len = air_queue_take(out, sizeof out);
    if (*len >= sizeof tag) {
        memcpy(&tag, out, sizeof tag);
    }
    return tag;
}

static void test_management_first(void)
{
    air_queue_reset();
    for (uint32_t i = 0; i < 5; i++) {
        put(100 + i, 1514, false, true);
    }
    put(1, 60, true, true); /* a beacon behind five data frames */
    put(2, 80, true, true);
    CHECK(air_queue_depth() == 7 && air_queue_management_depth() == 2);
    size_t len;
    CHECK(take(&len) == 1 && len == 60);
    CHECK(take(&len) == 2 && len == 80);
    CHECK(air_queue_management_depth() == 0);
    for (uint32_t i = 0; i < 5; i++) {
        CHECK(take(&len) == 100 + i && len == 1514);
    }
    CHECK(take(&len) == UINT32_MAX && len == 0);
    CHECK(air_queue_depth() == 0);
}

static void test_tail_drop_and_counts(void)
{
    air_queue_reset();
    for (uint32_t i = 0; i < FW_AIR_QUEUE_DATA_FRAMES; i++) {
        put(i, 100, false, true);
    }
    put(9999, 100, false, false); /* the data band is full: dropped at its tail */
    put(7, 60, true, true);       /* the management band is not */
    for (uint32_t i = 0; i < FW_AIR_QUEUE_MGMT_FRAMES - 1; i++) {
        put(8 + i, 60, true, true);
    }
    put(99, 60, true, false);
    put(98, FW_AIR_QUEUE_FRAME_MAX + 1, false, false); /* too long for a slot */
    struct air_queue_counts c = air_queue_counts();
    CHECK(c.queued == FW_AIR_QUEUE_DATA_FRAMES + FW_AIR_QUEUE_MGMT_FRAMES);
    CHECK(c.data_dropped == 2 && c.mgmt_dropped == 1);
    size_t len;
    CHECK(take(&len) == 7);
    for (uint32_t i = 0; i < FW_AIR_QUEUE_MGMT_FRAMES - 1; i++) {
        CHECK(take(&len) == 8 + i);
    }
    CHECK(take(&len) == 0); /* the oldest data frame: the one dropped came last */
    put(5000, 100, false, true); /* room again, after the slot it freed wrapped around */
    for (uint32_t i = 1; i < FW_AIR_QUEUE_DATA_FRAMES; i++) {
        CHECK(take(&len) == i);
    }
    CHECK(take(&len) == 5000);
    CHECK(air_queue_depth() == 0);
    air_queue_reset();
    c = air_queue_counts();
    CHECK(c.queued == 0 && c.data_dropped == 0 && c.mgmt_dropped == 0);
}

static void test_carried_frames_wait_for_the_stack(void)
{
    air_queue_reset();
    uint8_t out[FW_AIR_QUEUE_FRAME_MAX];
    CHECK(air_queue_carried_room() && air_queue_take_carried(out, sizeof out) == 0);
    for (uint32_t i = 0; i < FW_AIR_QUEUE_CARRIED_FRAMES; i++) {
        memcpy(frame, &i, sizeof i);
        CHECK(air_queue_hold_carried(frame, 64));
    }
    CHECK(!air_queue_carried_room() && !air_queue_hold_carried(frame, 64));
    CHECK(air_queue_depth() == 0); /* carried frames are no longer the AP's queue */
    for (uint32_t i = 0; i < FW_AIR_QUEUE_CARRIED_FRAMES; i++) {
        uint32_t tag = UINT32_MAX;
        CHECK(air_queue_take_carried(out, sizeof out) == 64);
        memcpy(&tag, out, sizeof tag);
        CHECK(tag == i);
    }
    CHECK(air_queue_carried_room() && air_queue_take_carried(out, sizeof out) == 0);
}

int main(void)
{
    test_management_first();
    test_tail_drop_and_counts();
    test_carried_frames_wait_for_the_stack();
    return check_summary("test_air_queue");
}
