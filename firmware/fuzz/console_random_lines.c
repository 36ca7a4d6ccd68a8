/*
 * console_random_lines: feeds N pseudo-random console lines (default 10000) into the whole
 * application - command words and options mixed with random numbers, addresses and raw bytes -
 * and fails if the application stops answering. Run under ASan/UBSan, any memory error aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_config.h"
#include "harness.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

static const char *const words[] = {
    "iperf", "ping", "stats", "version", "help", "restart", "-s", "-c", "-u", "-p", "-t", "-n", "-l", "-b",
    "-i", "-a", "--abort", "-f", "-S", "-B", "-P", "-V", "-W", "-x", "--udp", "--port=", "--len=", "reset",
    "10.77.0.1", "10.77.0.2", "255.255.255.255", "0.0.0.0", "1.2.3", "0", "1", "65535", "65536", "1472",
    "1473", "100m", "1G", "0.1", "0.0001", "-1", "4294967296", "99999999999999999999", "k", "",
    "wifi", "wifi", "connect", "status", "disconnect", "wifisim", "ap", "on", "off", "drop", "24", "32", "-",
    "66757a7a206170" /* "fuzz ap" */, "66757a7a2070617373706872617365" /* "fuzz passphrase" */, "6", "0g", "00",
};

static size_t make_line(char *buf, size_t size)
{
    size_t n = 0;
    unsigned tokens = rnd() % 12u;
    for (unsigned t = 0; t < tokens && n + 40 < size; t++) {
        switch (rnd() % 8u) {
        case 0: /* a random number */
            n += (size_t)snprintf(buf + n, size - n, "%u", rnd() >> (rnd() % 32u));
            break;
        case 1: { /* raw bytes, including control and non-ASCII */
            unsigned k = 1u + rnd() % 8u;
            for (unsigned i = 0; i < k; i++) {
                buf[n++] = (char)(rnd() & 0xffu);
            }
            break;
        }
        case 2: /* a very long token */
            if (rnd() % 8u == 0) {
                size_t k = rnd() % (FW_CONSOLE_LINE_MAX + 64u);
                if (k > size - n - 2) {
                    k = size - n - 2;
                }
                memset(buf + n, 'A', k);
                n += k;
            }
            break;
        default: {
            const char *w = words[rnd() % (sizeof words / sizeof words[0])];
            size_t k = strlen(w);
            memcpy(buf + n, w, k);
            n += k;
        }
        }
        buf[n++] = (rnd() % 16u) ? ' ' : '\t';
    }
    buf[n++] = (rnd() % 4u) ? '\n' : '\r';
    return n;
}

int main(int argc, char **argv)
{
    long count = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    char line[2 * FW_CONSOLE_LINE_MAX + 512];
    harness_init();
    for (long i = 0; i < count; i++) {
        size_t before = harness_output_bytes();
        size_t n = make_line(line, sizeof line);
        harness_feed(line, n);
        if (harness_output_bytes() == before) {
            fprintf(stderr, "line %ld: the console gave no answer\n", i);
            return 1;
        }
    }
    /* still alive and answering */
    size_t before = harness_output_bytes();
    harness_feed("version\n", 8);
    if (harness_output_bytes() == before) {
        fprintf(stderr, "version gave no answer after %ld lines\n", count);
        return 1;
    }
    printf("console_random_lines: %ld lines fed, application still answering\n", count);
    return 0;
}
