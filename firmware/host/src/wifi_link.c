#include "wifi_link.h"

#include <string.h>

#include "fw_platform.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "wifi_ap.h"
#include "wifi_hmac.h"

#define ETH_HDR 14
#define MAGIC0 'H'
#define MAGIC1 'W'
#define VERSION 1
#define MIN_FRAME 60 /* an Ethernet frame's minimum, FCS excluded */
#define AUTH_OPEN 0
#define AUTH_WPA2_PSK 3

enum kind { KIND_BEACON = 1, KIND_ASSOC_REQ = 2, KIND_ASSOC_RESP = 3, KIND_DEAUTH = 4 };

/* offsets after the Ethernet header: magic, version, kind, then the kind's fields */
#define OFF_KIND 3
#define OFF_BODY 4
/* beacon: channel, secured, ssid_len, ssid[32], anonce[8] */
#define BEACON_SSID (OFF_BODY + 3)
#define BEACON_ANONCE (BEACON_SSID + WIFI_STA_SSID_MAX)
#define BEACON_END (BEACON_ANONCE + WIFI_LINK_NONCE_BYTES)
/* assoc req: ssid_len, ssid[32], snonce[8], proof[32] */
#define REQ_SSID (OFF_BODY + 1)
#define REQ_SNONCE (REQ_SSID + WIFI_STA_SSID_MAX)
#define REQ_PROOF (REQ_SNONCE + WIFI_LINK_NONCE_BYTES)
#define REQ_END (REQ_PROOF + WIFI_LINK_PROOF_BYTES)
/* assoc resp / deauth: status or reason */
#define CODE_END (OFF_BODY + 1)

_Static_assert(ETH_HDR + REQ_END <= WIFI_LINK_FRAME_MAX, "WIFI_LINK_FRAME_MAX too small");

static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static struct {
    struct netif *netif;
    wifi_link_send_fn send;
    /* the SoftAP */
    bool ap_on;
    uint8_t ssid[WIFI_STA_SSID_MAX];
    size_t ssid_len;
    char psk[WIFI_STA_PSK_MAX + 1];
    size_t psk_len;
    uint8_t anonce[WIFI_LINK_NONCE_BYTES];
    uint8_t stations[WIFI_LINK_MAX_STATIONS][6];
    unsigned station_count;
    uint64_t next_beacon_us;
    /* the SoftAP the station heard last */
    bool heard_any;
    struct wifi_link_bss heard;
    uint64_t heard_us;
} air;

static const uint8_t *own_mac(void)
{
    return air.netif->hwaddr;
}

static void random_bytes(uint8_t *out, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        out[i] = (uint8_t)fw_platform_random();
    }
}

/* The proof a station sends: HMAC-SHA256(passphrase, ANonce | SNonce | station MAC | BSSID). */
static void proof(const char *psk, size_t psk_len, const uint8_t *anonce, const uint8_t *snonce, const uint8_t *sta,
                  const uint8_t *bssid, uint8_t out[WIFI_LINK_PROOF_BYTES])
{
    const uint8_t *parts[] = {anonce, snonce, sta, bssid};
    const size_t lens[] = {WIFI_LINK_NONCE_BYTES, WIFI_LINK_NONCE_BYTES, 6, 6};
    wifi_hmac_sha256((const uint8_t *)psk, psk_len, parts, lens, 4, out);
}

/* A frame of `kind` to `dst` with its body (`body_len` bytes after the kind). */
static void send_frame(const uint8_t dst[6], enum kind kind, const uint8_t *body, size_t body_len)
{
    uint8_t frame[WIFI_LINK_FRAME_MAX];
    memset(frame, 0, sizeof frame);
    memcpy(frame, dst, 6);
    memcpy(frame + 6, own_mac(), 6);
    frame[12] = (uint8_t)(WIFI_LINK_ETHERTYPE >> 8);
    frame[13] = (uint8_t)(WIFI_LINK_ETHERTYPE & 0xff);
    uint8_t *p = frame + ETH_HDR;
    p[0] = MAGIC0;
    p[1] = MAGIC1;
    p[2] = VERSION;
    p[OFF_KIND] = (uint8_t)kind;
    memcpy(p + OFF_BODY, body, body_len);
    size_t len = ETH_HDR + OFF_BODY + body_len;
    air.send(frame, len < MIN_FRAME ? MIN_FRAME : len);
    memset(frame, 0, sizeof frame); /* a request's proof */
}

static void send_code(const uint8_t dst[6], enum kind kind, uint8_t code)
{
    send_frame(dst, kind, &code, 1);
}

