#include "wifi_cmd.h"

#include <stdio.h>
#include <string.h>

#include "esp32_config.h"
#include "esp_err.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "hil_hex.h"
#include "hil_lock.h"
#include "sdkconfig.h"
#include "wifi_ap.h"
#include "wifi_names.h"

enum request_kind { REQUEST_CONNECT, REQUEST_STATUS, REQUEST_DISCONNECT, REQUEST_AP_START, REQUEST_AP_STOP };

struct request {
    enum request_kind kind;
    struct wifi_sta_target target; /* REQUEST_CONNECT, REQUEST_AP_START */
};

enum link_state { LINK_IDLE, LINK_CONNECTING, LINK_CONNECTED };

/* Who hears how the connection attempt ends: a `wifi connect` waiting for its final line, or
 * nobody but the log ("WIFI ..." lines: re-joining a lost link). */
enum reply { REPLY_CONSOLE, REPLY_EVENT };

/* Requests are queued by the console command and taken by wifi_cmd_service; both run in the app
 * task. The link state is only touched there too. */
static struct {
    struct request queue[HIL_WIFI_REQUEST_QUEUE_LEN];
    size_t head;
    size_t count;

    enum link_state state;
    enum reply reply;
    bool retry_forever; /* re-joining a lost link: no deadline */
    enum wifi_sta_target_source source;
    uint8_t ssid[WIFI_STA_SSID_MAX];
    size_t ssid_len;
    uint64_t deadline_us;
    unsigned attempts;
    uint8_t last_reason;
    unsigned joins;      /* associations since boot */
    uint8_t lost_reason; /* why the last established association ended (0: none ended) */
    bool ap_on; /* the SoftAP runs (`wifi ap`): the station's commands are refused */
    uint8_t ap_ssid[WIFI_STA_SSID_MAX];
    size_t ap_ssid_len;
} w;

static const char *source_name(enum wifi_sta_target_source s)
{
    return s == WIFI_STA_SOURCE_BUILD ? "build" : "console";
}

static bool connect_queued(void)
{
    for (size_t i = 0; i < w.count; i++) {
        enum request_kind k = w.queue[(w.head + i) % HIL_WIFI_REQUEST_QUEUE_LEN].kind;
        if (k == REQUEST_CONNECT || k == REQUEST_AP_START) {
            return true;
        }
    }
    return false;
}

static bool enqueue(const struct request *r)
{
    if (w.count == HIL_WIFI_REQUEST_QUEUE_LEN) {
        return false;
    }
    w.queue[(w.head + w.count) % HIL_WIFI_REQUEST_QUEUE_LEN] = *r;
    w.count++;
    return true;
}

static bool dequeue(struct request *r)
{
    if (w.count == 0) {
        return false;
    }
    struct request *slot = &w.queue[w.head];
    *r = *slot;
    wifi_sta_wipe(slot, sizeof *slot);
    w.head = (w.head + 1) % HIL_WIFI_REQUEST_QUEUE_LEN;
    w.count--;
    return true;
}

static uint32_t prefix_to_netmask(uint32_t prefix_len)
{
    return prefix_len == 0 ? 0 : 0xffffffffu << (32 - prefix_len);
}

/* wifi connect SSID_HEX PSK_HEX|- IP PREFIX_LEN [GW]; the PSK token is never echoed. */
static bool parse_connect(int argc, char **argv, struct wifi_sta_target *t)
{
    if (argc < 6 || argc > 7) {
        fw_err("wifi", "usage: wifi %s", WIFI_CMD_USAGE);
        return false;
    }
    memset(t, 0, sizeof *t);
    t->source = WIFI_STA_SOURCE_CONSOLE;
    if (!hil_hex_decode(argv[2], t->ssid, sizeof t->ssid, &t->ssid_len) || t->ssid_len == 0 ||
        memchr(t->ssid, 0, t->ssid_len) != NULL) {
        fw_err("wifi", "invalid SSID_HEX: hex of 1..%u bytes, no zero byte", (unsigned)WIFI_STA_SSID_MAX);
        return false;
    }
    if (strcmp(argv[3], "-") != 0) {
        uint8_t psk[WIFI_STA_PSK_MAX];
        size_t len = 0;
        bool ok = hil_hex_decode(argv[3], psk, sizeof psk, &len) && len >= WIFI_STA_PSK_MIN;
        for (size_t i = 0; ok && i < len; i++) {
            ok = psk[i] >= 0x20 && psk[i] <= 0x7e;
        }
        if (ok) {
            memcpy(t->psk, psk, len);
            t->psk[len] = '\0';
            t->psk_len = len;
        }
        wifi_sta_wipe(psk, sizeof psk);
        if (!ok) {
            fw_err("wifi", "invalid PSK_HEX: hex of %u..%u printable characters, or - for an open network",
                   (unsigned)WIFI_STA_PSK_MIN, (unsigned)WIFI_STA_PSK_MAX);
            return false;
        }
    }
    uint32_t prefix_len = 0;
    if (!fw_parse_ipv4(argv[4], &t->ip) || t->ip == 0) {
        fw_err("wifi", "invalid IP '%s'", argv[4]);
    } else if (!fw_parse_u32(argv[5], 1, 32, &prefix_len)) {
        fw_err("wifi", "invalid PREFIX_LEN '%s' (1..32)", argv[5]);
    } else if (argc == 7 && !fw_parse_ipv4(argv[6], &t->gw)) {
        fw_err("wifi", "invalid GW '%s'", argv[6]);
    } else {
        t->netmask = prefix_to_netmask(prefix_len);
        return true;
    }
    wifi_sta_wipe(t, sizeof *t);
    return false;
}

