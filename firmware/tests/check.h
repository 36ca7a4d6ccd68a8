/* check.h - a minimal unit-test harness: CHECK records failures, check_summary() reports them. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        check_count++;                                                                \
        if (!(cond)) {                                                                \
            check_failures++;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

static inline int check_summary(const char *suite)
{
    printf("%s: %d checks, %d failed\n", suite, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif /* CHECK_H */
