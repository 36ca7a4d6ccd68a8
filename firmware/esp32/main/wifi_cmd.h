/*
 * wifi_cmd.h - the ESP32 port's `wifi` console command:
 *
 *   wifi connect SSID_HEX PSK_HEX|- IP PREFIX_LEN [GW]
 *       SSID and passphrase as hex of their bytes ("-": open network); static IPv4 (DHCP off).
 *       Starts connecting and returns; the final line comes when the station is associated:
 *         RESULT wifi status=connected source=console ssid_hex= bssid= channel= rssi= auth= phy= ip=
 *                joins=<associations since boot> lost_reason=<why the last one ended, 0: none> lost_name=
 *       or, after CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS of failed attempts:
 *         ERR wifi connect failed: reason=<wifi_err_reason_t> (<NAME>) attempts=<n>
 *   wifi status      RESULT wifi status=connected ... (as above; where the driver tells them, then
 *                    noise= mcs= phy_kbps= tx_frames= tx_retries= tx_failed= rx_frames= rx_retries=
 *                    rx_failed=: the radio's figures, counted since start)
 *                    RESULT wifi status=connecting source= ssid_hex= attempts=<n> reason=<last> name=<NAME>
 *                    RESULT wifi status=disconnected
 *   wifi disconnect  RESULT wifi status=disconnected (after "ERR wifi connect failed: aborted by wifi
 *                    disconnect" when a `wifi connect` was still waiting for its final line)
 *   wifi ap SSID_HEX PSK_HEX|- IP PREFIX_LEN
 *                    the SoftAP (wifi_ap.h) with that SSID, passphrase ("-": open) and static
 *                    address, at once: RESULT wifi mode=softap status=started ssid_hex= bssid=
 *                    channel= auth= ip= stations=<associated now>; `wifi status` says the same
 *                    while it runs, and the station's `wifi connect` is refused ("busy: softap")
 *   wifi ap stop     RESULT wifi mode=softap status=stopped (its stations are told)
 *
 * The passphrase is never printed; the SSID only as hex. Events without a command (a lost and
 * re-joined link) are reported as "WIFI status=..." lines.
 */
#ifndef WIFI_CMD_H
#define WIFI_CMD_H

#include "wifi_sta.h"

#define WIFI_CMD_USAGE \
    "connect SSID_HEX PSK_HEX|- IP PREFIX_LEN [GW] | status | disconnect | ap SSID_HEX PSK_HEX|- IP PREFIX_LEN | ap stop"

/** The console command (runs in the app task with the lwIP core lock held; only queues work). */
void wifi_command(int argc, char **argv);

/** Does the queued work and follows the driver's events; app task, lwIP core lock NOT held. */
void wifi_cmd_service(void);

#endif /* WIFI_CMD_H */
