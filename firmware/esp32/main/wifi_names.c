#include "wifi_names.h"

#include <stdio.h>

/* wifi_err_reason_t values of ESP-IDF v5.x (esp_wifi_types.h): IEEE 802.11 reason codes below
 * 200, Espressif's own from 200 on. Numbers, not enumerators, so that this table builds with
 * every v5.x release (some enumerators were renamed). */
static const struct {
    unsigned code;
    const char *name;
} reasons[] = {
    {1, "UNSPECIFIED"},
    {2, "AUTH_EXPIRE"},
    {3, "AUTH_LEAVE"},
    {4, "ASSOC_EXPIRE"},
    {5, "ASSOC_TOOMANY"},
    {6, "NOT_AUTHED"},
    {7, "NOT_ASSOCED"},
    {8, "ASSOC_LEAVE"},
    {9, "ASSOC_NOT_AUTHED"},
    {10, "DISASSOC_PWRCAP_BAD"},
    {11, "DISASSOC_SUPCHAN_BAD"},
    {13, "IE_INVALID"},
    {14, "MIC_FAILURE"},
    {15, "4WAY_HANDSHAKE_TIMEOUT"},
    {16, "GROUP_KEY_UPDATE_TIMEOUT"},
    {17, "IE_IN_4WAY_DIFFERS"},
    {18, "GROUP_CIPHER_INVALID"},
    {19, "PAIRWISE_CIPHER_INVALID"},
    {20, "AKMP_INVALID"},
    {21, "UNSUPP_RSN_IE_VERSION"},
    {22, "INVALID_RSN_IE_CAP"},
    {23, "802_1X_AUTH_FAILED"},
    {24, "CIPHER_SUITE_REJECTED"},
    {53, "INVALID_PMKID"},
    {200, "BEACON_TIMEOUT"},
    {201, "NO_AP_FOUND"},
    {202, "AUTH_FAIL"},
    {203, "ASSOC_FAIL"},
    {204, "HANDSHAKE_TIMEOUT"},
    {205, "CONNECTION_FAIL"},
    {206, "AP_TSF_RESET"},
    {207, "ROAMING"},
};

const char *wifi_reason_name(unsigned reason)
{
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        if (reasons[i].code == reason) {
            return reasons[i].name;
        }
    }
    return "UNKNOWN";
}

/* wifi_auth_mode_t in enumeration order (unchanged prefix across ESP-IDF v5.x). */
static const char *const auth_names[] = {
    "open", "wep", "wpa", "wpa2", "wpa_wpa2", "wpa2_ent", "wpa3", "wpa2_wpa3", "wapi", "owe", "wpa3_ent_192",
};

const char *wifi_auth_name(unsigned authmode, char *buf, size_t size)
{
    if (authmode < sizeof auth_names / sizeof auth_names[0]) {
        return auth_names[authmode];
    }
    snprintf(buf, size, "auth%u", authmode);
    return buf;
}

const char *wifi_phy_name(bool b, bool g, bool n, bool lr, char *buf, size_t size)
{
    if (!b && !g && !n && !lr) {
        return "none";
    }
    snprintf(buf, size, "%s%s%s%s%s", (b || g || n) ? "11" : "", b ? "b" : "", g ? "g" : "", n ? "n" : "",
             lr ? ((b || g || n) ? "+lr" : "lr") : "");
    return buf;
}
