/*
 * esp_wifi_personality.h - the Wi-Fi commands of ESP-IDF's iperf example over the host's simulated
 * station (wifi_sim.h, its radio wifi_air.h), for the espressif personalities (personality.h), so
 * that the suite's Espressif dialect joins, scans and reads the RSSI on the virtual bench as on a
 * board. Formats, from the public sources (the transcripts in tests/support/transcripts):
 *   espressif-v4         cmd_wifi.c (v4.4): `sta <ssid> [<pass>]` ("sta connecting to '%s'", a lost
 *                        or failed link "sta disconnect, reconnect..." for ever), `scan <ssid>`
 *                        ("sta start to scan", "[%s][rssi=%d]" per AP, "sta scan done"), and on a
 *                        Wi-Fi pair's link (--wifi-link) `ap <ssid> [<pass>]`: the SoftAP at the
 *                        address given at start ("AP mode, %s %s", the passphrase in the clear, as
 *                        the example logs it; "password less than 8" for 1-7 characters).
 *   espressif-iperf-cmd  esp-qa/wifi-cmd (v5.3): `sta_connect <ssid> [<pass>]` ("Connecting to %s...",
 *                        "DONE.WIFI_CONNECT_START,OK.", "WIFI_EVENT_STA_DISCONNECTED! reason: %d",
 *                        "trying to reconnect...", after WIFI_SIM_ESP_RETRIES "WiFi Reconnect failed!"),
 *                        `sta_disconnect`, `sta_scan <ssid>` ("+SCAN:[%s][%s][rssi=%d]").
 * Both: the driver's "wifi:connected with %s, aid = 1, channel %d, BW20, bssid = %s" and esp_netif's
 * "sta ip: %s, mask: %s, gw: %s" once associated. The example takes its address from the AP's
 * DHCP: here the simulated AP leases the address given at start (--ip).
 */
#ifndef ESP_WIFI_PERSONALITY_H
#define ESP_WIFI_PERSONALITY_H

#include <stdbool.h>
#include <stdint.h>

#define WIFI_SIM_ESP_RETRIES 5 /* wifi-cmd's reconnect attempts before "WiFi Reconnect failed!" */

/**
 * Registers the Wi-Fi commands of the personality `name` (espressif-v4 or espressif-iperf-cmd)
 * and the lease the simulated AP's DHCP gives (host byte order). False when `name` is not an
 * Espressif personality or the command table is full.
 */
bool esp_wifi_personality_install(const char *name, uint32_t ip, uint32_t netmask, uint32_t gw);

/** Follows the station's events and prints them as the example does (main loop, lock NOT held). */
void esp_wifi_personality_service(void);

#endif /* ESP_WIFI_PERSONALITY_H */
