/*
 * Unit tests: the simulated station's radio (host/src/wifi_air.c) and the station following it
 * (host/src/wifi_sim.c, the attenuator's file): the model's numbers at their edges (MCS choice at
 * each sensitivity, PER, an attempt's air time, the contention window's growth), the air's
 * retries and losses, the planted bad point, and the association lost when the signal goes and
 * regained when it is back, with the radio's figures in `wifi status`.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core_lock.h"
#include "fw_app.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "test_platform.h"
#include "test_wifi_loop.h"
#include "wifi_air.h"
#include "wifi_cmd.h"
#include "wifi_sim.h"

#define AP_SSID_HEX "6c6162206170" /* "lab ap", an open network */

static struct netif netif;
static char air_path[64];

static void attenuate(const char *text)
{
    FILE *f = fopen(air_path, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
    wifi_run_ms(WIFI_SIM_AIR_READ_MS + 10);
}

static void test_model(void)
{
    /* RSSI -40 dBm at 0 dB; the highest MCS whose sensitivity the RSSI reaches */
    CHECK(wifi_air_rssi_for(0.0, WIFI_AIR_AP_DBM_DEFAULT) == -40);
    CHECK(wifi_air_rssi_for(24.4, 20.0) == -64 && wifi_air_rssi_for(24.6, 20.0) == -65);
    CHECK(wifi_air_mcs_for(-40) == 7 && wifi_air_mcs_for(-64) == 7 && wifi_air_mcs_for(-65) == 6);
    CHECK(wifi_air_mcs_for(-66) == 5 && wifi_air_mcs_for(-69) == 4 && wifi_air_mcs_for(-81) == 0);
    CHECK(wifi_air_mcs_for(-90) == 0);
    /* 10 % at the sensitivity, 1 % two dB above, certain two dB below MCS 0's */
    CHECK(wifi_air_per_ppm(-64, 7) == 100000u && wifi_air_per_ppm(-62, 7) == 10000u);
    CHECK(wifi_air_per_ppm(-84, 0) == 1000000u && wifi_air_per_ppm(-83, 0) == 316228u);
    CHECK(wifi_air_alive_at(-83) && !wifi_air_alive_at(-84));
    /* MCS 7, a 1512-byte frame (a 1470-byte UDP payload): 48 symbols; 28 + 67.5 + 36 + 192 + 10 + 28 us */
    CHECK(wifi_air_attempt_ns(1512, 7, 0) == 361500u);
    /* the second attempt's window is 31 slots: 139.5 us of backoff */
    CHECK(wifi_air_attempt_ns(1512, 7, 1) == 361500u + 72000u);
    /* the window stops at 1023 slots */
    CHECK(wifi_air_attempt_ns(54, 0, 6) == wifi_air_attempt_ns(54, 0, 9));
    /* MCS 0, a bare TCP ACK (54 bytes): 646 bits in 25 symbols */
    CHECK(wifi_air_attempt_ns(54, 0, 0) == 28000u + 67500u + 36000u + 25u * 4000u + 10000u + 28000u);
}

static void test_air(void)
{
    struct wifi_air_counts up, down;
    wifi_air_reset();
    uint64_t now = 1000000u;
    /* a strong signal: PER 10^-8.6 at -40 dBm, every frame through at its first attempt */
    for (int i = 0; i < 1000; i++) {
        CHECK(wifi_air_carry(1512, WIFI_AIR_UP, now));
    }
    wifi_air_counts(&up, &down);
    CHECK(up.frames == 1000 && up.retries == 0 && up.failed == 0 && down.frames == 0);
    /* back to back from the credit's start: the air is busy for exactly 1000 attempts */
    CHECK(wifi_air_free_at_us() == now - WIFI_AIR_CREDIT_US + 361500u);
    /* idle air is banked no further than the credit */
    now += 10000000u;
    CHECK(wifi_air_carry(1512, WIFI_AIR_DOWN, now));
    CHECK(wifi_air_free_at_us() == now - WIFI_AIR_CREDIT_US + 362u);
    /* at MCS 7's sensitivity about 10 % of the attempts fail; none is lost after 7 */
    wifi_air_reset();
    wifi_air_set(24.0, WIFI_AIR_AP_DBM_DEFAULT);
    for (int i = 0; i < 10000; i++) {
        (void)wifi_air_carry(1512, WIFI_AIR_DOWN, now);
    }
    wifi_air_counts(&up, &down);
    CHECK(down.frames == 10000 && down.retries > 1000 && down.retries < 1250 && down.failed == 0);
    /* below what holds the association: every attempt fails, the frame is lost */
    wifi_air_reset();
    wifi_air_set(44.0, WIFI_AIR_AP_DBM_DEFAULT);
    uint64_t start = wifi_air_free_at_us();
    CHECK(!wifi_air_carry(54, WIFI_AIR_UP, now));
    wifi_air_counts(&up, &down);
    CHECK(up.frames == 1 && up.retries == WIFI_AIR_RETRY_LIMIT - 1 && up.failed == 1);
    CHECK(wifi_air_free_at_us() > start);
    /* the planted bad point: twice the air at that attenuation only */
    wifi_air_reset();
    wifi_air_set_notch(20);
    wifi_air_set(20.0, WIFI_AIR_AP_DBM_DEFAULT);
    (void)wifi_air_carry(1512, WIFI_AIR_UP, now);
    CHECK(wifi_air_free_at_us() == now - WIFI_AIR_CREDIT_US + 2u * 361500u / 1000u);
    wifi_air_set(21.0, WIFI_AIR_AP_DBM_DEFAULT);
    (void)wifi_air_carry(1512, WIFI_AIR_UP, now);
    CHECK(wifi_air_free_at_us() == now - WIFI_AIR_CREDIT_US + 3u * 361500u / 1000u + 1u);
}

static void test_station_follows_the_attenuator(void)
{
    CHECK(wifi_sim_use_air(air_path, WIFI_AIR_NOTCH_OFF));
    attenuate("0\n");
    test_output_reset();
    wifi_command_line("wifi connect " AP_SSID_HEX " - 10.77.0.2 24");
    wifi_run_ms(100);
    CHECK(wifi_output_has("RESULT wifi status=connected source=console ssid_hex=" AP_SSID_HEX));
    CHECK(wifi_output_has(" rssi=-40 ") && wifi_output_has(" noise=-95 mcs=7 phy_kbps=65000 tx_frames=0 tx_retries=0 tx_failed=0"));

    attenuate("30 17\n"); /* 30 dB and the AP's power down to 17 dBm: -73 dBm, MCS 3 */
    test_output_reset();
    wifi_command_line("wifi status");
    CHECK(wifi_output_has(" rssi=-73 ") && wifi_output_has(" mcs=3 phy_kbps=26000 "));

    attenuate("thirty\n"); /* malformed: the air stays as it was */
    test_output_reset();
    wifi_command_line("wifi status");
    CHECK(wifi_output_has(" rssi=-73 "));

    /* the signal gone: the association ends after the beacon timeout, re-joins when it is back */
    attenuate("60\n");
    wifi_run_ms(WIFI_SIM_BEACON_TIMEOUT_MS - 100);
    CHECK(netif_is_link_up(&netif));
    test_output_reset();
    wifi_run_ms(200);
    CHECK(wifi_output_has("WIFI status=disconnected source=console reason=200 name=BEACON_TIMEOUT\r\n"));
    CHECK(!netif_is_link_up(&netif));
    wifi_run_ms(2000);
    CHECK(!netif_is_link_up(&netif)); /* the AP is not heard: every attempt fails */
    test_output_reset();
    attenuate("10\n");
    wifi_run_ms(WIFI_SIM_FAIL_MS + WIFI_SIM_JOIN_MS + 50);
    CHECK(wifi_output_has("WIFI status=connected source=console ") && wifi_output_has(" rssi=-50 "));
    CHECK(netif_is_link_up(&netif));
    CHECK(!wifi_sim_use_air("/a/path/longer/than/the/station/keeps/................................................"
                            "................................................................................"
                            "................................................................................"
                            "................................................................................",
                            WIFI_AIR_NOTCH_OFF));
}

int main(void)
{
    snprintf(air_path, sizeof air_path, "test_wifi_air.attenuator"); /* in ctest's working directory */
    test_model();
    test_air();
    CHECK(fw_app_add_commands(wifi_sim_commands, WIFI_SIM_COMMAND_COUNT));
    lwip_init();
    test_netif_add(&netif, 0, 0);
    CHECK(wifi_sim_init(&netif, "lab ap", ""));
    fw_app_init(&netif);
    test_station_follows_the_attenuator();
    remove(air_path);
    CHECK(!host_core_locked());
    return check_summary("test_wifi_air");
}