void wifi_command(int argc, char **argv)
{
    struct request r;
    memset(&r, 0, sizeof r);
    if (argc == 3 && strcmp(argv[1], "ap") == 0 && strcmp(argv[2], "stop") == 0) {
        r.kind = REQUEST_AP_STOP;
    } else if (argc >= 2 && (strcmp(argv[1], "connect") == 0 || strcmp(argv[1], "ap") == 0)) {
        bool busy = w.state != LINK_IDLE || connect_queued() || w.ap_on;
        if (busy) {
            fw_err("wifi", "busy: %s", w.ap_on                     ? "softap running (wifi ap stop first)"
                                       : w.state == LINK_CONNECTED ? "connected (wifi disconnect first)"
                                                                   : "connecting (wifi disconnect first)");
        }
        bool ok = !busy && parse_connect(argc, argv, &r.target);
        if (argc > 3) {
            wifi_sta_wipe(argv[3], strlen(argv[3])); /* the passphrase in the console's line buffer */
        }
        if (!ok) {
            return;
        }
        r.kind = strcmp(argv[1], "ap") == 0 ? REQUEST_AP_START : REQUEST_CONNECT;
    } else if (argc == 2 && strcmp(argv[1], "status") == 0) {
        r.kind = REQUEST_STATUS;
    } else if (argc == 2 && strcmp(argv[1], "disconnect") == 0) {
        r.kind = REQUEST_DISCONNECT;
    } else {
        fw_err("wifi", "usage: wifi %s", WIFI_CMD_USAGE);
        return;
    }
    if (!enqueue(&r)) {
        fw_err("wifi", "busy: %u requests queued", (unsigned)HIL_WIFI_REQUEST_QUEUE_LEN);
    }
    wifi_sta_wipe(&r, sizeof r);
}

/* ---- Output (the app task takes the lwIP core lock to print) -------------------------------- */

/* " ssid_hex=... bssid=... channel= rssi= auth= phy= ip=" of the current association. */
static void format_link_fields(char *buf, size_t size)
{
    struct wifi_sta_link link;
    memset(&link, 0, sizeof link);
    bool have_link = wifi_sta_get_link(&link) == ESP_OK;
    char ssid_hex[2 * WIFI_STA_SSID_MAX + 1];
    char auth[16];
    char phy[16];
    hil_hex_encode(w.ssid, w.ssid_len, ssid_hex, sizeof ssid_hex);
    const uint8_t *b = link.bssid;
    const uint32_t ip = link.ip;
    snprintf(buf, size,
             " ssid_hex=%s bssid=%02x:%02x:%02x:%02x:%02x:%02x channel=%u rssi=%d auth=%s phy=%s ip=%u.%u.%u.%u",
             ssid_hex, b[0], b[1], b[2], b[3], b[4], b[5], (unsigned)link.channel, (int)link.rssi,
             have_link ? wifi_auth_name(link.authmode, auth, sizeof auth) : "unknown",
             have_link ? wifi_phy_name(link.phy_11b, link.phy_11g, link.phy_11n, link.phy_lr, phy, sizeof phy)
                       : "unknown",
             (unsigned)(ip >> 24), (unsigned)(ip >> 16 & 0xff), (unsigned)(ip >> 8 & 0xff), (unsigned)(ip & 0xff));
    if (have_link && link.radio_known) { /* the radio's own figures, where the driver gives them */
        size_t used = strlen(buf);
        snprintf(buf + used, size - used,
                 " noise=%d mcs=%u phy_kbps=%lu tx_frames=%lu tx_retries=%lu tx_failed=%lu rx_frames=%lu"
                 " rx_retries=%lu rx_failed=%lu",
                 (int)link.noise, (unsigned)link.mcs, (unsigned long)link.phy_kbps, (unsigned long)link.tx_frames,
                 (unsigned long)link.tx_retries, (unsigned long)link.tx_failed, (unsigned long)link.rx_frames,
                 (unsigned long)link.rx_retries, (unsigned long)link.rx_failed);
    }
}

