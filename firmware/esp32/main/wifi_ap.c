#include "wifi_ap.h"

#include <string.h>

#include "esp_netif.h"
#include "esp_wifi.h"
#include "lwip/def.h"

#define AP_CHANNEL 6      /* the one channel of the pair (the station scans all of them) */
#define AP_MAX_STATIONS 4 /* ESP-IDF's default max_connection */

static esp_netif_t *ap_netif;
static bool ap_running;

esp_err_t wifi_ap_start(const struct wifi_sta_target *cfg)
{
    if (cfg->ssid_len == 0 || cfg->ssid_len > sizeof(((wifi_ap_config_t *)0)->ssid)) {
        return ESP_ERR_INVALID_ARG;
    }
    (void)wifi_ap_stop();
    if (ap_netif == NULL && (ap_netif = esp_netif_create_default_wifi_ap()) == NULL) {
        return ESP_FAIL;
    }
    /* a static address and no DHCP server: the pair's station brings its own (`wifi connect`) */
    esp_err_t err = esp_netif_dhcps_stop(ap_netif);
    if (err != ESP_OK && err != ESP_ERR_ESP_NETIF_DHCP_ALREADY_STOPPED) {
        return err;
    }
    esp_netif_ip_info_t ip = {0};
    ip.ip.addr = lwip_htonl(cfg->ip);
    ip.netmask.addr = lwip_htonl(cfg->netmask);
    if ((err = esp_netif_set_ip_info(ap_netif, &ip)) != ESP_OK) {
        return err;
    }
    wifi_config_t wc;
    memset(&wc, 0, sizeof wc);
    memcpy(wc.ap.ssid, cfg->ssid, cfg->ssid_len);
    wc.ap.ssid_len = (uint8_t)cfg->ssid_len;
    memcpy(wc.ap.password, cfg->psk, cfg->psk_len);
    wc.ap.channel = AP_CHANNEL;
    wc.ap.max_connection = AP_MAX_STATIONS;
    wc.ap.authmode = cfg->psk_len > 0 ? WIFI_AUTH_WPA2_PSK : WIFI_AUTH_OPEN;
    wc.ap.pmf_cfg.required = false;
    err = esp_wifi_set_mode(WIFI_MODE_AP); /* the station interface leaves its network, if any */
    if (err == ESP_OK) {
        err = esp_wifi_set_config(WIFI_IF_AP, &wc);
    }
    wifi_sta_wipe(&wc, sizeof wc); /* the passphrase */
    if (err == ESP_OK) {
        err = esp_wifi_start(); /* started already: ESP_OK, the new mode applies */
    }
    ap_running = err == ESP_OK;
    return err;
}

esp_err_t wifi_ap_stop(void)
{
    if (!ap_running) {
        return ESP_OK;
    }
    ap_running = false;
    (void)esp_wifi_deauth_sta(0); /* every station: AUTH_LEAVE */
    return esp_wifi_set_mode(WIFI_MODE_STA);
}

esp_err_t wifi_ap_get_info(struct wifi_ap_info *info)
{
    if (!ap_running) {
        return ESP_FAIL;
    }
    memset(info, 0, sizeof *info);
    wifi_config_t wc;
    esp_err_t err = esp_wifi_get_config(WIFI_IF_AP, &wc);
    if (err == ESP_OK) {
        err = esp_wifi_get_mac(WIFI_IF_AP, info->bssid);
    }
    if (err != ESP_OK) {
        return err;
    }
    info->channel = wc.ap.channel;
    info->authmode = (unsigned)wc.ap.authmode;
    wifi_sta_wipe(&wc, sizeof wc);
    esp_netif_ip_info_t ip;
    if (esp_netif_get_ip_info(ap_netif, &ip) == ESP_OK) {
        info->ip = lwip_ntohl(ip.ip.addr);
    }
    wifi_sta_list_t list;
    if (esp_wifi_ap_get_sta_list(&list) == ESP_OK) {
        info->stations = (unsigned)list.num;
    }
    return ESP_OK;
}
