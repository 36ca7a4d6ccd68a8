#include "esp_wifi_personality.h"

#include <stdio.h>
#include <string.h>

#include "core_lock.h"
#include "fw_app.h"
#include "fw_console.h"
#include "fw_out.h"
#include "lwip/ip4_addr.h"
#include "personality.h"
#include "wifi_ap.h"
#include "wifi_sim.h"
#include "wifi_sta.h"

enum flavour { V4, WIFI_CMD };
enum state { IDLE, JOINING, JOINED };

static struct {
    enum flavour flavour;
    uint32_t ip, netmask, gw; /* the simulated AP's DHCP lease */
    enum state state;
    unsigned retries;
    char ssid[WIFI_STA_SSID_MAX + 1];
} esp;

static const char *tag(void)
{
    return esp.flavour == V4 ? "cmd_wifi" : "WIFI";
}

static void print_ip(uint32_t host_order, char *buf, size_t size)
{
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(host_order));
    ip4addr_ntoa_r(&a, buf, (int)size);
}

/* sta / sta_connect <ssid> [<pass>]: starts joining and returns, as the example's command does. */
static void connect_command(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fw_printf("%s: too %s arguments\r\n", argv[0], argc < 2 ? "few" : "many");
        return;
    }
    struct wifi_sta_target t;
    memset(&t, 0, sizeof t);
    size_t ssid_len = strlen(argv[1]);
    size_t psk_len = argc == 3 ? strlen(argv[2]) : 0;
    if (ssid_len == 0 || ssid_len > WIFI_STA_SSID_MAX || psk_len > WIFI_STA_PSK_MAX) {
        esp_log('E', tag(), "invalid ssid or password length");
        return;
    }
    if (esp.flavour == V4 && psk_len > 0 && psk_len < WIFI_STA_PSK_MIN) {
        esp_log('W', "wifi", "password less than 8");
        return;
    }
    memcpy(t.ssid, argv[1], ssid_len);
    t.ssid_len = ssid_len;
    if (argc == 3) {
        memcpy(t.psk, argv[2], psk_len);
        t.psk_len = psk_len;
        wifi_sta_wipe(argv[2], psk_len); /* the passphrase in the console's line buffer */
    }
    t.ip = esp.ip;
    t.netmask = esp.netmask;
    t.gw = esp.gw;
    t.source = WIFI_STA_SOURCE_CONSOLE;
    memcpy(esp.ssid, argv[1], ssid_len + 1);
    if (esp.flavour == V4) {
        esp_log('I', tag(), "sta connecting to '%s'", esp.ssid);
    } else {
        esp_log('I', tag(), "Connecting to %s...", esp.ssid);
    }
    wifi_sta_flush_events();
    esp.state = JOINING;
    esp.retries = 0;
    esp_err_t err = wifi_sta_connect(&t);
    wifi_sta_wipe(&t, sizeof t);
    if (esp.flavour == WIFI_CMD) {
        esp_log('I', tag(), "DONE.WIFI_CONNECT_START,%s.", err == ESP_OK ? "OK" : "FAIL");
    }
}

static void disconnect_command(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    esp.state = IDLE;
    (void)wifi_sta_disconnect();
    wifi_sta_flush_events();
    esp_log('I', tag(), "DONE.WIFI_DISCONNECT,OK.");
}

/* scan / sta_scan <ssid>: the AP of that SSID, if heard, with its RSSI. */
static void scan_command(int argc, char **argv)
{
    if (argc != 2) {
        fw_printf("%s: too %s arguments\r\n", argv[0], argc < 2 ? "few" : "many");
        return;
    }
    int rssi = 0;
    bool heard = wifi_sim_scan(argv[1], &rssi);
    if (esp.flavour == V4) {
        esp_log('I', tag(), "sta start to scan");
        if (heard) {
            esp_log('I', tag(), "[%s][rssi=%d]", argv[1], rssi);
        }
        esp_log('I', tag(), "sta scan done");
    } else if (heard) {
        esp_log('I', tag(), "+SCAN:[02:00:00:00:a0:01][%s][rssi=%d]", argv[1], rssi);
    } else {
        esp_log('I', tag(), "No AP found");
    }
}

/* ap <ssid> [<pass>] (v4.x's cmd_wifi.c): the SoftAP of a Wi-Fi pair on the link (--wifi-link), at
 * the address given at start (the example's is esp_netif's default AP address, 192.168.4.1/24).
 * As the example: a passphrase of 1-7 characters is refused ("password less than 8") and no
 * SoftAP starts, an empty one makes it open, and the line it logs carries the passphrase in the
 * clear ("AP mode, %s %s") even when refused: the suite keeps it out of what it writes. */
