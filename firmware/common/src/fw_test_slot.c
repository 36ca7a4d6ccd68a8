#include "fw_test_slot.h"

#include <stddef.h>
#include <string.h>

#include "fw_config.h"
#include "fw_out.h"

/* the "busy" message for a full table names every holder */
_Static_assert(FW_TEST_SLOTS == 3, "fw_test_claim's message names three running tests");

static struct {
    const char *name;
    const char *group;
} slots[FW_TEST_SLOTS];

/* Whether tests of groups a and b run together: a group with itself (an iperf server and client,
   both directions at once), and a ping beside an iperf test (latency under load, probed from the
   DUT's own console). */
static bool beside(const char *a, const char *b)
{
    if (strcmp(a, b) == 0) {
        return true;
    }
    bool iperf_ping = strcmp(a, "iperf") == 0 && strcmp(b, "ping") == 0;
    return iperf_ping || (strcmp(a, "ping") == 0 && strcmp(b, "iperf") == 0);
}

bool fw_test_claim(const char *cmd, const char *name, const char *group)
{
    int free_slot = -1;
    for (int i = 0; i < FW_TEST_SLOTS; i++) {
        if (slots[i].name == NULL) {
            free_slot = free_slot < 0 ? i : free_slot;
        } else if (!beside(slots[i].group, group) || strcmp(slots[i].name, name) == 0) {
            if (cmd != NULL) {
                fw_err(cmd, "busy: %s running (abort it with %s -a)", slots[i].name, slots[i].group);
            }
            return false;
        }
    }
    if (free_slot < 0) {
        if (cmd != NULL) {
            fw_err(cmd, "busy: %s, %s and %s running", slots[0].name, slots[1].name, slots[2].name);
        }
        return false;
    }
    slots[free_slot].name = name;
    slots[free_slot].group = group;
    return true;
}

void fw_test_release(const char *name)
{
    for (int i = 0; i < FW_TEST_SLOTS; i++) {
        if (slots[i].name != NULL && strcmp(slots[i].name, name) == 0) {
            slots[i].name = NULL;
            slots[i].group = NULL;
        }
    }
}

bool fw_test_running(void)
{
    for (int i = 0; i < FW_TEST_SLOTS; i++) {
        if (slots[i].name != NULL) {
            return true;
        }
    }
    return false;
}

void fw_test_slots_reset(void)
{
    memset(slots, 0, sizeof slots);
}