void wifi_link_init(struct netif *netif, wifi_link_send_fn send)
{
    memset(&air, 0, sizeof air);
    air.netif = netif;
    air.send = send;
    netif_set_link_down(netif); /* up when the SoftAP starts or the station associates */
}

/* ---- The SoftAP ----------------------------------------------------------------------------- */

bool wifi_link_ap_running(void)
{
    return air.ap_on;
}

static void beacon(void)
{
    uint8_t body[BEACON_END - OFF_BODY];
    memset(body, 0, sizeof body);
    body[0] = WIFI_LINK_CHANNEL;
    body[1] = air.psk_len > 0;
    body[2] = (uint8_t)air.ssid_len;
    memcpy(body + BEACON_SSID - OFF_BODY, air.ssid, air.ssid_len);
    memcpy(body + BEACON_ANONCE - OFF_BODY, air.anonce, WIFI_LINK_NONCE_BYTES);
    send_frame(broadcast, KIND_BEACON, body, sizeof body);
}

esp_err_t wifi_ap_start(const struct wifi_sta_target *cfg)
{
    if (air.netif == NULL || cfg->ssid_len == 0 || cfg->ssid_len > WIFI_STA_SSID_MAX) {
        return ESP_FAIL;
    }
    (void)wifi_ap_stop();
    ip4_addr_t ip, mask, gw;
    ip4_addr_set_u32(&ip, lwip_htonl(cfg->ip));
    ip4_addr_set_u32(&mask, lwip_htonl(cfg->netmask));
    ip4_addr_set_zero(&gw);
    netif_set_addr(air.netif, &ip, &mask, &gw);
    memcpy(air.ssid, cfg->ssid, cfg->ssid_len);
    air.ssid_len = cfg->ssid_len;
    memcpy(air.psk, cfg->psk, cfg->psk_len);
    air.psk[cfg->psk_len] = '\0';
    air.psk_len = cfg->psk_len;
    random_bytes(air.anonce, sizeof air.anonce); /* new at every start */
    air.station_count = 0;
    air.ap_on = true;
    netif_set_link_up(air.netif);
    beacon();
    air.next_beacon_us = fw_platform_time_us() + 1000u * WIFI_LINK_BEACON_MS;
    return ESP_OK;
}

esp_err_t wifi_ap_stop(void)
{
    if (!air.ap_on) {
        return ESP_OK;
    }
    send_code(broadcast, KIND_DEAUTH, WIFI_LINK_REASON_AUTH_LEAVE);
    air.ap_on = false;
    wifi_sta_wipe(air.psk, sizeof air.psk);
    air.psk_len = 0;
    air.station_count = 0;
    netif_set_link_down(air.netif);
    return ESP_OK;
}

esp_err_t wifi_ap_get_info(struct wifi_ap_info *info)
{
    if (!air.ap_on) {
        return ESP_FAIL;
    }
    memset(info, 0, sizeof *info);
    memcpy(info->bssid, own_mac(), 6);
    info->channel = WIFI_LINK_CHANNEL;
    info->authmode = air.psk_len > 0 ? AUTH_WPA2_PSK : AUTH_OPEN;
    info->ip = lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(air.netif)));
    info->stations = air.station_count;
    return ESP_OK;
}

