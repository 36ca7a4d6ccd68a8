#define _GNU_SOURCE
#include "wifi_sim.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esp32_config.h"
#include "esp_err.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "wifi_air.h"
#include "wifi_cmd.h"
#include "wifi_link.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"

/* wifi_err_reason_t / wifi_auth_mode_t values the simulation reports (ESP-IDF v5.x) */
#define REASON_ASSOC_LEAVE 8
#define REASON_BEACON_TIMEOUT 200
#define REASON_4WAY_HANDSHAKE_TIMEOUT 15
#define REASON_NO_AP_FOUND 201
#define REASON_AUTH_FAIL 202
#define REASON_NOT_ASSOCED 7
#define AUTH_OPEN 0
#define AUTH_WPA2_PSK 3

enum station { STA_IDLE, STA_JOINING, STA_ASSOCIATED };

static struct {
    struct netif *netif;
    /* link mode (wifi_link.h): the AP is a SoftAP heard on the link, not the one below */
    bool link;
    struct wifi_link_bss bss;    /* STA_JOINING: the SoftAP asked; STA_ASSOCIATED: the one joined */
    bool awaiting;               /* STA_JOINING: the request is sent, its answer not yet come */
    uint8_t refused;             /* STA_JOINING without a request: the reason the attempt ends with */
    uint64_t last_beacon_us;     /* STA_ASSOCIATED: the joined SoftAP's last beacon */
    /* the AP on the air */
    bool ap_on;
    uint8_t ap_ssid[WIFI_STA_SSID_MAX];
    size_t ap_ssid_len;
    char ap_psk[WIFI_STA_PSK_MAX + 1];
    size_t ap_psk_len;
    /* the station */
    enum station state;
    struct wifi_sta_target target; /* what wifi_sta_connect was given */
    uint64_t attempt_ends_us;      /* STA_JOINING: when the attempt succeeds or fails */
    /* the radio model (wifi_air.h), when an attenuator drives it */
    bool air_on;
    char air_file[WIFI_SIM_AIR_PATH_MAX];
    uint64_t air_read_us; /* when the attenuator's file is read next */
    uint64_t lost_since_us; /* associated, the signal below what holds the association: since when (0: not) */
    /* events for wifi_sta_next_event, oldest first */
    struct wifi_sta_event events[HIL_WIFI_EVENT_QUEUE_LEN];
    size_t ev_head;
    size_t ev_count;
} sim;

static const uint8_t sim_bssid[6] = {0x02, 0x00, 0x00, 0x00, 0xa0, 0x01};

const struct fw_cmd wifi_sim_commands[WIFI_SIM_COMMAND_COUNT] = {
    {"wifi", WIFI_CMD_USAGE, "Wi-Fi station with a static IPv4 address; SSID and passphrase as hex", wifi_command},
    {"wifisim", WIFI_SIM_USAGE, "the simulated AP: switch it on or off, make it drop the station", wifi_sim_command},
};

const char *esp_err_to_name(esp_err_t code)
{
    switch (code) {
    case ESP_OK: return "ESP_OK";
    case ESP_FAIL: return "ESP_FAIL";
    default: return "UNKNOWN ERROR";
    }
}

void wifi_sta_wipe(void *p, size_t len)
{
    volatile uint8_t *v = p;
    while (len-- > 0) {
        *v++ = 0;
    }
}

static bool printable(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] < 0x20 || s[i] > 0x7e) {
            return false;
        }
    }
    return true;
}

bool wifi_sim_init(struct netif *netif, const char *ssid, const char *psk)
{
    size_t ssid_len = strlen(ssid);
    size_t psk_len = strlen(psk);
    if (ssid_len == 0 || ssid_len > WIFI_STA_SSID_MAX ||
        (psk_len > 0 && (psk_len < WIFI_STA_PSK_MIN || psk_len > WIFI_STA_PSK_MAX || !printable(psk, psk_len)))) {
        return false;
    }
    memset(&sim, 0, sizeof sim);
    sim.netif = netif;
    sim.ap_on = true;
    memcpy(sim.ap_ssid, ssid, ssid_len);
    sim.ap_ssid_len = ssid_len;
    memcpy(sim.ap_psk, psk, psk_len);
    sim.ap_psk_len = psk_len;
    netif_set_link_down(netif); /* nothing on the air reaches a station that has not associated */
    return true;
}

