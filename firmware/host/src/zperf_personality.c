/*
 * zperf_personality.c - the shell of Zephyr's zperf sample (test equipment; see personality.h),
 * formats from zephyrproject-rtos/zephyr subsys/net/lib/zperf/zperf_shell.c (3.6 - 4.1) and
 * subsys/net/lib/shell/ping.c:
 *   zperf udp upload <ip> <port> <duration s> <packet size>[K] <rate>[K|M]   (rate in bit/s, K = 1000)
 *   zperf tcp upload <ip> <port> <duration s> <packet size>[K]
 *   zperf udp|tcp download [<port>] | download stop
 *   zperf version
 *   net ping [-c count] [-i interval ms] [-s payload size] <host>
 * Numbers as print_number()/print_number_64() print them ("%u.%s%u %s" with two truncated
 * decimals, units Mbps/Kbps and m/s/ms/us); the upload header, the UDP "Statistics:\t\tserver\t(client)"
 * block and the TCP block; the download session blocks; "Upload completed!", "UDP upload failed (%d)"
 * (no server report), "... server started on port %u", "... already started!", "... stopped",
 * "... not running!"; `net ping`'s reply lines, no summary, "Ping timeout" when the last reply is
 * missing 2 s after the last request. The shell: prompt "uart:~$ ", input echoed, the prompt after
 * an upload only when it ends (the upload blocks the shell), "<cmd>: command not found".
 * The packet size is capped at 1472 (the sample built with CONFIG_NET_ZPERF_MAX_PACKET_SIZE=1472,
 * as README says to build it; "Packet size too large! max size: %u" beyond). A download server here
 * serves one session per start (Zephyr's serves sessions until stopped): the suite stops it after each.
 */
#include "personality.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fw_config.h"
#include "fw_console.h"
#include "fw_module.h"
#include "fw_muldiv.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "iperf_cmd.h"
#include "iperf_engine.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "ping.h"

#define ZPERF_MAX_PACKET 1472u
#define ZPERF_DEFAULT_PORT 5001u
#define ZPERF_PING_WAIT_MS 2000u /* ping.c: the wait for the last reply */

/* ---- print_number / print_number_64 -------------------------------------------------------- */

static const uint32_t TIME_US[] = {60u * 1000u * 1000u, 1000u * 1000u, 1000u, 0u};
static const char *const TIME_US_UNIT[] = {"m", "s", "ms", "us"};
static const uint32_t KBPS[] = {1000u, 0u};
static const char *const KBPS_UNIT[] = {"Mbps", "Kbps"};

static void print_number(uint64_t value, const uint32_t *divisor, const char *const *unit)
{
    while (value < *divisor) {
        divisor++;
        unit++;
    }
    if (*divisor != 0u) {
        uint64_t radix = value / *divisor;
        uint32_t dec = (uint32_t)((value % *divisor) * 100u / *divisor);
        fw_printf("%" PRIu64 ".%s%" PRIu32 " %s", radix, dec < 10u ? "0" : "", dec, *unit);
    } else {
        fw_printf("%" PRIu64 " %s", value, *unit);
    }
}

static uint64_t kbps_of(uint64_t bytes, uint64_t us)
{
    return us ? fw_muldiv_u64(bytes, 8000u, us) : 0; /* bytes * 8e6 / (us * 1000), without overflow */
}

/* ---- The zperf session: one upload or one download server ------------------------------------ */

static struct {
    bool active;
    bool upload;
    struct iperf_config cfg;
    const struct iperf_engine *engine;
    uint32_t size;
} zs;

static void ip_text(uint32_t host_order, char *buf, size_t size)
{
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(host_order));
    ip4addr_ntoa_r(&a, buf, (int)size);
}

static void session_end(void)
{
    zs.active = false;
    fw_test_release("zperf");
}

