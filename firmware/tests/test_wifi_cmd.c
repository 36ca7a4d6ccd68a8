/*
 * Unit tests: the ESP32 port's `wifi` command (esp32/main/wifi_cmd.c, unchanged) over the host's
 * simulated station, inside the whole application, with a clock the test moves. What the Python
 * tests cannot reach in reasonable time is checked here: the firmware's own connect timeout, a
 * re-join that goes on until the AP is back, build-time credentials, every malformed argument, and
 * that the passphrase never appears in the output. The core lock of hil_lock.h aborts the test if
 * the port ever takes it twice (host/src/core_lock.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core_lock.h"
#include "esp32_config.h"
#include "fw_app.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "sdkconfig.h"
#include "test_platform.h"
#include "test_wifi_loop.h"
#include "wifi_cmd.h"
#include "wifi_sim.h"

#define AP_SSID "lab ap"
#define AP_PSK "correct horse battery"
#define AP_SSID_HEX "6c6162206170"
#define AP_PSK_HEX "636f727265637420686f7273652062617474657279"
#define WRONG_PSK_HEX "636f727265637420686f727365206261747465727920" /* a trailing space */

static struct netif netif;

static unsigned count(const char *text)
{
    unsigned n = 0;
    for (const char *p = test_output; (p = strstr(p, text)) != NULL; p++) {
        n++;
    }
    return n;
}

static bool psk_leaked(void)
{
    return wifi_output_has(AP_PSK) || wifi_output_has("636f727265637420686f727365");
}

static void test_join_and_status(void)
{
    test_output_reset();
    wifi_command_line("wifi status");
    CHECK(wifi_output_has("RESULT wifi status=disconnected\r\n"));
    CHECK(!netif_is_link_up(&netif));

    test_output_reset();
    wifi_command_line("wifi connect " AP_SSID_HEX " " WRONG_PSK_HEX " 10.77.0.2 24");
    CHECK(test_output_len == 0); /* the final line comes when the attempts end */
    wifi_run_ms(1000);
    CHECK(count("RESULT wifi") == 0 && count("ERR wifi") == 0 && !netif_is_link_up(&netif));
    wifi_command_line("wifi disconnect");
    CHECK(wifi_output_has("ERR wifi connect failed: aborted by wifi disconnect\r\nRESULT wifi status=disconnected\r\n"));

    test_output_reset();
    wifi_command_line("wifi connect " AP_SSID_HEX " " AP_PSK_HEX " 10.77.0.2 24");
    wifi_run_ms(100);
    CHECK(wifi_output_has("RESULT wifi status=connected source=console ssid_hex=" AP_SSID_HEX
              " bssid=02:00:00:00:a0:01 channel=6 rssi=-47 auth=wpa2 phy=11bgn ip=10.77.0.2"
                          " joins=1 lost_reason=0 lost_name=NONE\r\n"));
    CHECK(netif_is_link_up(&netif));
    CHECK(ip4_addr_get_u32(netif_ip4_addr(&netif)) == PP_HTONL(0x0a4d0002u));
    CHECK(ip4_addr_get_u32(netif_ip4_netmask(&netif)) == PP_HTONL(0xffffff00u));

    test_output_reset();
    wifi_command_line("wifi status");
    CHECK(wifi_output_has("RESULT wifi status=connected source=console ssid_hex=" AP_SSID_HEX " bssid="));
    wifi_command_line("wifi connect " AP_SSID_HEX " - 10.77.0.3 24");
    CHECK(wifi_output_has("ERR wifi busy: connected (wifi disconnect first)\r\n"));
    wifi_command_line("version");
    CHECK(wifi_output_has(" ip=10.77.0.2 "));
    CHECK(!psk_leaked());
}