static void ap_command(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fw_printf("%s: too %s arguments\r\n", argv[0], argc < 2 ? "few" : "many");
        return;
    }
    const char *pass = argc == 3 ? argv[2] : "";
    size_t ssid_len = strlen(argv[1]);
    size_t psk_len = strlen(pass);
    struct wifi_sta_target t;
    memset(&t, 0, sizeof t);
    bool ok = ssid_len <= WIFI_STA_SSID_MAX && psk_len <= WIFI_STA_PSK_MAX;
    if (psk_len != 0 && psk_len < WIFI_STA_PSK_MIN) {
        esp_log('E', tag(), "password less than 8");
        ok = false;
    }
    if (ok && esp.state != IDLE) { /* the example's mode switch ends the station's association */
        esp.state = IDLE;
        (void)wifi_sta_disconnect();
        wifi_sta_flush_events();
    }
    if (ok) {
        memcpy(t.ssid, argv[1], ssid_len);
        t.ssid_len = ssid_len;
        memcpy(t.psk, pass, psk_len);
        t.psk_len = psk_len;
        t.ip = esp.ip;
        t.netmask = esp.netmask;
        (void)wifi_ap_start(&t); /* a console command runs under the core lock; the example logs alike */
        wifi_sta_wipe(&t, sizeof t);
    }
    esp_log('I', tag(), "AP mode, %s %s", argv[1], pass);
    if (argc == 3) {
        wifi_sta_wipe(argv[2], psk_len); /* the passphrase in the console's line buffer */
    }
}

static const struct fw_cmd v4_cmds[] = {
    {"sta", "<ssid> [<pass>]", "WiFi is station mode, join specified soft-AP", connect_command},
    {"scan", "<ssid>", "WiFi is station mode, start scan ap", scan_command},
    {"ap", "<ssid> [<pass>]", "AP mode, configure ssid and password", ap_command},
};

static const struct fw_cmd wifi_cmd_cmds[] = {
    {"sta_connect", "<ssid> [<pass>]", "WiFi is station mode, join specified soft-AP", connect_command},
    {"sta_disconnect", "", "WiFi is station mode, disconnect from current AP", disconnect_command},
    {"sta_scan", "<ssid>", "WiFi is station mode, start scan ap", scan_command},
};

bool esp_wifi_personality_install(const char *name, uint32_t ip, uint32_t netmask, uint32_t gw)
{
    memset(&esp, 0, sizeof esp);
    esp.ip = ip;
    esp.netmask = netmask;
    esp.gw = gw;
    if (strcmp(name, "espressif-v4") == 0) {
        esp.flavour = V4;
        return fw_app_add_personality_commands(v4_cmds, sizeof v4_cmds / sizeof v4_cmds[0]);
    }
    if (strcmp(name, "espressif-iperf-cmd") == 0) {
        esp.flavour = WIFI_CMD;
        return fw_app_add_personality_commands(wifi_cmd_cmds, sizeof wifi_cmd_cmds / sizeof wifi_cmd_cmds[0]);
    }
    return false;
}

static void joined(void)
{
    struct wifi_sta_link link;
    char ip[16];
    char mask[16];
    char gw[16];
    if (wifi_sta_get_link(&link) != ESP_OK) {
        return;
    }
    const uint8_t *b = link.bssid;
    esp_log('I', "wifi", "connected with %s, aid = 1, channel %u, BW20, bssid = %02x:%02x:%02x:%02x:%02x:%02x", esp.ssid,
            (unsigned)link.channel, b[0], b[1], b[2], b[3], b[4], b[5]);
    if (esp.flavour == WIFI_CMD) {
        esp_log('I', tag(), "WIFI_EVENT_STA_CONNECTED!");
    }
    print_ip(esp.ip, ip, sizeof ip);
    print_ip(esp.netmask, mask, sizeof mask);
    print_ip(esp.gw, gw, sizeof gw);
    esp_log('I', "esp_netif_handlers", "sta ip: %s, mask: %s, gw: %s", ip, mask, gw);
}

/* A failed attempt or a lost link: v4.4 tries again for ever, wifi-cmd WIFI_SIM_ESP_RETRIES times. */
static void left(uint8_t reason)
{
    if (esp.flavour == V4) {
        esp_log('I', tag(), "sta disconnect, reconnect...");
        (void)wifi_sta_reconnect();
        esp.state = JOINING;
        return;
    }
    esp_log('I', tag(), "WIFI_EVENT_STA_DISCONNECTED! reason: %u", (unsigned)reason);
    if (esp.state == JOINED) {
        esp.retries = 0;
    }
    if (esp.retries++ < WIFI_SIM_ESP_RETRIES) {
        esp_log('I', tag(), "trying to reconnect...");
        (void)wifi_sta_reconnect();
        esp.state = JOINING;
    } else {
        esp_log('E', tag(), "WiFi Reconnect failed!");
        esp.state = IDLE;
    }
}

void esp_wifi_personality_service(void)
{
    struct wifi_sta_event ev;
    while (wifi_sta_next_event(&ev)) {
        if (esp.state == IDLE) {
            continue; /* not joining: what the driver says goes to no one */
        }
        host_core_lock();
        if (ev.kind == WIFI_STA_EVENT_CONNECTED) {
            esp.state = JOINED;
            joined();
        } else {
            left(ev.reason);
        }
        host_core_unlock();
    }
}
