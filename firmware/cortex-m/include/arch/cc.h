/* arch/cc.h - lwIP glue for the Cortex-M7 boards (bare metal, newlib). */
#ifndef ARCH_CC_H
#define ARCH_CC_H

#include <stdint.h>

void board_fatal(const char *msg, const char *file, int line) __attribute__((noreturn));
void board_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define LWIP_PLATFORM_DIAG(x) do { board_diag x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) board_fatal(x, __FILE__, __LINE__)
#define LWIP_NO_UNISTD_H 1
#define LWIP_ERRNO_STDINCLUDE 1

#endif /* ARCH_CC_H */