static int station_index(const uint8_t mac[6])
{
    for (unsigned i = 0; i < air.station_count; i++) {
        if (memcmp(air.stations[i], mac, 6) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static void forget_station(const uint8_t mac[6])
{
    int i = station_index(mac);
    if (i >= 0) {
        memmove(air.stations[i], air.stations[i + 1], (air.station_count - (unsigned)i - 1) * 6u);
        air.station_count--;
    }
}

/* An association request: another SSID is not this SoftAP's to answer. */
static void on_request(const uint8_t *sta, const uint8_t *p)
{
    size_t ssid_len = p[REQ_SSID - 1];
    if (ssid_len != air.ssid_len || memcmp(p + REQ_SSID, air.ssid, ssid_len) != 0) {
        return;
    }
    if (air.psk_len > 0) {
        uint8_t expected[WIFI_LINK_PROOF_BYTES];
        proof(air.psk, air.psk_len, air.anonce, p + REQ_SNONCE, sta, own_mac(), expected);
        uint8_t diff = 0;
        for (size_t i = 0; i < sizeof expected; i++) {
            diff |= (uint8_t)(expected[i] ^ p[REQ_PROOF + i]);
        }
        if (diff != 0) {
            forget_station(sta);
            send_code(sta, KIND_ASSOC_RESP, WIFI_LINK_REASON_4WAY_HANDSHAKE_TIMEOUT);
            return;
        }
    }
    if (station_index(sta) < 0) {
        if (air.station_count == WIFI_LINK_MAX_STATIONS) {
            send_code(sta, KIND_ASSOC_RESP, WIFI_LINK_REASON_ASSOC_TOOMANY);
            return;
        }
        memcpy(air.stations[air.station_count++], sta, 6);
    }
    send_code(sta, KIND_ASSOC_RESP, 0);
}

uint64_t wifi_link_poll_delay_us(void)
{
    if (!air.ap_on) {
        return UINT64_MAX;
    }
    uint64_t now = fw_platform_time_us();
    return air.next_beacon_us > now ? air.next_beacon_us - now : 0;
}

void wifi_link_poll(void)
{
    uint64_t now = fw_platform_time_us();
    if (air.ap_on && now >= air.next_beacon_us) {
        beacon();
        air.next_beacon_us = now + 1000u * WIFI_LINK_BEACON_MS;
    }
}

/* ---- The station's side ---------------------------------------------------------------------- */

bool wifi_link_heard(struct wifi_link_bss *bss)
{
    if (!air.heard_any || fw_platform_time_us() - air.heard_us > 1000u * WIFI_LINK_HEARD_MS) {
        return false;
    }
    *bss = air.heard;
    return true;
}

void wifi_link_request(const struct wifi_link_bss *bss, const struct wifi_sta_target *target)
{
    uint8_t body[REQ_END - OFF_BODY];
    memset(body, 0, sizeof body);
    body[0] = (uint8_t)target->ssid_len;
    memcpy(body + REQ_SSID - OFF_BODY, target->ssid, target->ssid_len);
    uint8_t *snonce = body + REQ_SNONCE - OFF_BODY;
    random_bytes(snonce, WIFI_LINK_NONCE_BYTES);
    if (bss->secured && target->psk_len > 0) {
        proof(target->psk, target->psk_len, bss->anonce, snonce, own_mac(), bss->bssid, body + REQ_PROOF - OFF_BODY);
    }
    send_frame(bss->bssid, KIND_ASSOC_REQ, body, sizeof body);
    wifi_sta_wipe(body, sizeof body);
}

void wifi_link_leave(const uint8_t bssid[6], uint8_t reason)
{
    send_code(bssid, KIND_DEAUTH, reason);
}

static void on_beacon(const uint8_t *src, const uint8_t *p)
{
    struct wifi_link_bss bss;
    memset(&bss, 0, sizeof bss);
    memcpy(bss.bssid, src, 6);
    bss.channel = p[OFF_BODY];
    bss.secured = p[OFF_BODY + 1] != 0;
    bss.ssid_len = p[OFF_BODY + 2];
    if (bss.ssid_len == 0 || bss.ssid_len > WIFI_STA_SSID_MAX) {
        return;
    }
    memcpy(bss.ssid, p + BEACON_SSID, bss.ssid_len);
    memcpy(bss.anonce, p + BEACON_ANONCE, WIFI_LINK_NONCE_BYTES);
    air.heard = bss;
    air.heard_any = true;
    air.heard_us = fw_platform_time_us();
    wifi_sim_link_beacon(&bss);
}

/* ---- Frames from the link --------------------------------------------------------------------- */

bool wifi_link_input(const uint8_t *frame, size_t len)
{
    if (air.netif == NULL || len < ETH_HDR || ((unsigned)frame[12] << 8 | frame[13]) != WIFI_LINK_ETHERTYPE) {
        return false;
    }
    const uint8_t *dst = frame, *src = frame + 6, *p = frame + ETH_HDR;
    size_t body = len - ETH_HDR;
    bool to_me = memcmp(dst, own_mac(), 6) == 0;
    if (body < CODE_END || p[0] != MAGIC0 || p[1] != MAGIC1 || p[2] != VERSION || memcmp(src, own_mac(), 6) == 0) {
        return true; /* the air's, malformed or an echo: nobody's */
    }
    switch (p[OFF_KIND]) {
    case KIND_BEACON:
        if (!air.ap_on && body >= BEACON_END) {
            on_beacon(src, p);
        }
        break;
    case KIND_ASSOC_REQ:
        if (air.ap_on && to_me && body >= REQ_END) {
            on_request(src, p);
        }
        break;
    case KIND_ASSOC_RESP:
        if (!air.ap_on && to_me) {
            wifi_sim_link_answer(src, p[OFF_BODY]);
        }
        break;
    case KIND_DEAUTH:
        if (air.ap_on && to_me) {
            forget_station(src);
        } else if (!air.ap_on && (to_me || memcmp(dst, broadcast, 6) == 0)) {
            wifi_sim_link_deauth(src, p[OFF_BODY]);
        }
        break;
    default:
        break;
    }
    return true;
}