static void test_lost_link_is_rejoined_until_the_ap_is_back(void)
{
    /* connected from the test before */
    test_output_reset();
    wifi_command_line("wifisim ap off");
    CHECK(wifi_output_has("RESULT wifisim ap=off\r\nWIFI status=disconnected source=console reason=200 name=BEACON_TIMEOUT\r\n"));
    CHECK(!netif_is_link_up(&netif));
    wifi_run_ms(2 * CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS); /* a lost link has no deadline */
    test_output_reset();
    wifi_command_line("wifi status");
    CHECK(wifi_output_has("RESULT wifi status=connecting source=console ssid_hex=" AP_SSID_HEX " attempts="));
    CHECK(wifi_output_has(" reason=201 name=NO_AP_FOUND\r\n"));
    wifi_command_line("wifisim ap on");
    wifi_run_ms(600);
    CHECK(wifi_output_has("WIFI status=connected source=console ssid_hex=" AP_SSID_HEX));
    CHECK(netif_is_link_up(&netif));

    /* a status queued in the same input as a drop answers from the state after the drop */
    test_output_reset();
    wifi_loop_once("wifisim drop 4\r\nwifi status\r\n");
    CHECK(wifi_output_has("WIFI status=disconnected source=console reason=4 name=ASSOC_EXPIRE\r\n"));
    CHECK(wifi_output_has("RESULT wifi status=connecting "));
    CHECK(!wifi_output_has("RESULT wifi status=connected"));
    wifi_run_ms(100);
    CHECK(wifi_output_has("WIFI status=connected source=console"));

    test_output_reset();
    wifi_command_line("wifi disconnect");
    CHECK(wifi_output_has("RESULT wifi status=disconnected\r\n") && !netif_is_link_up(&netif));
    wifi_run_ms(500);
    CHECK(count("WIFI ") == 0); /* the station left: no re-join */
}

static void test_firmware_timeout(void)
{
    test_output_reset();
    wifi_command_line("wifi connect " AP_SSID_HEX " 77726f6e67206f6e6520696e646565642121 10.77.0.2 24");
    wifi_run_ms(CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS - 300);
    CHECK(count("ERR wifi") == 0);
    wifi_run_ms(600);
    unsigned attempts = 0;
    const char *err = strstr(test_output, "ERR wifi connect failed: reason=15 (4WAY_HANDSHAKE_TIMEOUT) attempts=");
    CHECK(err != NULL && sscanf(err, "ERR wifi connect failed: reason=15 (4WAY_HANDSHAKE_TIMEOUT) attempts=%u", &attempts) == 1);
    CHECK(attempts >= CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS / WIFI_SIM_FAIL_MS - 2);
    CHECK(wifi_output_has(" timeout=30000 ms\r\n"));
    test_output_reset();
    wifi_command_line("wifi status");
    CHECK(wifi_output_has("RESULT wifi status=disconnected\r\n"));
    wifi_run_ms(1000);
    CHECK(count("WIFI") == 0 && count("ERR") == 0); /* given up: nothing more */

    test_output_reset();
    wifi_command_line("wifi connect 6e6f2073756368206170 - 10.77.0.2 24");
    wifi_run_ms(CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS + 300);
    CHECK(wifi_output_has("ERR wifi connect failed: reason=201 (NO_AP_FOUND) attempts="));
}

