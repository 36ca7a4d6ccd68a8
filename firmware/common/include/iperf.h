/*
 * iperf.h - the `iperf` console command: iperf 2 client and server, TCP and UDP, on lwIP's raw
 * API (NO_SYS=1). One server and one client may run at once (both directions); each test ends
 * with exactly one "RESULT iperf ..." line.
 *
 * iperf_console.c parses the command (iperf_cmd.c), starts one of the four engines
 * (iperf_engine.h: iperf_tcp_client.c, iperf_tcp_server.c, iperf_udp_client.c,
 * iperf_udp_server.c) and prints every line from their events and results.
 */
#ifndef IPERF_H
#define IPERF_H

#include "fw_module.h"

/** The `iperf` command with its poll and deadline (fw_modules.c). */
extern const struct fw_module iperf_module;

#endif /* IPERF_H */
