/* fw_inttypes.h - <inttypes.h>, with the 64-bit print macros some newlib builds leave out. */
#ifndef FW_INTTYPES_H
#define FW_INTTYPES_H

#include <inttypes.h>
#include <stdint.h>

#ifndef PRIu64
#define PRIu64 "llu" /* uint64_t is unsigned long long on the 32-bit targets that miss it */
#endif

#endif /* FW_INTTYPES_H */