void wifi_sim_init_link(struct netif *netif)
{
    memset(&sim, 0, sizeof sim);
    sim.netif = netif;
    sim.link = true;
    netif_set_link_down(netif);
}

static void push_event(enum wifi_sta_event_kind kind, uint8_t reason)
{
    if (sim.ev_count == HIL_WIFI_EVENT_QUEUE_LEN) {
        return; /* as the port's queue: full means the app task is far behind; drop */
    }
    struct wifi_sta_event *ev = &sim.events[(sim.ev_head + sim.ev_count) % HIL_WIFI_EVENT_QUEUE_LEN];
    ev->kind = kind;
    ev->reason = reason;
    sim.ev_count++;
}

bool wifi_sta_next_event(struct wifi_sta_event *ev)
{
    if (sim.ev_count == 0) {
        return false;
    }
    *ev = sim.events[sim.ev_head];
    sim.ev_head = (sim.ev_head + 1) % HIL_WIFI_EVENT_QUEUE_LEN;
    sim.ev_count--;
    return true;
}

void wifi_sta_flush_events(void)
{
    sim.ev_head = 0;
    sim.ev_count = 0;
}

/* What the attempt to join the configured network ends with: 0 (associated) or a reason. */
static uint8_t attempt_outcome(void)
{
    const struct wifi_sta_target *t = &sim.target;
    bool heard = sim.ap_on && (!sim.air_on || wifi_air_alive());
    bool same_ssid = heard && t->ssid_len == sim.ap_ssid_len && memcmp(t->ssid, sim.ap_ssid, t->ssid_len) == 0;
    if (!same_ssid || (sim.ap_psk_len == 0 && t->psk_len > 0)) {
        return REASON_NO_AP_FOUND;
    }
    if (sim.ap_psk_len > 0 && t->psk_len == 0) {
        return REASON_AUTH_FAIL;
    }
    if (t->psk_len != sim.ap_psk_len || memcmp(t->psk, sim.ap_psk, t->psk_len) != 0) {
        return REASON_4WAY_HANDSHAKE_TIMEOUT;
    }
    return 0;
}

/* Link mode: what the scan found for the target (0: a SoftAP to ask, in `bss`), as the driver
 * decides before it sends an association request. */
static uint8_t link_scan(struct wifi_link_bss *bss)
{
    const struct wifi_sta_target *t = &sim.target;
    bool heard = wifi_link_heard(bss) && (!sim.air_on || wifi_air_alive()) && bss->ssid_len == t->ssid_len &&
                 memcmp(bss->ssid, t->ssid, t->ssid_len) == 0;
    if (!heard || (!bss->secured && t->psk_len > 0)) {
        return REASON_NO_AP_FOUND;
    }
    return bss->secured && t->psk_len == 0 ? REASON_AUTH_FAIL : 0;
}

static void start_attempt(void)
{
    if (sim.link) {
        sim.state = STA_JOINING;
        sim.refused = link_scan(&sim.bss);
        sim.awaiting = sim.refused == 0;
        if (sim.awaiting) {
            wifi_link_request(&sim.bss, &sim.target);
        }
        sim.attempt_ends_us = fw_platform_time_us() + 1000u * WIFI_SIM_FAIL_MS;
        return;
    }
    sim.state = STA_JOINING;
    uint32_t ms = attempt_outcome() == 0 ? WIFI_SIM_JOIN_MS : WIFI_SIM_FAIL_MS;
    sim.attempt_ends_us = fw_platform_time_us() + 1000u * ms;
}

