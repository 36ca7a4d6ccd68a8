/* The console personalities by name (--personality). */
#include "personality.h"

#include <string.h>

static const struct fw_personality *const all[] = {
    &personality_espressif_v4,
    &personality_espressif_iperf_cmd,
    &personality_zephyr_zperf,
};

const struct fw_personality *personality_find(const char *name)
{
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(all[i]->name, name) == 0) {
            return all[i];
        }
    }
    return NULL;
}

const char *personality_names(void)
{
    return "espressif-v4, espressif-iperf-cmd, zephyr-zperf";
}