/* One whole line under the lock, so that no other output lands inside it. */
static void print_locked(const char *line)
{
    hil_lock();
    fw_printf("%s", line);
    hil_unlock();
}

/* "<head> status=connected source=... <link fields>" */
static void print_connected(const char *head)
{
    char fields[384];
    char line[560];
    format_link_fields(fields, sizeof fields);
    snprintf(line, sizeof line, "%s status=connected source=%s%s joins=%u lost_reason=%u lost_name=%s\r\n", head,
             source_name(w.source), fields, w.joins, (unsigned)w.lost_reason,
             w.lost_reason != 0 ? wifi_reason_name(w.lost_reason) : "NONE");
    print_locked(line);
}

static void report_connected(void)
{
    print_connected(w.reply == REPLY_CONSOLE ? "RESULT wifi" : "WIFI");
}

static void report_failed(const char *why)
{
    char line[160];
    unsigned r = w.last_reason;
    if (w.reply == REPLY_CONSOLE) {
        snprintf(line, sizeof line, "ERR wifi connect failed: reason=%u (%s) attempts=%u%s%s\r\n", r,
                 r != 0 ? wifi_reason_name(r) : "NONE", w.attempts, why[0] != '\0' ? " " : "", why);
    } else {
        snprintf(line, sizeof line, "WIFI status=failed source=%s reason=%u name=%s attempts=%u\r\n",
                 source_name(w.source), r, r != 0 ? wifi_reason_name(r) : "NONE", w.attempts);
    }
    print_locked(line);
}

/* ---- The SoftAP ------------------------------------------------------------------------------ */

/* "RESULT wifi mode=softap status=started ssid_hex= bssid= channel= auth= ip= stations=" */
static void print_ap(void)
{
    struct wifi_ap_info info;
    if (wifi_ap_get_info(&info) != ESP_OK) {
        print_locked("RESULT wifi mode=softap status=stopped\r\n");
        return;
    }
    char ssid_hex[2 * WIFI_STA_SSID_MAX + 1];
    char auth[16];
    char line[256];
    hil_hex_encode(w.ap_ssid, w.ap_ssid_len, ssid_hex, sizeof ssid_hex);
    const uint8_t *b = info.bssid;
    const uint32_t ip = info.ip;
    snprintf(line, sizeof line,
             "RESULT wifi mode=softap status=started ssid_hex=%s bssid=%02x:%02x:%02x:%02x:%02x:%02x channel=%u "
             "auth=%s ip=%u.%u.%u.%u stations=%u\r\n",
             ssid_hex, b[0], b[1], b[2], b[3], b[4], b[5], (unsigned)info.channel,
             wifi_auth_name(info.authmode, auth, sizeof auth), (unsigned)(ip >> 24), (unsigned)(ip >> 16 & 0xff),
             (unsigned)(ip >> 8 & 0xff), (unsigned)(ip & 0xff), info.stations);
    print_locked(line);
}

static void do_ap_start(const struct wifi_sta_target *t)
{
    if (w.state != LINK_IDLE || w.ap_on) {
        print_locked("ERR wifi busy: the station or the softap runs\r\n");
        return;
    }
    esp_err_t err = wifi_ap_start(t);
    if (err != ESP_OK) {
        char line[96];
        snprintf(line, sizeof line, "ERR wifi ap failed: %s\r\n", esp_err_to_name(err));
        print_locked(line);
        return;
    }
    w.ap_on = true;
    memcpy(w.ap_ssid, t->ssid, t->ssid_len);
    w.ap_ssid_len = t->ssid_len;
    print_ap();
}

static void do_ap_stop(void)
{
    (void)wifi_ap_stop();
    w.ap_on = false;
    print_locked("RESULT wifi mode=softap status=stopped\r\n");
}

/* ---- The link state machine ------------------------------------------------------------------ */

