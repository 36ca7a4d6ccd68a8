/*
 * iperf_cmd.h - the iperf console command's options, compatible with Espressif's iperf-cmd:
 *   iperf -s | -c IP [-u] [-p port] [-t s | -n bytes] [-l len] [-b bw[kKmMgG]] [-i s]
 *         [-f b|k|m] [-S tos] [-B IP] [-P 1]
 *   iperf -a | --abort
 */
#ifndef IPERF_CMD_H
#define IPERF_CMD_H

#include <stdbool.h>
#include <stdint.h>

enum iperf_role { IPERF_ROLE_NONE, IPERF_ROLE_SERVER, IPERF_ROLE_CLIENT };

struct iperf_config {
    bool abort;
    enum iperf_role role;
    bool udp;
    uint32_t peer_ip;     /* host order; client only */
    uint32_t bind_ip;     /* host order; 0 = any */
    uint16_t port;
    uint32_t duration_ms; /* client: test length; server: 0 = until one session ends */
    uint64_t amount;      /* client: bytes to send instead of a duration (0 = time mode) */
    uint32_t len;         /* write / datagram length */
    uint64_t bandwidth;   /* bit/s; 0 = as fast as possible */
    uint32_t interval_ms; /* 0 = no interval reports */
    uint8_t tos;
    char format;          /* 'b', 'k' or 'm': unit of interval reports */
    bool nodelay;         /* TCP client: Nagle's algorithm off (TCP_NODELAY, iperf -N) */
    bool silent_server;   /* a UDP server that does not answer the client's FIN (Espressif's iperf
                             sends no server report; set by its console personality only) */
};

/**
 * Parses argv (argv[0] = "iperf") into cfg. On failure returns false and writes a one-line
 * reason into err.
 */
bool iperf_cmd_parse(int argc, char **argv, struct iperf_config *cfg, char *err, unsigned err_size);

#endif /* IPERF_CMD_H */