static void test_malformed_arguments(void)
{
    static const struct {
        const char *line;
        const char *error;
    } cases[] = {
        {"wifi", "ERR wifi usage: wifi connect SSID_HEX PSK_HEX|- IP PREFIX_LEN [GW] | status | disconnect | "
                 "ap SSID_HEX PSK_HEX|- IP PREFIX_LEN | ap stop\r\n"},
        {"wifi ap", "ERR wifi usage: "},
        {"wifi ap stop now", "ERR wifi usage: "},
        {"wifi ap 00 - 10.77.0.2 24", "ERR wifi invalid SSID_HEX"},
        {"wifi ap " AP_SSID_HEX " 61626364656667 10.77.0.2 24", "ERR wifi invalid PSK_HEX"},
        {"wifi ap " AP_SSID_HEX " - 10.77.0.2 24", "ERR wifi ap failed: ESP_FAIL"}, /* no link: a simulated AP's station */
        {"wifi connect " AP_SSID_HEX " -", "ERR wifi usage: "},
        {"wifi connect " AP_SSID_HEX " - 10.77.0.2 24 10.77.0.1 extra", "ERR wifi usage: "},
        {"wifi connect 6c6 - 10.77.0.2 24", "ERR wifi invalid SSID_HEX"},
        {"wifi connect zz - 10.77.0.2 24", "ERR wifi invalid SSID_HEX"},
        {"wifi connect 00 - 10.77.0.2 24", "ERR wifi invalid SSID_HEX"},
        {"wifi connect 414243444546474849505152535455565758595a414243444546474849505152535455 - 10.77.0.2 24",
         "ERR wifi invalid SSID_HEX"}, /* 35 bytes */
        {"wifi connect " AP_SSID_HEX " 6162636465666768 10.77.0.2 24 x", "ERR wifi invalid GW 'x'"},
        {"wifi connect " AP_SSID_HEX " 61626364656667 10.77.0.2 24", "ERR wifi invalid PSK_HEX"},  /* 7 characters */
        {"wifi connect " AP_SSID_HEX " 0161626364656667 10.77.0.2 24", "ERR wifi invalid PSK_HEX"}, /* not printable */
        {"wifi connect " AP_SSID_HEX " 636f727265637420686f727365 10.77.0.256 24", "ERR wifi invalid IP '10.77.0.256'"},
        {"wifi connect " AP_SSID_HEX " - 0.0.0.0 24", "ERR wifi invalid IP '0.0.0.0'"},
        {"wifi connect " AP_SSID_HEX " - 10.77.0.2 0", "ERR wifi invalid PREFIX_LEN '0' (1..32)"},
        {"wifi connect " AP_SSID_HEX " - 10.77.0.2 33", "ERR wifi invalid PREFIX_LEN '33' (1..32)"},
        {"wifi status now", "ERR wifi usage: "},
        {"wifisim ap maybe", "ERR wifisim usage: "},
        {"wifisim drop 0", "ERR wifisim usage: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        test_output_reset();
        wifi_command_line(cases[i].line);
        wifi_run_ms(50);
        bool ok = strncmp(test_output, cases[i].error, strlen(cases[i].error)) == 0 && count("\r\n") == 1;
        if (!ok) {
            fprintf(stderr, "`%s` -> %s", cases[i].line, test_output);
        }
        CHECK(ok);
        CHECK(!wifi_output_has("636f727265637420686f727365")); /* a refused passphrase is not echoed */
    }
    test_output_reset();
    wifi_command_line("wifi status");
    CHECK(wifi_output_has("RESULT wifi status=disconnected\r\n"));
}

static void test_request_queue_overflow(void)
{
    /* more requests in one input than the queue holds: the rest are refused, none lost silently */
    char input[512] = "";
    for (int i = 0; i < HIL_WIFI_REQUEST_QUEUE_LEN + 2; i++) {
        strcat(input, "wifi status\r\n");
    }
    test_output_reset();
    wifi_loop_once(input);
    CHECK(count("RESULT wifi status=disconnected") == HIL_WIFI_REQUEST_QUEUE_LEN);
    CHECK(count("ERR wifi busy: 4 requests queued") == 2);
}

int main(void)
{
    CHECK(fw_app_add_commands(wifi_sim_commands, WIFI_SIM_COMMAND_COUNT));
    lwip_init();
    test_netif_add(&netif, 0, 0);
    CHECK(!wifi_sim_init(&netif, "", AP_PSK));
    CHECK(!wifi_sim_init(&netif, AP_SSID, "short"));
    CHECK(!wifi_sim_init(&netif, "an SSID of thirty-three bytes ...", AP_PSK));
    CHECK(wifi_sim_init(&netif, AP_SSID, AP_PSK));
    CHECK(!netif_is_link_up(&netif));
    fw_app_init(&netif);

    test_join_and_status();
    test_lost_link_is_rejoined_until_the_ap_is_back();
    test_firmware_timeout();
    test_malformed_arguments();
    test_request_queue_overflow();
    CHECK(!host_core_locked());
    return check_summary("test_wifi_cmd");
}
