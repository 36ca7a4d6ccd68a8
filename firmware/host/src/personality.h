/*
 * personality.h - the host firmware's console personalities: test equipment that speaks a stock
 * test firmware's console over the project's lwIP engines, so that the suite's dialect drivers
 * (hil/console/dialects) run the whole matrix on the virtual bench. Each prints exactly the
 * formats of the firmware it stands for (the sources are named in each file); what a real board
 * does beyond its console output (its own timing) is not imitated. With --wifi-sim-ssid the
 * Espressif ones also have the example's Wi-Fi commands over the simulated station
 * (esp_wifi_personality.h).
 *   espressif-v4        ESP-IDF v4.4's iperf example (examples/common_components/iperf, cmd_wifi.c)
 *   espressif-iperf-cmd ESP-IDF v5.3's iperf example with espressif/iperf-cmd 0.1.x and ping-cmd
 *   zephyr-zperf        Zephyr's zperf sample (subsys/net/lib/zperf, 3.6 - 4.1) and `net ping`
 */
#ifndef PERSONALITY_H
#define PERSONALITY_H

#include "fw_app.h"
#include "fw_out.h"

/** ESP_LOGx as ESP-IDF prints it: "X (ms) tag: text" in the log colours (CONFIG_LOG_COLORS=y). */
void esp_log(char level, const char *tag, const char *fmt, ...) FW_PRINTF(3, 4);

/** The personality of this name, or NULL. */
const struct fw_personality *personality_find(const char *name);

/** The names, comma-separated (for --help and errors). */
const char *personality_names(void);

extern const struct fw_personality personality_espressif_v4;
extern const struct fw_personality personality_espressif_iperf_cmd;
extern const struct fw_personality personality_zephyr_zperf;

#endif /* PERSONALITY_H */