static void leave(uint8_t reason)
{
    if (sim.link && sim.state == STA_ASSOCIATED && reason == REASON_ASSOC_LEAVE) {
        wifi_link_leave(sim.bss.bssid, reason); /* the station's own leaving: the SoftAP is told */
    }
    sim.state = STA_IDLE;
    netif_set_link_down(sim.netif);
    push_event(WIFI_STA_EVENT_DISCONNECTED, reason);
}

esp_err_t wifi_sta_connect(const struct wifi_sta_target *target)
{
    if (sim.netif == NULL) {
        return ESP_FAIL;
    }
    /* as the port: the static address is set first, the link comes up with the association */
    ip4_addr_t ip, mask, gw;
    ip4_addr_set_u32(&ip, lwip_htonl(target->ip));
    ip4_addr_set_u32(&mask, lwip_htonl(target->netmask));
    ip4_addr_set_u32(&gw, lwip_htonl(target->gw));
    netif_set_addr(sim.netif, &ip, &mask, &gw);
    wifi_sta_wipe(&sim.target, sizeof sim.target);
    sim.target = *target;
    if (sim.state == STA_ASSOCIATED) {
        leave(REASON_ASSOC_LEAVE);
    }
    start_attempt();
    return ESP_OK;
}

esp_err_t wifi_sta_reconnect(void)
{
    if (sim.netif == NULL || sim.target.ssid_len == 0) {
        return ESP_FAIL;
    }
    if (sim.state != STA_ASSOCIATED) {
        start_attempt();
    }
    return ESP_OK;
}

esp_err_t wifi_sta_disconnect(void)
{
    if (sim.state != STA_IDLE) { /* leaving a network, or giving up an attempt under way */
        leave(REASON_ASSOC_LEAVE);
    }
    return ESP_OK;
}

esp_err_t wifi_sta_get_link(struct wifi_sta_link *link)
{
    if (sim.state != STA_ASSOCIATED) {
        return ESP_FAIL;
    }
    memset(link, 0, sizeof *link);
    memcpy(link->bssid, sim.link ? sim.bss.bssid : sim_bssid, sizeof link->bssid);
    link->channel = sim.link ? sim.bss.channel : WIFI_SIM_CHANNEL;
    link->rssi = sim.air_on ? (int8_t)wifi_air_rssi() : WIFI_SIM_RSSI_DBM;
    link->authmode = (sim.link ? sim.bss.secured : sim.ap_psk_len > 0) ? AUTH_WPA2_PSK : AUTH_OPEN;
    link->phy_11b = link->phy_11g = link->phy_11n = true;
    link->ip = lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(sim.netif)));
    if (sim.air_on) {
        struct wifi_air_counts up, down;
        wifi_air_counts(&up, &down);
        link->radio_known = true;
        link->noise = WIFI_AIR_NOISE_DBM;
        link->mcs = (uint8_t)wifi_air_mcs();
        link->phy_kbps = wifi_air_mcs_table[link->mcs].phy_kbps;
        link->tx_frames = up.frames;
        link->tx_retries = up.retries;
        link->tx_failed = up.failed;
        link->rx_frames = down.frames;
        link->rx_retries = down.retries;
        link->rx_failed = down.failed;
    }
    return ESP_OK;
}

bool wifi_sim_scan(const char *ssid, int *rssi)
{
    if (sim.link) {
        struct wifi_link_bss bss;
        size_t n = strlen(ssid);
        if (!wifi_link_heard(&bss) || (sim.air_on && !wifi_air_alive()) || n != bss.ssid_len ||
            memcmp(ssid, bss.ssid, n) != 0) {
            return false;
        }
        *rssi = sim.air_on ? wifi_air_rssi() : WIFI_SIM_RSSI_DBM;
        return true;
    }
    bool heard = sim.ap_on && (!sim.air_on || wifi_air_alive());
    size_t len = strlen(ssid);
    if (!heard || len != sim.ap_ssid_len || memcmp(ssid, sim.ap_ssid, len) != 0) {
        return false;
    }
    *rssi = sim.air_on ? wifi_air_rssi() : WIFI_SIM_RSSI_DBM;
    return true;
}

