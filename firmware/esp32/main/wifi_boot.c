#include "wifi_boot.h"

#include <string.h>

#include "fw_out.h"
#include "fw_parse.h"
#include "hil_lock.h"
#include "hil_wifi_build_credentials.h"
#include "sdkconfig.h"
#include "wifi_cmd.h"

#if HIL_WIFI_BUILD_SSID_LEN > 0
static void say(const char *line)
{
    hil_lock();
    fw_printf("%s", line);
    hil_unlock();
}

void wifi_boot_connect(void)
{
    static const uint8_t ssid[] = {HIL_WIFI_BUILD_SSID_BYTES};
    _Static_assert(sizeof ssid <= WIFI_STA_SSID_MAX, "HIL_WIFI_SSID is longer than 32 bytes");
    struct wifi_sta_target t;
    memset(&t, 0, sizeof t);
    if (CONFIG_HIL_WIFI_STATIC_IP[0] == '\0') {
        say("wifi: build-time credentials present, no CONFIG_HIL_WIFI_STATIC_IP: waiting for wifi connect\r\n");
        return;
    }
    uint32_t gw = 0;
    if (!fw_parse_ipv4(CONFIG_HIL_WIFI_STATIC_IP, &t.ip) || t.ip == 0 ||
        (CONFIG_HIL_WIFI_STATIC_GW[0] != '\0' && !fw_parse_ipv4(CONFIG_HIL_WIFI_STATIC_GW, &gw))) {
        say("WIFI status=failed source=build reason=0 name=INVALID_STATIC_IP attempts=0\r\n");
        return;
    }
    memcpy(t.ssid, ssid, sizeof ssid);
    t.ssid_len = sizeof ssid;
#if HIL_WIFI_BUILD_PSK_LEN > 0
    static const uint8_t psk[] = {HIL_WIFI_BUILD_PSK_BYTES};
    _Static_assert(sizeof psk <= WIFI_STA_PSK_MAX, "HIL_WIFI_PSK is longer than 63 characters");
    memcpy(t.psk, psk, sizeof psk);
    t.psk_len = sizeof psk;
#endif
    const uint32_t prefix_len = CONFIG_HIL_WIFI_STATIC_PREFIX_LEN;
    t.netmask = prefix_len >= 32 ? 0xffffffffu : ~(0xffffffffu >> prefix_len);
    t.gw = gw;
    t.source = WIFI_STA_SOURCE_BUILD;
    if (!wifi_cmd_connect_at_boot(&t)) {
        say("WIFI status=failed source=build reason=0 name=BUSY attempts=0\r\n");
    }
    wifi_sta_wipe(&t, sizeof t);
}
#else
void wifi_boot_connect(void)
{
}
#endif