static void upload_done(const struct iperf_result *r)
{
    uint64_t client_us = r->end_us > r->start_us && r->start_us ? r->end_us - r->start_us : 0;
    if (r->start_us == 0) {
        fw_printf("%s upload failed (%d)\n", zs.cfg.udp ? "UDP" : "TCP", -111);
    } else if (zs.cfg.udp && !r->have_report) {
        fw_printf("UDP upload failed (%d)\n", -1); /* no server report: no statistics */
    } else if (zs.cfg.udp) {
        const struct iperf_server_report *s = &r->report;
        fw_printf("-\nUpload completed!\n");
        uint64_t server_kbps = kbps_of(s->total_bytes, s->duration_us);
        if (server_kbps == 0) {
            fw_printf("LAST PACKET NOT RECEIVED!!!\n");
        }
        fw_printf("Statistics:\t\tserver\t(client)\n");
        fw_printf("Duration:\t\t");
        print_number(s->duration_us, TIME_US, TIME_US_UNIT);
        fw_printf("\t(");
        print_number(client_us, TIME_US, TIME_US_UNIT);
        fw_printf(")\n");
        fw_printf("Num packets:\t\t%" PRIu64 "\t(%" PRIu64 ")\n", s->datagrams - s->lost, r->datagrams);
        fw_printf("Num packets out order:\t%" PRIu64 "\n", s->outoforder);
        fw_printf("Num packets lost:\t%" PRIu64 "\n", s->lost);
        fw_printf("Jitter:\t\t\t");
        print_number(s->jitter_us, TIME_US, TIME_US_UNIT);
        fw_printf("\n");
        fw_printf("Rate:\t\t\t");
        print_number(server_kbps, KBPS, KBPS_UNIT);
        fw_printf("\t(");
        print_number(kbps_of(r->datagrams * zs.size, client_us), KBPS, KBPS_UNIT);
        fw_printf(")\n");
    } else {
        fw_printf("-\nUpload completed!\n");
        fw_printf("Duration:\t");
        print_number(client_us, TIME_US, TIME_US_UNIT);
        fw_printf("\n");
        fw_printf("Num packets:\t%" PRIu64 "\n", zs.size ? r->bytes / zs.size : 0);
        fw_printf("Num errors:\t%u (retry or fail)\n", 0u);
        fw_printf("Rate:\t\t");
        print_number(kbps_of(r->bytes, client_us), KBPS, KBPS_UNIT);
        fw_printf("\n");
    }
    session_end();
    fw_console_prompt(); /* the shell is free again */
}

static void download_done(const struct iperf_result *r)
{
    uint64_t us = r->end_us > r->start_us && r->start_us ? r->end_us - r->start_us : 0;
    if (r->start_us == 0) {
        return; /* stopped before a session: "... server stopped" says it */
    }
    if (strcmp(r->status, "ok") != 0 && strcmp(r->status, "aborted") != 0) {
        fw_printf("%s session error.\n", zs.cfg.udp ? "UDP" : "TCP");
        return;
    }
    if (zs.cfg.udp) {
        const struct iperf_server_report *s = &r->received;
        fw_printf("End of session!\n");
        fw_printf(" duration:\t\t");
        print_number(us, TIME_US, TIME_US_UNIT);
        fw_printf("\n");
        fw_printf(" received packets:\t%" PRIu64 "\n", s->datagrams - s->lost);
        fw_printf(" nb packets lost:\t%" PRIu64 "\n", s->lost);
        fw_printf(" nb packets outorder:\t%" PRIu64 "\n", s->outoforder);
        fw_printf(" jitter:\t\t\t");
        print_number(s->jitter_us, TIME_US, TIME_US_UNIT);
        fw_printf("\n");
    } else {
        fw_printf("TCP session ended\n");
        fw_printf(" Duration:\t\t");
        print_number(us, TIME_US, TIME_US_UNIT);
        fw_printf("\n");
    }
    fw_printf(" rate:\t\t\t");
    print_number(kbps_of(r->bytes, us), KBPS, KBPS_UNIT);
    fw_printf("\n");
}