static void start_connect(struct wifi_sta_target *t)
{
    wifi_sta_flush_events(); /* from an earlier association */
    w.state = LINK_CONNECTING;
    w.reply = t->source == WIFI_STA_SOURCE_BUILD ? REPLY_EVENT : REPLY_CONSOLE;
    w.retry_forever = false;
    w.source = t->source;
    memcpy(w.ssid, t->ssid, t->ssid_len);
    w.ssid_len = t->ssid_len;
    w.attempts = 1;
    w.last_reason = 0;
    w.deadline_us = fw_platform_time_us() + (uint64_t)CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS * 1000u;
    esp_err_t err = wifi_sta_connect(t);
    if (err != ESP_OK) {
        char why[64];
        snprintf(why, sizeof why, "(%s)", esp_err_to_name(err));
        report_failed(why);
        (void)wifi_sta_disconnect();
        w.state = LINK_IDLE;
    }
}

static void do_status(void)
{
    if (w.ap_on) {
        print_ap();
        return;
    }
    if (w.state == LINK_CONNECTED) {
        print_connected("RESULT wifi");
        return;
    }
    char ssid_hex[2 * WIFI_STA_SSID_MAX + 1];
    hil_hex_encode(w.ssid, w.ssid_len, ssid_hex, sizeof ssid_hex);
    if (w.state == LINK_CONNECTING) {
        char line[192];
        unsigned r = w.last_reason;
        snprintf(line, sizeof line,
                 "RESULT wifi status=connecting source=%s ssid_hex=%s attempts=%u reason=%u name=%s\r\n",
                 source_name(w.source), ssid_hex, w.attempts, r, r != 0 ? wifi_reason_name(r) : "NONE");
        print_locked(line);
    } else {
        print_locked("RESULT wifi status=disconnected\r\n");
    }
}

static void do_disconnect(void)
{
    if (w.state == LINK_CONNECTING && w.reply == REPLY_CONSOLE) {
        print_locked("ERR wifi connect failed: aborted by wifi disconnect\r\n");
    }
    w.state = LINK_IDLE;
    (void)wifi_sta_disconnect(); /* not connected: nothing to leave */
    print_locked("RESULT wifi status=disconnected\r\n");
}

static void on_event(const struct wifi_sta_event *ev)
{
    if (ev->kind == WIFI_STA_EVENT_CONNECTED) {
        if (w.state == LINK_CONNECTING) {
            w.state = LINK_CONNECTED;
            w.joins++;
            report_connected();
        }
        return;
    }
    w.last_reason = ev->reason;
    if (w.state == LINK_CONNECTED) {
        /* the link was lost: re-join the same network, reporting the outcome as WIFI lines */
        w.lost_reason = ev->reason;
        char line[96];
        snprintf(line, sizeof line, "WIFI status=disconnected source=%s reason=%u name=%s\r\n", source_name(w.source),
                 (unsigned)ev->reason, wifi_reason_name(ev->reason));
        print_locked(line);
        w.state = LINK_CONNECTING;
        w.reply = REPLY_EVENT;
        w.retry_forever = true;
        w.attempts = 1;
        (void)wifi_sta_reconnect();
    } else if (w.state == LINK_CONNECTING) {
        if (!w.retry_forever && fw_platform_time_us() >= w.deadline_us) {
            return; /* the deadline check in wifi_cmd_service reports it */
        }
        w.attempts++;
        (void)wifi_sta_reconnect(); /* an error shows up as the next event or the deadline */
    }
}

void wifi_cmd_service(void)
{
    /* the driver's events first: a request answers from the link's latest state (a `wifi status`
     * queued before a drop was seen must not report the lost association as connected) */
    struct wifi_sta_event ev;
    while (wifi_sta_next_event(&ev)) {
        on_event(&ev);
    }
    struct request r;
    while (dequeue(&r)) {
        switch (r.kind) {
        case REQUEST_CONNECT:
            if (w.state == LINK_IDLE) {
                start_connect(&r.target);
            }
            break;
        case REQUEST_STATUS:
            do_status();
            break;
        case REQUEST_DISCONNECT:
            do_disconnect();
            break;
        case REQUEST_AP_START:
            do_ap_start(&r.target);
            break;
        case REQUEST_AP_STOP:
            do_ap_stop();
            break;
        }
        wifi_sta_wipe(&r, sizeof r);
    }
    if (w.state == LINK_CONNECTING && !w.retry_forever && fw_platform_time_us() >= w.deadline_us) {
        char why[48];
        snprintf(why, sizeof why, "timeout=%u ms", (unsigned)CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS);
        report_failed(why);
        (void)wifi_sta_disconnect();
        w.state = LINK_IDLE;
    }
}
