#include "core_lock.h"

#include <stdio.h>
#include <stdlib.h>

static bool held;

void host_core_lock(void)
{
    if (held) {
        fputs("hil-fw-host: the core lock was taken while held (ESP-IDF's lwIP would deadlock here)\n", stderr);
        abort();
    }
    held = true;
}

void host_core_unlock(void)
{
    if (!held) {
        fputs("hil-fw-host: the core lock was released while not held\n", stderr);
        abort();
    }
    held = false;
}

bool host_core_locked(void)
{
    return held;
}