static void on_engine(void *ctx, enum iperf_event event, const struct iperf_result *r)
{
    (void)ctx;
    if (event == IPERF_EVENT_STARTED && !zs.upload) {
        fw_printf(zs.cfg.udp ? "New session started.\n" : "New TCP session started.\n");
    }
    if (event != IPERF_EVENT_FINISHED) {
        return;
    }
    if (zs.upload) {
        upload_done(r);
    } else {
        download_done(r);
        session_end();
    }
}

static bool claim(void)
{
    if (zs.active || !fw_test_claim(NULL, "zperf", "zperf")) {
        return false;
    }
    zs.active = true;
    return true;
}

/* parse_number(): an integer with an optional K (x1000) or M (x1000000) suffix (first letter only) */
static bool parse_number(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9') {
        return false;
    }
    while (*p >= '0' && *p <= '9') {
        v = v * 10u + (uint64_t)(*p++ - '0');
        if (v > 100000000000ull) {
            return false;
        }
    }
    if (*p == 'K' || *p == 'k') {
        v *= 1000u;
    } else if (*p == 'M' || *p == 'm') {
        v *= 1000000u;
    }
    *out = v;
    return true;
}

static void upload(bool udp, int argc, char **argv)
{
    /* argv: <dest ip> <dest port> <duration> <packet size>[K] [<rate>] */
    if (argc < 4 || (udp && argc < 5)) {
        fw_printf("Not enough parameters.\n");
        return;
    }
    uint32_t ip;
    uint32_t port;
    uint32_t secs;
    uint64_t size;
    uint64_t rate_bps = 10000u; /* DEF_RATE_KBPS */
    if (!fw_parse_ipv4(argv[0], &ip)) {
        fw_printf("Invalid IPv4 address %s\n", argv[0]);
        return;
    }
    if (!fw_parse_u32(argv[1], 1, 65535, &port)) {
        fw_printf("Invalid port %s\n", argv[1]);
        return;
    }
    if (!fw_parse_u32(argv[2], 1, FW_IPERF_MAX_TIME_S, &secs) || !parse_number(argv[3], &size) || size == 0 ||
        (udp && !parse_number(argv[4], &rate_bps))) {
        fw_printf("Parse error: %s\n", argv[2]);
        return;
    }
    uint64_t rate_kbps = (rate_bps + 999u) / 1000u;
    fw_printf("Remote port is %s\n", argv[1]);
    fw_printf("Connecting to %s\n", argv[0]);
    if (!claim()) {
        fw_printf("%s upload failed (%d)\n", udp ? "UDP" : "TCP", -16);
        return;
    }
    fw_printf("Duration:\t");
    print_number((uint64_t)secs * 1000000u, TIME_US, TIME_US_UNIT);
    fw_printf("\n");
    fw_printf("Packet size:\t%" PRIu64 " bytes\n", size);
    fw_printf("Rate:\t\t%" PRIu64 " kbps\n", rate_kbps);
    fw_printf("Starting...\n");
    if (size > ZPERF_MAX_PACKET) {
        fw_printf("[%08" PRIu64 "] <wrn> net_zperf: Packet size too large! max size: %u\n",
                  fw_platform_time_us() / 1000u, ZPERF_MAX_PACKET);
        size = ZPERF_MAX_PACKET;
    }
    if (udp) {
        fw_printf("Rate:\t\t");
        print_number(rate_kbps, KBPS, KBPS_UNIT);
        fw_printf("\n");
        uint64_t packet_us = size * 8u * 1000000u / (rate_kbps * 1024u); /* zperf_packet_duration() */
        if (packet_us > 1000u) {
            fw_printf("Packet duration %" PRIu64 " ms\n", packet_us / 1000u);
        } else {
            fw_printf("Packet duration %" PRIu64 " us\n", packet_us);
        }
    }
    memset(&zs.cfg, 0, sizeof zs.cfg);
    zs.upload = true;
    zs.size = (uint32_t)size;
    zs.cfg.role = IPERF_ROLE_CLIENT;
    zs.cfg.udp = udp;
    zs.cfg.peer_ip = ip;
    zs.cfg.port = (uint16_t)port;
    zs.cfg.duration_ms = secs * 1000u;
    zs.cfg.len = (uint32_t)size;
    zs.cfg.bandwidth = udp ? rate_kbps * 1000u : 0;
    zs.cfg.format = 'm';
    zs.engine = udp ? &iperf_udp_client : &iperf_tcp_client;
    fw_console_hold_prompt();
    if (zs.engine->start(&zs.cfg, on_engine, NULL) != IPERF_START_OK) {
        fw_printf("%s upload failed (%d)\n", udp ? "UDP" : "TCP", -12);
        session_end();
        fw_console_prompt();
    }
}

