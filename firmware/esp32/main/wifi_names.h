/* wifi_names.h - printable names for Wi-Fi driver values (reason codes, auth modes, PHY modes). */
#ifndef WIFI_NAMES_H
#define WIFI_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/** Name of a wifi_err_reason_t value ("UNKNOWN" for a value not in the table). */
const char *wifi_reason_name(unsigned reason);

/** Short name of a wifi_auth_mode_t value ("wpa2", "wpa2_wpa3", ...; "authN" when unknown). */
const char *wifi_auth_name(unsigned authmode, char *buf, size_t size);

/** The AP's PHY modes as one token, e.g. "11bgn" or "11bgn+lr" ("none" when no flag is set). */
const char *wifi_phy_name(bool b, bool g, bool n, bool lr, char *buf, size_t size);

#endif /* WIFI_NAMES_H */
