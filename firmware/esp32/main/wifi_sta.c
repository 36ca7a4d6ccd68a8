#include "wifi_sta.h"

#include <string.h>

#include "esp32_config.h"
#include "esp_event.h"
#include "esp_netif.h"
#include "esp_netif_net_stack.h"
#include "esp_wifi.h"
#include "freertos/event_groups.h"
#include "freertos/queue.h"
#include "lwip/def.h"

#define STARTED_BIT BIT0

static esp_netif_t *sta_netif;
static QueueHandle_t event_queue;
static StaticQueue_t event_queue_buf;
static uint8_t event_queue_storage[HIL_WIFI_EVENT_QUEUE_LEN * sizeof(struct wifi_sta_event)];
static EventGroupHandle_t state_bits;
static StaticEventGroup_t state_bits_buf;

void wifi_sta_wipe(void *p, size_t len)
{
    volatile uint8_t *v = p;
    while (len-- > 0) {
        *v++ = 0;
    }
}

/* Runs in the event-loop task: only hands the event over; the app task does the rest. */
static void on_wifi_event(void *arg, esp_event_base_t base, int32_t id, void *data)
{
    (void)arg;
    (void)base;
    struct wifi_sta_event ev = {.kind = WIFI_STA_EVENT_CONNECTED, .reason = 0};
    if (id == WIFI_EVENT_STA_START) {
        xEventGroupSetBits(state_bits, STARTED_BIT);
        return;
    }
    if (id == WIFI_EVENT_STA_DISCONNECTED) {
        const wifi_event_sta_disconnected_t *d = data;
        ev.kind = WIFI_STA_EVENT_DISCONNECTED;
        ev.reason = d != NULL ? d->reason : 0;
    } else if (id != WIFI_EVENT_STA_CONNECTED) {
        return;
    }
    (void)xQueueSend(event_queue, &ev, 0); /* full: the app task is far behind; drop */
}

esp_err_t wifi_sta_init(void)
{
    event_queue = xQueueCreateStatic(HIL_WIFI_EVENT_QUEUE_LEN, sizeof(struct wifi_sta_event), event_queue_storage,
                                     &event_queue_buf);
    state_bits = xEventGroupCreateStatic(&state_bits_buf);
    sta_netif = esp_netif_create_default_wifi_sta();
    if (sta_netif == NULL) {
        return ESP_FAIL;
    }
    wifi_init_config_t init = WIFI_INIT_CONFIG_DEFAULT();
    esp_err_t err = esp_wifi_init(&init);
    if (err == ESP_OK) {
        /* credentials live in RAM only: nothing of a network is written to NVS flash */
        err = esp_wifi_set_storage(WIFI_STORAGE_RAM);
    }
    if (err == ESP_OK) {
        err = esp_event_handler_instance_register(WIFI_EVENT, ESP_EVENT_ANY_ID, on_wifi_event, NULL, NULL);
    }
    if (err == ESP_OK) {
        err = esp_wifi_set_mode(WIFI_MODE_STA);
    }
    if (err == ESP_OK) {
        err = esp_wifi_start();
    }
    if (err == ESP_OK) {
        /* throughput tests: no modem sleep between beacons (as ESP-IDF's iperf example) */
        err = esp_wifi_set_ps(WIFI_PS_NONE);
    }
    return err;
}

bool wifi_sta_wait_started(TickType_t wait)
{
    EventBits_t bits = xEventGroupWaitBits(state_bits, STARTED_BIT, pdFALSE, pdTRUE, wait);
    return (bits & STARTED_BIT) != 0;
}

struct netif *wifi_sta_lwip_netif(void)
{
    return sta_netif != NULL ? esp_netif_get_netif_impl(sta_netif) : NULL;
}

bool wifi_sta_next_event(struct wifi_sta_event *ev)
{
    return xQueueReceive(event_queue, ev, 0) == pdTRUE;
}

void wifi_sta_flush_events(void)
{
    struct wifi_sta_event ev;
    while (wifi_sta_next_event(&ev)) {
    }
}

esp_err_t wifi_sta_connect(const struct wifi_sta_target *target)
{
    esp_err_t err = esp_netif_dhcpc_stop(sta_netif);
    if (err != ESP_OK && err != ESP_ERR_ESP_NETIF_DHCP_ALREADY_STOPPED) {
        return err;
    }
    esp_netif_ip_info_t ip_info;
    memset(&ip_info, 0, sizeof ip_info);
    ip_info.ip.addr = lwip_htonl(target->ip);
    ip_info.netmask.addr = lwip_htonl(target->netmask);
    ip_info.gw.addr = lwip_htonl(target->gw);
    err = esp_netif_set_ip_info(sta_netif, &ip_info);
    if (err != ESP_OK) {
        return err;
    }

    wifi_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.sta.ssid, target->ssid, target->ssid_len);
    memcpy(cfg.sta.password, target->psk, target->psk_len);
    cfg.sta.scan_method = WIFI_ALL_CHANNEL_SCAN;
    cfg.sta.sort_method = WIFI_CONNECT_AP_BY_SIGNAL;
    cfg.sta.threshold.authmode = target->psk_len > 0 ? WIFI_AUTH_WPA2_PSK : WIFI_AUTH_OPEN;
    cfg.sta.sae_pwe_h2e = WPA3_SAE_PWE_BOTH;
    err = esp_wifi_set_config(WIFI_IF_STA, &cfg);
    wifi_sta_wipe(&cfg, sizeof cfg);
    if (err != ESP_OK) {
        return err;
    }
    return esp_wifi_connect();
}

esp_err_t wifi_sta_reconnect(void)
{
    return esp_wifi_connect();
}

esp_err_t wifi_sta_disconnect(void)
{
    return esp_wifi_disconnect();
}

esp_err_t wifi_sta_get_link(struct wifi_sta_link *link)
{
    wifi_ap_record_t ap;
    memset(&ap, 0, sizeof ap);
    esp_err_t err = esp_wifi_sta_get_ap_info(&ap);
    if (err != ESP_OK) {
        return err;
    }
    memset(link, 0, sizeof *link);
    memcpy(link->bssid, ap.bssid, sizeof link->bssid);
    link->channel = ap.primary;
    link->rssi = ap.rssi;
    link->authmode = (unsigned)ap.authmode;
    link->phy_11b = ap.phy_11b;
    link->phy_11g = ap.phy_11g;
    link->phy_11n = ap.phy_11n;
    link->phy_lr = ap.phy_lr;
    esp_netif_ip_info_t ip_info;
    if (esp_netif_get_ip_info(sta_netif, &ip_info) == ESP_OK) {
        link->ip = lwip_ntohl(ip_info.ip.addr);
    }
    return ESP_OK;
}