static void download(bool udp, int argc, char **argv)
{
    const char *proto = udp ? "UDP" : "TCP";
    if (argc >= 1 && strcmp(argv[0], "stop") == 0) {
        if (!zs.active || zs.upload || zs.cfg.udp != udp) {
            fw_printf("%s server not running!\n", proto);
            return;
        }
        zs.engine->abort();
        session_end();
        fw_printf("%s server stopped\n", proto);
        return;
    }
    uint32_t port = ZPERF_DEFAULT_PORT;
    if (argc >= 1 && !fw_parse_u32(argv[0], 1, 65535, &port)) {
        fw_printf("Invalid port %s\n", argv[0]);
        return;
    }
    if (zs.active && !zs.upload && zs.cfg.udp == udp) {
        fw_printf("%s server already started!\n", proto);
        return;
    }
    if (!claim()) {
        fw_printf("Failed to start %s server!\n", proto);
        return;
    }
    memset(&zs.cfg, 0, sizeof zs.cfg);
    zs.upload = false;
    zs.cfg.role = IPERF_ROLE_SERVER;
    zs.cfg.udp = udp;
    zs.cfg.port = (uint16_t)port;
    zs.cfg.format = 'm';
    zs.engine = udp ? &iperf_udp_server : &iperf_tcp_server;
    if (zs.engine->start(&zs.cfg, on_engine, NULL) != IPERF_START_OK) {
        session_end();
        fw_printf("Failed to start %s server!\n", proto);
        return;
    }
    fw_printf("%s server started on port %" PRIu32 "\n", proto, port);
}

static void zperf_command(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        fw_printf("Version: 1.1\nConfig: hil-fw-personality ethernet ipv4\n");
        return;
    }
    if (argc >= 3 && (strcmp(argv[1], "udp") == 0 || strcmp(argv[1], "tcp") == 0)) {
        bool udp = argv[1][0] == 'u';
        if (strcmp(argv[2], "upload") == 0) {
            upload(udp, argc - 3, argv + 3);
            return;
        }
        if (strcmp(argv[2], "download") == 0) {
            download(udp, argc - 3, argv + 3);
            return;
        }
    }
    fw_printf("%s: wrong parameter count\n", argc >= 2 ? argv[1] : argv[0]);
}

/* ---- net ping ----------------------------------------------------------------------------------- */

static uint32_t ping_from;

static void net_ping_start(const struct ping_config *cfg)
{
    char t[IP4ADDR_STRLEN_MAX];
    ip_text(cfg->target, t, sizeof t);
    fw_printf("PING %s\n", t);
}

static void net_ping_reply(uint32_t bytes, uint32_t from, uint16_t seq, uint8_t ttl, uint64_t rtt_us)
{
    char src[IP4ADDR_STRLEN_MAX];
    char dst[IP4ADDR_STRLEN_MAX];
    ip_text(from, src, sizeof src);
    ip_text(ping_from, dst, sizeof dst);
    fw_printf("%" PRIu32 " bytes from %s to %s: icmp_seq=%u ttl=%u time=%.2f ms\n", bytes - 8u, src, dst, (unsigned)seq,
              (unsigned)ttl, (double)rtt_us / 1000.0);
}

