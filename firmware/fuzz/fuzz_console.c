/* libFuzzer target: arbitrary console input into the whole application. */
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    harness_init();
    harness_feed((const char *)data, size);
    return 0;
}
