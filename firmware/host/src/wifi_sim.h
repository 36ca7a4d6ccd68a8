/*
 * wifi_sim.h - a simulated Wi-Fi station for the host DUT: the ESP32 port's station interface
 * (firmware/esp32/main/wifi_sta.h) implemented against one simulated access point, so that the
 * port's `wifi` command (wifi_cmd.c, compiled unchanged) runs on the virtual bench.
 *
 * The air holds one AP: its SSID and passphrase (empty: an open network) are set at start; it
 * can be switched off and it can drop the station (`wifisim` console command), so that failed
 * and lost associations can be produced on demand. What the driver would report is reported:
 *   - SSID not on the air (or the AP off), or an open AP when a passphrase was given (the
 *     station's WPA2 threshold skips it): DISCONNECTED, reason 201 NO_AP_FOUND;
 *   - a secured AP and no passphrase: reason 202 AUTH_FAIL;
 *   - a wrong passphrase: reason 15 4WAY_HANDSHAKE_TIMEOUT;
 *   - otherwise CONNECTED: the netif gets the static address and its link goes up;
 *   - leaving a connected network: DISCONNECTED, reason 8 ASSOC_LEAVE; a drop: the given reason.
 * Association and failures take WIFI_SIM_JOIN_MS / WIFI_SIM_FAIL_MS of simulated air time.
 * Without an attenuator (wifi_sim_use_air) the radio is ideal: RSSI WIFI_SIM_RSSI_DBM, no air time.
 */
#ifndef WIFI_SIM_H
#define WIFI_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw_console.h"
#include "wifi_sta.h"

#define WIFI_SIM_JOIN_MS 40   /* a successful association */
#define WIFI_SIM_FAIL_MS 250  /* a failed attempt (scan, or the handshake running out) */
#define WIFI_SIM_CHANNEL 6
#define WIFI_SIM_RSSI_DBM (-47)
#define WIFI_SIM_USAGE "ap on|off | drop REASON"
#define WIFI_SIM_BEACON_TIMEOUT_MS 1000 /* the signal gone this long: the association ends */
#define WIFI_SIM_AIR_READ_MS 20         /* the attenuator's file is read this often */
#define WIFI_SIM_AIR_PATH_MAX 256
#define WIFI_SIM_AIR_TEXT_MAX 63
#define WIFI_SIM_AIR_ATTEN_MAX_DB 200
#define WIFI_SIM_AIR_AP_MIN_DBM (-30)
#define WIFI_SIM_AIR_AP_MAX_DBM 40

struct netif;

/**
 * Puts one AP on the air and binds the station to the netif (whose link is taken down until
 * it associates). Returns false when the SSID (1..32 bytes) or passphrase (empty, or 8..63
 * printable characters) is invalid.
 */
bool wifi_sim_init(struct netif *netif, const char *ssid, const char *psk);

/**
 * Link mode (wifi_link.h): the station's AP is a SoftAP heard on the link (another host
 * firmware's `wifi ap`), not a simulated one; `wifisim` is refused. The link is down until it
 * has associated.
 */
void wifi_sim_init_link(struct netif *netif);

/**
 * The station's radio follows the model of wifi_air.h, driven by an attenuator that writes
 * "ATTENUATION_DB [AP_DBM]" to `path` (the virtual attenuator, hil/tools/virtual_attenuator.py):
 * RSSI, MCS and the radio's counters in `wifi status`, the AP heard only while the signal holds
 * an association, a lost signal ending it after WIFI_SIM_BEACON_TIMEOUT_MS. `notch_db`: the
 * planted bad point (WIFI_AIR_NOTCH_OFF: none). False when the path is too long.
 */
bool wifi_sim_use_air(const char *path, int notch_db);

/** A scan for `ssid`: true with the AP's RSSI when an AP of that SSID is heard now. */
bool wifi_sim_scan(const char *ssid, int *rssi);

/** Microseconds until the simulation's next step (an attempt ending); UINT64_MAX when none. */
uint64_t wifi_sim_poll_delay_us(void);

/** Ends the association attempt that is due (call from the main loop). */
void wifi_sim_poll(void);

/** The `wifisim` console command: switch the AP on or off, make it drop the station. */
void wifi_sim_command(int argc, char **argv);

/** The station's console commands for fw_app_add_commands: the ESP32 port's `wifi` and `wifisim`. */
#define WIFI_SIM_COMMAND_COUNT 2
extern const struct fw_cmd wifi_sim_commands[WIFI_SIM_COMMAND_COUNT];

#endif /* WIFI_SIM_H */
