/*
 * hil_lock.h - the lwIP core lock (CONFIG_LWIP_TCPIP_CORE_LOCKING) around every call into the
 * common application. lwIP's raw-API callbacks already run in the tcpip thread holding it, so the
 * application's state and its console output are only touched by one task at a time.
 *
 * The lock is not recursive: while it is held, nothing may call an lwIP API that takes it itself
 * (sockets, netconn, esp_netif, esp_console commands). The port therefore runs such work from the
 * app task's loop with the lock released (wifi_cmd_service, esp_cmd_service).
 */
#ifndef HIL_LOCK_H
#define HIL_LOCK_H

#include "lwip/tcpip.h"

#if !LWIP_TCPIP_CORE_LOCKING
#error "the ESP32 port needs CONFIG_LWIP_TCPIP_CORE_LOCKING=y (sdkconfig.defaults)"
#endif

static inline void hil_lock(void)
{
    LOCK_TCPIP_CORE();
}

static inline void hil_unlock(void)
{
    UNLOCK_TCPIP_CORE();
}

#endif /* HIL_LOCK_H */
