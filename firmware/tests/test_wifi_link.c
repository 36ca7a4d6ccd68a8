/*
 * Unit tests: Wi-Fi between two host firmwares on one link (host/src/wifi_link.c): the SoftAP of
 * `wifi ap` and the station of `wifi connect` in link mode (host/src/wifi_sim.c), inside the whole
 * application (the ESP32 port's wifi_cmd.c), on a clock the test moves. The test is the other end
 * of the link: it reads every frame the firmware writes, and writes the frames a station (for the
 * SoftAP) or a SoftAP (for the station) would. Checked: SHA-256 and HMAC-SHA256 against their
 * standards' vectors; beacons; the proof of the passphrase, which never crosses the link or the
 * console; the refusals (wrong passphrase, another SSID, a full SoftAP); a SoftAP that stops,
 * restarts or goes silent ending the station's association with the reason ESP-IDF would give.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core_lock.h"
#include "fw_app.h"
#include "hil_hex.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "test_platform.h"
#include "test_wifi_loop.h"
#include "wifi_cmd.h"
#include "wifi_hmac.h"
#include "wifi_link.h"
#include "wifi_sim.h"

#define SSID "pair ap"
#define SSID_HEX "70616972206170"
#define PSK "softap passphrase"
#define PSK_HEX "736f667461702070617373706872617365"
#define WRONG_PSK "softap passphrasf"
#define FRAMES_MAX 256

static struct netif netif;
static uint8_t frames[FRAMES_MAX][WIFI_LINK_FRAME_MAX];
static size_t frame_len[FRAMES_MAX];
static size_t frame_count;

static const uint8_t station_mac[6] = {0x02, 0, 0, 0, 0, 0x51};
static const uint8_t other_station[6] = {0x02, 0, 0, 0, 0, 0x52};
static const uint8_t ap_bssid[6] = {0x02, 0, 0, 0, 0, 0xa1};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static void capture(const uint8_t *frame, size_t len)
{
    CHECK(len <= WIFI_LINK_FRAME_MAX && frame_count < FRAMES_MAX);
    if (len <= WIFI_LINK_FRAME_MAX && frame_count < FRAMES_MAX) {
        memcpy(frames[frame_count], frame, len);
        frame_len[frame_count++] = len;
    }
}

static void frames_reset(void)
{
    frame_count = 0;
}

/* The last captured frame of `kind` (beacon 1, request 2, answer 3, deauth 4); NULL: none. */
static const uint8_t *last_frame(uint8_t kind)
{
    for (size_t i = frame_count; i-- > 0;) {
        if (frames[i][14 + 3] == kind) {
            return frames[i];
        }
    }
    return NULL;
}

static unsigned frames_of(uint8_t kind)
{
    unsigned n = 0;
    for (size_t i = 0; i < frame_count; i++) {
        n += frames[i][14 + 3] == kind;
    }
    return n;
}