static void net_ping_finish(const struct ping_summary *s)
{
    if (!s->last_answered) {
        fw_printf("Ping timeout\n");
    }
    fw_console_prompt();
}

static const struct ping_printer net_ping_printer = {net_ping_start, net_ping_reply, NULL, net_ping_finish};

static void net_command(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "ping") != 0) {
        fw_printf("%s: wrong parameter count\n", argv[0]);
        return;
    }
    struct ping_config cfg = {.count = 3, .interval_ms = 1000, .size = 4, .timeout_ms = ZPERF_PING_WAIT_MS};
    const char *host = NULL;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "-c") == 0 || strcmp(o, "-i") == 0 || strcmp(o, "-s") == 0) {
            uint32_t v;
            if (i + 1 >= argc || !fw_parse_u32(argv[i + 1], o[1] == 's' ? 0 : 1, 60000, &v)) {
                fw_printf("Parse error: %s\n", i + 1 < argc ? argv[i + 1] : o);
                return;
            }
            i++;
            if (o[1] == 'c') {
                cfg.count = v > FW_PING_MAX_COUNT ? FW_PING_MAX_COUNT : v;
            } else if (o[1] == 'i') {
                cfg.interval_ms = v;
            } else {
                cfg.size = v > FW_PING_MAX_SIZE ? FW_PING_MAX_SIZE : v;
            }
        } else if (o[0] == '-') {
            fw_printf("Unrecognized argument: %s\n", o);
            return;
        } else {
            host = o;
        }
    }
    if (host == NULL) {
        fw_printf("Target host missing\n");
        return;
    }
    if (!fw_parse_ipv4(host, &cfg.target)) {
        fw_printf("Invalid IP address\n");
        return;
    }
    ping_from = lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(fw_app_netif())));
    char err[64];
    fw_console_hold_prompt(); /* net ping blocks the shell until its last reply or timeout */
    if (!ping_start(&cfg, &net_ping_printer, err, sizeof err)) {
        fw_printf("Failed to send ping, err: %d\n", -16);
        fw_console_prompt();
    }
}

/* ---- The shell ------------------------------------------------------------------------------------ */

static void zperf_poll(uint64_t now)
{
    iperf_engines_poll(now);
}

static uint64_t zperf_deadline(void)
{
    return iperf_engines_next_deadline_us();
}

static void help_command(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fw_printf("Please press the <Tab> button to see all available commands.\n"
              "You can also use the <Tab> button to prompt or auto-complete all commands or its subcommands.\n"
              "You can try to call commands with <-h> or <--help> parameter for more information.\n\n"
              "Available commands:\n  help   :Prints the help message.\n  net    :Networking commands\n"
              "  zperf  :Zperf commands\n");
}

static void not_found(const char *name)
{
    fw_printf("\033[1;31m%s: command not found\033[0m\n", name);
}

static const struct fw_cmd zperf_cmds[] = {
    {"help", "", "Prints the help message.", help_command},
    {"net", "", "Networking commands", net_command},
    {"zperf", "", "Zperf commands", zperf_command},
};

static const struct fw_module zperf_module = {zperf_cmds, sizeof zperf_cmds / sizeof zperf_cmds[0], zperf_poll, zperf_deadline};
static const struct fw_module *const zperf_modules[] = {&zperf_module, &ping_engine};
static const struct fw_console_style zephyr_shell = {"uart:~$ ", true, not_found};

static void banner(void)
{
    char ip[IP4ADDR_STRLEN_MAX];
    ip4addr_ntoa_r(netif_ip4_addr(fw_app_netif()), ip, sizeof ip);
    fw_printf("*** Booting Zephyr OS build hil-fw-zperf-personality ***\n");
    fw_printf("[00:00:00.010,000] <inf> net_config: Initializing network\n");
    fw_printf("[00:00:00.010,000] <inf> net_config: IPv4 address: %s\n", ip);
}

const struct fw_personality personality_zephyr_zperf = {"zephyr-zperf", zperf_modules, 2, &zephyr_shell, banner};
