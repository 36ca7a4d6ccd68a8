/* lwip/tcpip.h (host stand-in for the ESP32 port's hil_lock.h) - the host runs lwIP with NO_SYS=1
 * from one thread, so there is nothing to exclude; the "lock" checks the port's discipline
 * instead: ESP-IDF's core lock is not recursive, so taking it twice aborts (host/src/core_lock.c). */
#ifndef HOST_COMPAT_LWIP_TCPIP_H
#define HOST_COMPAT_LWIP_TCPIP_H

#include "core_lock.h"

#define LWIP_TCPIP_CORE_LOCKING 1
#define LOCK_TCPIP_CORE() host_core_lock()
#define UNLOCK_TCPIP_CORE() host_core_unlock()

#endif /* HOST_COMPAT_LWIP_TCPIP_H */