static bool frames_hold(const char *text)
{
    size_t n = strlen(text);
    for (size_t i = 0; i < frame_count; i++) {
        for (size_t j = 0; j + n <= frame_len[i]; j++) {
            if (memcmp(frames[i] + j, text, n) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* A frame of the air from `src` to `dst`: kind and body. */
static void inject(const uint8_t *dst, const uint8_t *src, uint8_t kind, const uint8_t *body, size_t len)
{
    uint8_t f[WIFI_LINK_FRAME_MAX] = {0};
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x88;
    f[13] = 0xb6;
    f[14] = 'H';
    f[15] = 'W';
    f[16] = 1;
    f[17] = kind;
    memcpy(f + 18, body, len);
    CHECK(wifi_link_input(f, 60 > 18 + len ? 60 : 18 + len));
}

static void proof_of(const char *psk, const uint8_t *anonce, const uint8_t *snonce, const uint8_t *sta,
                     const uint8_t *bssid, uint8_t out[32])
{
    const uint8_t *parts[] = {anonce, snonce, sta, bssid};
    const size_t lens[] = {8, 8, 6, 6};
    wifi_hmac_sha256((const uint8_t *)psk, strlen(psk), parts, lens, 4, out);
}

static bool hex_is(const uint8_t *digest, const char *hex)
{
    char got[65];
    hil_hex_encode(digest, 32, got, sizeof got);
    return strcmp(got, hex) == 0;
}

static void test_sha256_and_hmac_vectors(void)
{
    uint8_t d[32];
    wifi_sha256((const uint8_t *)"abc", 3, d); /* FIPS 180-4 example */
    CHECK(hex_is(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* two blocks */
    wifi_sha256((const uint8_t *)two, strlen(two), d);
    CHECK(hex_is(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    const uint8_t *msg[] = {(const uint8_t *)"what do ya want ", (const uint8_t *)"for nothing?"};
    const size_t len[] = {16, 12};
    wifi_hmac_sha256((const uint8_t *)"Jefe", 4, msg, len, 2, d); /* RFC 4231, test case 2 */
    CHECK(hex_is(d, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
    uint8_t key[131];
    memset(key, 0xaa, sizeof key);
    const uint8_t *big[] = {(const uint8_t *)"Test Using Larger Than Block-Size Key - Hash Key First"};
    const size_t big_len[] = {54};
    wifi_hmac_sha256(key, sizeof key, big, big_len, 1, d); /* RFC 4231, test case 6 */
    CHECK(hex_is(d, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"));
}

/* An association request to the SoftAP from `sta` with the proof of `psk` (NULL: none). */
static void request(const uint8_t *sta, const char *ssid, const char *psk)
{
    const uint8_t *beacon = last_frame(1);
    CHECK(beacon != NULL);
    if (beacon == NULL) {
        return;
    }
    uint8_t body[1 + 32 + 8 + 32] = {0};
    body[0] = (uint8_t)strlen(ssid);
    memcpy(body + 1, ssid, strlen(ssid));
    memset(body + 33, 0x5a, 8); /* SNonce */
    if (psk != NULL) {
        proof_of(psk, beacon + 14 + 7 + 32, body + 33, sta, beacon + 6, body + 41);
    }
    inject(netif.hwaddr, sta, 2, body, sizeof body);
}

/* The SoftAP's answer to `sta` in the frames captured since the last reset: its code, -1: none. */
static int answer_to(const uint8_t *sta)
{
    const uint8_t *a = last_frame(3);
    return a != NULL && memcmp(a, sta, 6) == 0 ? a[18] : -1;
}

static void test_softap(void)
{
    test_output_reset();
    frames_reset();
    CHECK(!netif_is_link_up(&netif));
    wifi_command_line("wifi ap " SSID_HEX " " PSK_HEX " 10.77.0.2 24");
    CHECK(wifi_output_has("RESULT wifi mode=softap status=started ssid_hex=" SSID_HEX " bssid=02:00:00:00:00:33 "
                          "channel=6 auth=wpa2 ip=10.77.0.2 stations=0\r\n"));
    CHECK(netif_is_link_up(&netif) && wifi_link_ap_running());
    const uint8_t *b = last_frame(1);
    CHECK(b != NULL && memcmp(b, bcast, 6) == 0 && b[18] == 6 && b[19] == 1 && b[20] == 7 &&
          memcmp(b + 21, SSID, 7) == 0);
    wifi_run_ms(1000); /* a beacon every 100 ms */
    CHECK(frames_of(1) >= 10 && frames_of(1) <= 12);

    frames_reset();
    wifi_run_ms(100);
    request(station_mac, SSID, PSK);
    CHECK(answer_to(station_mac) == 0);
    request(other_station, SSID, WRONG_PSK); /* a wrong passphrase: refused as a failed handshake */
    CHECK(answer_to(other_station) == 15);
    request(other_station, SSID, NULL); /* no proof at all */
    CHECK(answer_to(other_station) == 15);
    frames_reset();
    wifi_run_ms(100);
    request(other_station, "other ap", PSK); /* another SSID: not this SoftAP's to answer */
    CHECK(answer_to(other_station) == -1);
    test_output_reset();
    wifi_command_line("wifi status");
    wifi_run_ms(10);
    CHECK(wifi_output_has("auth=wpa2 ip=10.77.0.2 stations=1\r\n"));

    uint8_t fill[6] = {0x02, 0, 0, 0, 0, 0x60}; /* the SoftAP holds WIFI_LINK_MAX_STATIONS */
    for (unsigned i = 1; i < WIFI_LINK_MAX_STATIONS; i++) {
        fill[5] = (uint8_t)(0x60 + i);
        request(fill, SSID, PSK);
        CHECK(answer_to(fill) == 0);
    }
    fill[5] = 0x70;
    request(fill, SSID, PSK);
    CHECK(answer_to(fill) == 5);
    inject(netif.hwaddr, station_mac, 4, (const uint8_t *)"\x08", 1); /* a station leaves: room again */
    request(fill, SSID, PSK);
    CHECK(answer_to(fill) == 0);

    test_output_reset();
    wifi_command_line("wifi connect " SSID_HEX " " PSK_HEX " 10.77.0.3 24");
    CHECK(wifi_output_has("ERR wifi busy: softap running (wifi ap stop first)"));
    CHECK(!frames_hold(PSK) && !wifi_output_has(PSK) && !wifi_output_has(PSK_HEX));

    frames_reset();
    test_output_reset();
    wifi_command_line("wifi ap stop");
    CHECK(wifi_output_has("RESULT wifi mode=softap status=stopped\r\n"));
    const uint8_t *d = last_frame(4);
    CHECK(d != NULL && memcmp(d, bcast, 6) == 0 && d[18] == 3); /* its stations are told: AUTH_LEAVE */
    CHECK(!netif_is_link_up(&netif) && !wifi_link_ap_running());
    frames_reset();
    wifi_run_ms(500);
    CHECK(frames_of(1) == 0);
}

/* A beacon of the test's SoftAP. */
static void beacon_from_ap(const char *ssid, bool secured, uint8_t nonce)
{
    uint8_t body[3 + 32 + 8] = {0};
    body[0] = 6;
    body[1] = secured;
    body[2] = (uint8_t)strlen(ssid);
    memcpy(body + 3, ssid, strlen(ssid));
    memset(body + 35, nonce, 8);
    inject(bcast, ap_bssid, 1, body, sizeof body);
}

/* Runs `ms` with the test's SoftAP beaconing (nonce `nonce`) every 100 ms. */
static void run_with_beacons(unsigned ms, uint8_t nonce)
{
    for (unsigned t = 0; t < ms; t += 100) {
        beacon_from_ap(SSID, true, nonce);
        wifi_run_ms(100);
    }
}

static void answer(uint8_t code)
{
    inject(netif.hwaddr, ap_bssid, 3, &code, 1);
    wifi_loop_once(NULL);
}

/* Runs `ms` in 10-ms steps with the test's SoftAP beaconing every 100 ms and answering every
 * request at once with `code`. */
/* Beacons, and every association request answered with `code`; how many requests were answered. */
static unsigned run_answering(unsigned ms, uint8_t nonce, uint8_t code)
{
    unsigned answered = 0;
    for (unsigned t = 0; t < ms; t += 10) {
        if (t % 100 == 0) {
            beacon_from_ap(SSID, true, nonce);
        }
        if (last_frame(2) != NULL) {
            frames_reset();
            answer(code);
            answered++;
        }
        wifi_run_ms(10);
    }
    return answered;
}

static void test_station(void)
{
    frames_reset();
    test_output_reset();
    run_with_beacons(300, 0x11);
    wifi_command_line("wifi connect " SSID_HEX " " PSK_HEX " 10.77.0.3 24");
    const uint8_t *r = last_frame(2);
    CHECK(r != NULL && memcmp(r, ap_bssid, 6) == 0 && memcmp(r + 6, netif.hwaddr, 6) == 0);
    if (r != NULL) {
        uint8_t anonce[8], expected[32];
        memset(anonce, 0x11, sizeof anonce);
        proof_of(PSK, anonce, r + 14 + 37, netif.hwaddr, ap_bssid, expected);
        CHECK(memcmp(r + 14 + 45, expected, 32) == 0); /* the proof, under this ANonce and its SNonce */
        CHECK(r[18] == 7 && memcmp(r + 19, SSID, 7) == 0);
    }
    CHECK(!frames_hold(PSK) && !netif_is_link_up(&netif));
    answer(0);
    CHECK(wifi_output_has("RESULT wifi status=connected source=console ssid_hex=" SSID_HEX
                          " bssid=02:00:00:00:00:a1 channel=6 rssi=-47 auth=wpa2"));
    CHECK(netif_is_link_up(&netif));

    test_output_reset();
    run_with_beacons(2000, 0x11); /* beacons keep it */
    CHECK(!wifi_output_has("WIFI"));
    frames_reset();
    run_with_beacons(100, 0x22); /* a new ANonce: the SoftAP restarted and forgot the station */
    CHECK(wifi_output_has("WIFI status=disconnected source=console reason=7 name=NOT_ASSOCED"));
    CHECK(last_frame(2) != NULL); /* joining again at once, under the new ANonce */
    answer(0);
    CHECK(wifi_output_has("WIFI status=connected"));
    test_output_reset();
    wifi_command_line("wifi status"); /* joined again: it says how often, and why it lost the last one */
    CHECK(wifi_output_has(" joins=2 lost_reason=7 lost_name=NOT_ASSOCED\r\n"));

    test_output_reset();
    wifi_run_ms(900); /* silent for less than the beacon timeout: still associated */
    CHECK(!wifi_output_has("WIFI") && netif_is_link_up(&netif));
    wifi_run_ms(200);
    CHECK(wifi_output_has("WIFI status=disconnected source=console reason=200 name=BEACON_TIMEOUT"));
    CHECK(!netif_is_link_up(&netif));
    run_with_beacons(300, 0x33); /* back: the station's re-join asks it */
    answer(0);
    CHECK(wifi_output_has("WIFI status=connected"));

    test_output_reset();
    inject(bcast, ap_bssid, 4, (const uint8_t *)"\x03", 1); /* the SoftAP stops */
    wifi_loop_once(NULL);
    CHECK(wifi_output_has("WIFI status=disconnected source=console reason=3 name=AUTH_LEAVE"));
    run_with_beacons(300, 0x44);
    answer(0);

    frames_reset();
    test_output_reset();
    wifi_command_line("wifi disconnect"); /* leaving: the SoftAP is told */
    wifi_loop_once(NULL);
    const uint8_t *d = last_frame(4);
    CHECK(d != NULL && memcmp(d, ap_bssid, 6) == 0 && d[18] == 8);
    CHECK(wifi_output_has("RESULT wifi status=disconnected\r\n") && !netif_is_link_up(&netif));

    test_output_reset();
    run_with_beacons(300, 0x55);
    wifi_command_line("wifi connect " SSID_HEX " " PSK_HEX " 10.77.0.3 24");
    /* refused every time: each attempt still takes its time (a handshake running out), so the
       station asks a few times a second, not as fast as the SoftAP answers */
    unsigned asked = run_answering(31000, 0x55, 15);
    CHECK(wifi_output_has("ERR wifi connect failed: reason=15 (4WAY_HANDSHAKE_TIMEOUT)"));
    CHECK(asked >= 2 && asked <= 31000 / WIFI_SIM_FAIL_MS + 1);

    test_output_reset();
    wifi_run_ms(1000); /* nothing on the air */
    wifi_command_line("wifi connect " SSID_HEX " " PSK_HEX " 10.77.0.3 24");
    wifi_run_ms(31000);
    CHECK(wifi_output_has("ERR wifi connect failed: reason=201 (NO_AP_FOUND)"));
    test_output_reset();
    run_with_beacons(300, 0x66);
    wifi_command_line("wifi connect " SSID_HEX " - 10.77.0.3 24"); /* no passphrase for a secured SoftAP */
    run_with_beacons(31000, 0x66);
    CHECK(wifi_output_has("ERR wifi connect failed: reason=202 (AUTH_FAIL)"));
    test_output_reset();
    frames_reset();
    wifi_command_line("wifi connect " SSID_HEX " " PSK_HEX " 10.77.0.3 24"); /* asked, never answered */
    run_with_beacons(31000, 0x66);
    CHECK(frames_of(2) > 10 && wifi_output_has("ERR wifi connect failed: reason=2 (AUTH_EXPIRE)"));
    CHECK(!wifi_output_has(PSK) && !wifi_output_has(PSK_HEX) && !frames_hold(PSK));

    test_output_reset();
    wifi_command_line("wifisim ap off");
    CHECK(wifi_output_has("ERR wifisim the AP is a SoftAP on the link"));
}

int main(void)
{
    test_sha256_and_hmac_vectors();
    CHECK(fw_app_add_commands(wifi_sim_commands, WIFI_SIM_COMMAND_COUNT));
    lwip_init();
    test_netif_add(&netif, 0, 0);
    wifi_sim_init_link(&netif);
    wifi_link_init(&netif, capture);
    fw_app_init(&netif);
    uint8_t junk[60] = {0};
    CHECK(!wifi_link_input(junk, sizeof junk)); /* not the air's: the stack's */

    test_softap();
    test_station();
    CHECK(!host_core_locked());
    return check_summary("test_wifi_link");
}
