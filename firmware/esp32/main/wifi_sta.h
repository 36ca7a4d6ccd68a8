/*
 * wifi_sta.h - the Wi-Fi station on ESP-IDF (esp_wifi + the default STA esp_netif): start-up,
 * connecting with a static IPv4 address, link information, and the driver's events handed from
 * the event-loop task to the app task through a queue.
 *
 * Everything but wifi_sta_init/wifi_sta_wait_started is for the app task, called WITHOUT the
 * lwIP core lock held (esp_netif takes it itself).
 */
#ifndef WIFI_STA_H
#define WIFI_STA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "esp_err.h"
#include "freertos/FreeRTOS.h"

#define WIFI_STA_SSID_MAX 32 /* bytes */
#define WIFI_STA_PSK_MIN 8   /* printable characters of a WPA passphrase */
#define WIFI_STA_PSK_MAX 63

struct netif;

/** Where the network to join came from. */
enum wifi_sta_target_source { WIFI_STA_SOURCE_CONSOLE, WIFI_STA_SOURCE_BUILD };

/** A network to join and the static IPv4 configuration to use on it. */
struct wifi_sta_target {
    uint8_t ssid[WIFI_STA_SSID_MAX];
    size_t ssid_len;
    char psk[WIFI_STA_PSK_MAX + 1]; /* NUL-terminated; empty: open network */
    size_t psk_len;
    uint32_t ip; /* host byte order */
    uint32_t netmask;
    uint32_t gw;
    enum wifi_sta_target_source source;
};

enum wifi_sta_event_kind { WIFI_STA_EVENT_CONNECTED, WIFI_STA_EVENT_DISCONNECTED };

struct wifi_sta_event {
    enum wifi_sta_event_kind kind;
    uint8_t reason; /* DISCONNECTED: wifi_err_reason_t */
};

/** The association as the driver reports it. */
struct wifi_sta_link {
    uint8_t bssid[6];
    uint8_t channel;
    int8_t rssi;       /* dBm */
    unsigned authmode; /* wifi_auth_mode_t */
    bool phy_11b, phy_11g, phy_11n, phy_lr;
    uint32_t ip; /* host byte order */
    /* where the driver tells them (the host's radio model; false: not known, not printed) */
    bool radio_known;
    int8_t noise;      /* dBm */
    uint8_t mcs;       /* 802.11n MCS index the station sends at */
    uint32_t phy_kbps; /* that MCS's PHY rate */
    /* frames, retries and frames lost after the last retry since start: station -> AP, AP -> station */
    uint32_t tx_frames, tx_retries, tx_failed;
    uint32_t rx_frames, rx_retries, rx_failed;
};

/** Creates the STA netif, starts the driver (RAM-only storage, no power save), registers events. */
esp_err_t wifi_sta_init(void);

/** Waits until the station interface has started (its lwIP netif holds the MAC address). */
bool wifi_sta_wait_started(TickType_t wait);

/** The station's lwIP netif (for the application's banner and `version`). */
struct netif *wifi_sta_lwip_netif(void);

/** Takes the next driver event without waiting; false when there is none. */
bool wifi_sta_next_event(struct wifi_sta_event *ev);

/** Drops the events still queued (stale ones from an earlier connection). */
void wifi_sta_flush_events(void);

/** Stops DHCP, sets the static address, configures the network and starts connecting. */
esp_err_t wifi_sta_connect(const struct wifi_sta_target *target);

/** Tries the configured network again (after a failed attempt or a lost link). */
esp_err_t wifi_sta_reconnect(void);

/** Leaves the network (or stops trying to join it). */
esp_err_t wifi_sta_disconnect(void);

/** The current association and address; an error when not associated. */
esp_err_t wifi_sta_get_link(struct wifi_sta_link *link);

/** Overwrites memory that held a secret (not optimised away). */
void wifi_sta_wipe(void *p, size_t len);

#endif /* WIFI_STA_H */
