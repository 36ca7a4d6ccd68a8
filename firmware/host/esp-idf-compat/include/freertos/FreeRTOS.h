/* FreeRTOS.h (host stand-in) - the tick type the ESP32 port's Wi-Fi header names. */
#ifndef HOST_COMPAT_FREERTOS_H
#define HOST_COMPAT_FREERTOS_H

#include <stdint.h>

typedef uint32_t TickType_t;

#endif /* HOST_COMPAT_FREERTOS_H */
