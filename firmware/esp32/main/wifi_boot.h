/*
 * wifi_boot.h - joining a network at boot with build-time credentials: when HIL_WIFI_SSID (and
 * HIL_WIFI_PSK) were set in CMake's environment, main/CMakeLists.txt wrote them into the build
 * directory's hil_wifi_build_credentials.h; with CONFIG_HIL_WIFI_STATIC_IP set too the station
 * connects at boot (reported as "WIFI status=..." lines, `wifi status` says source=build).
 */
#ifndef WIFI_BOOT_H
#define WIFI_BOOT_H

/** Queues the boot-time connection if the build has credentials and a static address. */
void wifi_boot_connect(void);

#endif /* WIFI_BOOT_H */
