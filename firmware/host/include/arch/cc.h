/* arch/cc.h - lwIP compiler/platform glue for the Linux host port. */
#ifndef ARCH_CC_H
#define ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x)                                                                   \
    do {                                                                                          \
        fprintf(stderr, "lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__);       \
        fflush(NULL);                                                                             \
        abort();                                                                                  \
    } while (0)

#define LWIP_NO_UNISTD_H 0

#endif /* ARCH_CC_H */
