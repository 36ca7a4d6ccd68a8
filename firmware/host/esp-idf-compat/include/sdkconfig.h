/* sdkconfig.h (host stand-in) - the project's Kconfig options the ESP32 port's Wi-Fi modules read. */
#ifndef HOST_COMPAT_SDKCONFIG_H
#define HOST_COMPAT_SDKCONFIG_H

/* main/Kconfig.projbuild's default; a host build may set another (-D) */
#ifndef CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS
#define CONFIG_HIL_WIFI_CONNECT_TIMEOUT_MS 30000
#endif

#endif /* HOST_COMPAT_SDKCONFIG_H */
