/*
 * iperf.h - iperf 2 client and server, TCP and UDP, on lwIP's raw API (NO_SYS=1).
 * One test at a time; each ends with exactly one "RESULT iperf ..." line.
 */
#ifndef IPERF_H
#define IPERF_H

#include <stdbool.h>
#include <stdint.h>

#include "iperf_cmd.h"

/** The console command: parses argv and starts or aborts a test. */
void iperf_command(int argc, char **argv);

/** Runs due work at now_us. */
void iperf_poll(uint64_t now_us);

/** Absolute time (us) of the next due work, UINT64_MAX if none. */
uint64_t iperf_next_deadline_us(void);

#endif /* IPERF_H */
