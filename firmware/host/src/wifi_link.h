/*
 * wifi_link.h - Wi-Fi between two host firmwares on one link: one runs the SoftAP (wifi_ap.h,
 * `wifi ap`), the other a station (wifi_sim.h in link mode, `wifi connect`). The air's management
 * frames cross the tap as Ethernet frames of EtherType WIFI_LINK_ETHERTYPE (IEEE 802 local
 * experimental 2), read before the stack whatever the netif's link state:
 *
 *   beacon      SoftAP -> broadcast, every WIFI_LINK_BEACON_MS: SSID, channel, secured, ANonce
 *               (new at every start: a station hearing another one knows the SoftAP restarted)
 *   assoc req   station -> SoftAP: SSID, SNonce, and for a secured SoftAP the proof that it holds
 *               the passphrase, HMAC-SHA256(passphrase, ANonce | SNonce | station MAC | BSSID): the
 *               passphrase itself never crosses the link, as in WPA2's handshake
 *   assoc resp  SoftAP -> station: 0 (associated) or the reason it refused (15: a wrong
 *               passphrase, as ESP-IDF reports a failed 4-way handshake; 5: the SoftAP is full)
 *   deauth      either way: the association ended, with its reason (the SoftAP stopping: 3)
 *
 * Data frames pass the SoftAP from any sender (the bench PC's wired frames too); a station passes
 * nothing but management frames until it has associated (wifi_sim.c). No air time is modelled for
 * management frames.
 */
#ifndef WIFI_LINK_H
#define WIFI_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wifi_sta.h"

#define WIFI_LINK_ETHERTYPE 0x88B6u
#define WIFI_LINK_BEACON_MS 100       /* the beacon interval (102.4 ms on a real AP) */
#define WIFI_LINK_HEARD_MS 350        /* a SoftAP is on the air while a beacon came this recently */
#define WIFI_LINK_NONCE_BYTES 8
#define WIFI_LINK_PROOF_BYTES 32
#define WIFI_LINK_MAX_STATIONS 4      /* stations one SoftAP holds (ESP-IDF's default max_connection) */
#define WIFI_LINK_FRAME_MAX 128       /* bytes of the largest management frame */
#define WIFI_LINK_CHANNEL 6

/* the reasons the simulation reports (wifi_err_reason_t, ESP-IDF v5.x) */
#define WIFI_LINK_REASON_AUTH_EXPIRE 2  /* the SoftAP did not answer the association request */
#define WIFI_LINK_REASON_AUTH_LEAVE 3   /* the SoftAP stopped */
#define WIFI_LINK_REASON_ASSOC_TOOMANY 5
#define WIFI_LINK_REASON_NOT_ASSOCED 7  /* the SoftAP restarted: it no longer knows the station */
#define WIFI_LINK_REASON_ASSOC_LEAVE 8  /* the station left */
#define WIFI_LINK_REASON_4WAY_HANDSHAKE_TIMEOUT 15

/** A SoftAP as a station hears it in its beacons. */
struct wifi_link_bss {
    uint8_t bssid[6];
    uint8_t ssid[WIFI_STA_SSID_MAX];
    size_t ssid_len;
    uint8_t channel;
    bool secured;
    uint8_t anonce[WIFI_LINK_NONCE_BYTES];
};

/** Writes one whole Ethernet frame to the link (the tap; a test's other end). */
typedef void (*wifi_link_send_fn)(const uint8_t *frame, size_t len);

/** Binds the air to the netif (its MAC is the station's address and the SoftAP's BSSID) and the
 *  link's writer. The netif's link is down until the SoftAP starts or the station associates. */
void wifi_link_init(struct netif *netif, wifi_link_send_fn send);

/** A frame read from the link: true when it was the air's (then it is not the stack's). */
bool wifi_link_input(const uint8_t *frame, size_t len);

/** Microseconds until the SoftAP's next beacon; UINT64_MAX when it is not running. */
uint64_t wifi_link_poll_delay_us(void);

/** Sends the beacon that is due (call from the main loop). */
void wifi_link_poll(void);

/** Whether the SoftAP runs (the station's `wifi connect` is refused while it does). */
bool wifi_link_ap_running(void);

/* ---- For the station (wifi_sim.c) ---------------------------------------------------------- */

/** The SoftAP heard last, if within WIFI_LINK_HEARD_MS. */
bool wifi_link_heard(struct wifi_link_bss *bss);

/** Asks `bss` to associate the station with `target`'s SSID and passphrase. */
void wifi_link_request(const struct wifi_link_bss *bss, const struct wifi_sta_target *target);

/** Tells `bssid` the station left. */
void wifi_link_leave(const uint8_t bssid[6], uint8_t reason);

/** The station's side, called by wifi_link_input (wifi_sim.c): a beacon, the answer to its
 *  request (0: associated, else the reason), a deauthentication from a SoftAP. */
void wifi_sim_link_beacon(const struct wifi_link_bss *bss);
void wifi_sim_link_answer(const uint8_t bssid[6], uint8_t status);
void wifi_sim_link_deauth(const uint8_t bssid[6], uint8_t reason);

#endif /* WIFI_LINK_H */
