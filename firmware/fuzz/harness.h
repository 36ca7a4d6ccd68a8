/*
 * harness.h - the whole application (console, iperf, ping, stats over lwIP) on a netif whose
 * frames go nowhere, for fuzzing and random-input tests under ASan/UBSan; with the ESP32 port's
 * `wifi` command over the host's simulated station (AP "fuzz ap", passphrase "fuzz passphrase").
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>

/** Initialises lwIP and the application once. */
void harness_init(void);

/** Feeds console bytes, runs the stack's timers and the app's poll, then aborts any test. */
void harness_feed(const char *data, size_t len);

/** Bytes of console output so far (proof the app answered). */
size_t harness_output_bytes(void);

#endif /* HARNESS_H */
