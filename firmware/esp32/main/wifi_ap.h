/*
 * wifi_ap.h - the SoftAP (an ESP32 as the access point of a Wi-Fi pair: ESP-IDF's `ap` of its
 * iperf example), with a static IPv4 address and no DHCP server: the station of the pair joins
 * it with `wifi connect` and its own static address.
 *
 * On ESP-IDF (wifi_ap.c): the default AP esp_netif, WPA2-PSK (open without a passphrase). On the
 * host (host/src/wifi_link.c): a SoftAP on the tap's link, heard by another host firmware's
 * station there. For the app task, WITHOUT the lwIP core lock held.
 */
#ifndef WIFI_AP_H
#define WIFI_AP_H

#include <stdbool.h>
#include <stdint.h>

#include "esp_err.h"
#include "wifi_sta.h"

/** What the SoftAP is: its BSSID, channel, security, address and the stations associated now. */
struct wifi_ap_info {
    uint8_t bssid[6];
    uint8_t channel;
    unsigned authmode; /* wifi_auth_mode_t */
    uint32_t ip;       /* host byte order */
    unsigned stations;
};

/** Starts the SoftAP with the SSID, passphrase (empty: open) and static address of `cfg` (its
 *  `gw` and `source` are not used). The station interface must not be connecting or connected. */
esp_err_t wifi_ap_start(const struct wifi_sta_target *cfg);

/** Stops the SoftAP (its stations are told so); nothing to do when it is not running. */
esp_err_t wifi_ap_stop(void);

/** The running SoftAP; an error when it is not running. */
esp_err_t wifi_ap_get_info(struct wifi_ap_info *info);

#endif /* WIFI_AP_H */