bool wifi_sim_use_air(const char *path, int notch_db)
{
    if (strlen(path) >= sizeof sim.air_file) {
        return false;
    }
    wifi_air_reset();
    wifi_air_set_notch(notch_db);
    strcpy(sim.air_file, path);
    sim.air_on = true;
    sim.air_read_us = 0;
    return true;
}

/* The attenuator's file: "ATTENUATION_DB [AP_DBM]". Missing, empty or being replaced: the air
 * stays as it was; malformed: said on stderr once per change, the air stays as it was. */
static void read_air_file(void)
{
    char text[WIFI_SIM_AIR_TEXT_MAX + 1];
    int fd = open(sim.air_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    ssize_t n = read(fd, text, WIFI_SIM_AIR_TEXT_MAX);
    close(fd);
    if (n <= 0) {
        return;
    }
    text[n] = '\0';
    char *end = NULL;
    double atten = strtod(text, &end);
    double ap = WIFI_AIR_AP_DBM_DEFAULT;
    char *rest = end;
    if (end != text) {
        ap = strtod(rest, &end);
        if (end == rest) {
            ap = WIFI_AIR_AP_DBM_DEFAULT;
        }
    }
    static char last_bad[WIFI_SIM_AIR_TEXT_MAX + 1];
    bool ok = end != text && atten >= 0.0 && atten <= WIFI_SIM_AIR_ATTEN_MAX_DB && ap >= WIFI_SIM_AIR_AP_MIN_DBM &&
              ap <= WIFI_SIM_AIR_AP_MAX_DBM;
    if (!ok) {
        if (strcmp(last_bad, text) != 0) {
            fprintf(stderr, "hil-fw-host: %s: not \"ATTENUATION_DB [AP_DBM]\" within 0..%d dB, %d..%d dBm\n", sim.air_file,
                    WIFI_SIM_AIR_ATTEN_MAX_DB, WIFI_SIM_AIR_AP_MIN_DBM, WIFI_SIM_AIR_AP_MAX_DBM);
            strcpy(last_bad, text);
        }
        return;
    }
    last_bad[0] = '\0';
    wifi_air_set(atten, ap);
}

/* The radio: the attenuator's file every WIFI_SIM_AIR_READ_MS; an association the signal no longer
 * holds ends after WIFI_SIM_BEACON_TIMEOUT_MS without beacons. */
static void follow_air(uint64_t now)
{
    if (now >= sim.air_read_us) {
        read_air_file();
        sim.air_read_us = now + 1000u * WIFI_SIM_AIR_READ_MS;
    }
    if (sim.state != STA_ASSOCIATED || wifi_air_alive()) {
        sim.lost_since_us = 0;
        return;
    }
    if (sim.lost_since_us == 0) {
        sim.lost_since_us = now;
    } else if (now - sim.lost_since_us >= 1000u * WIFI_SIM_BEACON_TIMEOUT_MS) {
        sim.lost_since_us = 0;
        leave(REASON_BEACON_TIMEOUT);
    }
}

uint64_t wifi_sim_poll_delay_us(void)
{
    uint64_t now = fw_platform_time_us();
    uint64_t delay = UINT64_MAX;
    if (sim.state == STA_JOINING) {
        delay = sim.attempt_ends_us > now ? sim.attempt_ends_us - now : 0;
    }
    if (sim.link && sim.state == STA_ASSOCIATED) { /* the beacons' timeout */
        uint64_t ends = sim.last_beacon_us + 1000u * WIFI_SIM_BEACON_TIMEOUT_MS;
        uint64_t left = ends > now ? ends - now : 0;
        delay = left < delay ? left : delay;
    }
    if (sim.air_on) {
        uint64_t air = sim.air_read_us > now ? sim.air_read_us - now : 0;
        delay = air < delay ? air : delay;
    }
    return delay;
}

void wifi_sim_poll(void)
{
    uint64_t now = fw_platform_time_us();
    if (sim.air_on) {
        follow_air(now);
    }
    if (sim.link && sim.state == STA_ASSOCIATED && now - sim.last_beacon_us >= 1000u * WIFI_SIM_BEACON_TIMEOUT_MS) {
        leave(REASON_BEACON_TIMEOUT); /* the SoftAP went silent (stopped, killed, or the signal gone) */
        return;
    }
    if (sim.state != STA_JOINING || now < sim.attempt_ends_us) {
        return;
    }
    if (sim.link) { /* no SoftAP to ask, or no answer from it */
        sim.state = STA_IDLE;
        push_event(WIFI_STA_EVENT_DISCONNECTED, sim.awaiting ? WIFI_LINK_REASON_AUTH_EXPIRE : sim.refused);
        sim.awaiting = false;
        return;
    }
    uint8_t reason = attempt_outcome(); /* the air may have changed during the attempt */
    if (reason != 0) {
        sim.state = STA_IDLE;
        push_event(WIFI_STA_EVENT_DISCONNECTED, reason);
        return;
    }
    sim.state = STA_ASSOCIATED;
    netif_set_link_up(sim.netif);
    push_event(WIFI_STA_EVENT_CONNECTED, 0);
}

void wifi_sim_link_beacon(const struct wifi_link_bss *bss)
{
    if (!sim.link || sim.state != STA_ASSOCIATED || memcmp(bss->bssid, sim.bss.bssid, 6) != 0 ||
        (sim.air_on && !wifi_air_alive())) {
        return;
    }
    if (memcmp(bss->anonce, sim.bss.anonce, WIFI_LINK_NONCE_BYTES) != 0) {
        leave(REASON_NOT_ASSOCED); /* the SoftAP started again: it no longer knows this station */
        return;
    }
    sim.last_beacon_us = fw_platform_time_us();
}

void wifi_sim_link_answer(const uint8_t bssid[6], uint8_t status)
{
    if (!sim.link || sim.state != STA_JOINING || !sim.awaiting || memcmp(bssid, sim.bss.bssid, 6) != 0) {
        return; /* not asked, or asked another */
    }
    sim.awaiting = false;
    if (status != 0) { /* refused: the attempt still ends at its time, as a handshake runs out */
        sim.refused = status;
        return;
    }
    sim.state = STA_ASSOCIATED;
    sim.last_beacon_us = fw_platform_time_us();
    netif_set_link_up(sim.netif);
    push_event(WIFI_STA_EVENT_CONNECTED, 0);
}

void wifi_sim_link_deauth(const uint8_t bssid[6], uint8_t reason)
{
    if (sim.link && sim.state != STA_IDLE && memcmp(bssid, sim.bss.bssid, 6) == 0) {
        leave(reason);
    }
}

void wifi_sim_command(int argc, char **argv)
{
    uint32_t reason = 0;
    if (sim.link) {
        fw_err("wifisim", "the AP is a SoftAP on the link (`wifi ap` on another DUT): stop or kill that one");
        return;
    }
    if (argc == 3 && strcmp(argv[1], "ap") == 0 && (strcmp(argv[2], "on") == 0 || strcmp(argv[2], "off") == 0)) {
        sim.ap_on = strcmp(argv[2], "on") == 0;
        if (!sim.ap_on && sim.state == STA_ASSOCIATED) {
            leave(REASON_BEACON_TIMEOUT); /* the AP went silent */
        }
        fw_printf("RESULT wifisim ap=%s\r\n", sim.ap_on ? "on" : "off");
    } else if (argc == 3 && strcmp(argv[1], "drop") == 0 && fw_parse_u32(argv[2], 1, 255, &reason)) {
        bool dropped = sim.state == STA_ASSOCIATED;
        if (dropped) {
            leave((uint8_t)reason);
        }
        fw_printf("RESULT wifisim dropped=%s reason=%u\r\n", dropped ? "yes" : "no", (unsigned)reason);
    } else {
        fw_err("wifisim", "usage: wifisim %s", WIFI_SIM_USAGE);
    }
}
