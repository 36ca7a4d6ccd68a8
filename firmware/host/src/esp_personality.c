/*
 * esp_personality.c - the console of ESP-IDF's iperf example, in two versions (test equipment;
 * see personality.h). Formats, from the public sources:
 *   v4   ESP-IDF v4.4: examples/common_components/iperf/iperf.c (report header "\n%16s %s\n", lines
 *        "%4d-%4d sec       %.2f Mbits/sec" in 10^6 bits, the summary 0-<time> as the mean of the
 *        interval values only when the run reached its time; log lines "Socket created",
 *        "Socket bound, port %d" (the port in network byte order), "accept: %s,%d\n",
 *        "Successfully connected", "Socket created, sending to %d:%d", "... is closed.",
 *        "iperf exit", "iperf is running", "wait current iperf to stop ..."), and
 *        examples/wifi/iperf/main/cmd_wifi.c (options -c -s -u -V -p -l -i -t -b -a; -b in Mbit/s;
 *        defaults port 5001, interval 3, time 30; "mode=%s-%s sip=...:%d, dip=...:%d, interval=%d,
 *        time=%d"); no ping command.
 *   iperf-cmd  ESP-IDF v5.3 with espressif/iperf-cmd 0.1.x: iperf/iperf.c (header
 *        "\nInterval       Bandwidth\n", lines "%2d.0-%2d.0 sec  %.2f %cbits/sec" in 2^20 bits),
 *        iperf_cmd.c (--abort only, "iperf is already running.", "DONE.IPERF_STOP,OK."), and the
 *        example's ping (echo_example_main.c's formats).
 * Both: `free` ("%u\n") and `heap` ("min heap size: %u\n", cmd_system.c) report lwIP's heap;
 * `version` prints "IDF Version:" with a version naming this personality; argtable's errors
 * ("iperf: invalid option \"-x\""); the REPL's "Unrecognized command"; log lines
 * "X (ms) tag: text" in ESP-IDF's colours; prompt "iperf> " after each command, input echoed.
 */
#include "personality.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fw_config.h"
#include "fw_console.h"
#include "fw_module.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "iperf_cmd.h"
#include "iperf_engine.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/stats.h"
#include "ping.h"

#define ESP_DEFAULT_TIME_S 30u
#define ESP_DEFAULT_INTERVAL_S 3u
#define ESP_TCP_LEN 16384u
#define ESP_UDP_LEN 1470u
#define ESP_UDP_RX_TIMEOUT_US 10000000u /* IPERF_SOCKET_RX_TIMEOUT: a UDP server with no datagram */

enum esp_version { ESP_V4, ESP_IPERF_CMD };

static enum esp_version version;

/* ---- ESP_LOGx: "X (ms) tag: text" in the log colours (CONFIG_LOG_COLORS=y) ------------------ */

void esp_log(char level, const char *tag, const char *fmt, ...)
{
    char text[FW_OUT_LINE_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const char *colour = level == 'E' ? "\033[0;31m" : level == 'W' ? "\033[0;33m" : "\033[0;32m";
    fw_printf("%s%c (%" PRIu64 ") %s: %s\033[0m\r\n", colour, level, fw_platform_time_us() / 1000u, tag, text);
}

static const char *iperf_tag(void)
{
    return "iperf";
}

static const char *cmd_tag(void)
{
    return version == ESP_V4 ? "cmd_wifi" : "IPERF";
}

static void ip_text(uint32_t host_order, char *buf, size_t size)
{
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(host_order));
    ip4addr_ntoa_r(&a, buf, (int)size);
}

/* ---- One iperf run: the engine, and the report task's timing ---------------------------------- */

static struct {
    bool running; /* from the accepted command to "iperf exit" */
    struct iperf_config cfg;
    const struct iperf_engine *engine;
    bool engine_done;
    bool started; /* traffic began: the report runs */
    bool muted;   /* the run is being ended by the report or an abort: the engine's end says nothing */
    uint32_t time_s;
    uint32_t interval_s;
    uint64_t next_tick_us;
    uint32_t cur;
    uint64_t mark_bytes;
    uint64_t final_bytes;
    double average;
    uint32_t k;
    uint64_t udp_rx_deadline_us;
} run;

static uint64_t run_bytes(void)
{
    return run.engine_done ? run.final_bytes : run.engine->progress()->bytes;
}

static void print_header(void)
{
    if (version == ESP_V4) {
        fw_printf("\r\n%16s %s\r\n", "Interval", "Bandwidth");
    } else {
        fw_printf("\r\nInterval       Bandwidth\r\n");
    }
}

static void print_line(uint32_t from, uint32_t to, double mbits)
{
    if (version == ESP_V4) {
        fw_printf("%4" PRIu32 "-%4" PRIu32 " sec       %.2f Mbits/sec\r\n", from, to, mbits);
    } else {
        fw_printf("%2" PRIu32 ".0-%2" PRIu32 ".0 sec  %.2f Mbits/sec\r\n", from, to, mbits);
    }
}

static const char *closed_text(void)
{
    bool server = run.cfg.role == IPERF_ROLE_SERVER;
    if (run.cfg.udp) {
        return server ? "Udp socket server is closed." : "UDP Socket client is closed";
    }
    return server ? "TCP Socket server is closed." : "TCP Socket client is closed.";
}

/* The traffic task's end: its socket closed, then "iperf exit". */
static void run_exit(void)
{
    if (!run.engine_done) {
        run.muted = true;
        run.engine->abort();
    }
    esp_log('I', iperf_tag(), "%s", closed_text());
    esp_log('I', iperf_tag(), "iperf exit");
    run.running = false;
    fw_test_release("iperf");
}

static void report_tick(uint64_t now)
{
    uint64_t bytes = run_bytes();
    /* bytes x 8 / interval in Mbit: 10^6 bits (v4.4), 2^20 bits (iperf-cmd 0.1.x) */
    double mega = version == ESP_V4 ? 1e6 : 1048576.0;
    double mbits = (double)(bytes - run.mark_bytes) * 8.0 / mega / run.interval_s;
    run.mark_bytes = bytes;
    print_line(run.cur, run.cur + run.interval_s, mbits);
    run.cur += run.interval_s;
    run.average = run.average * (run.k - 1) / run.k + mbits / run.k;
    run.k++;
    run.next_tick_us = now + (uint64_t)run.interval_s * 1000000u;
    if (run.cur >= run.time_s) {
        print_line(0, run.time_s, run.average);
        run.started = false;
        run_exit();
    }
}

static void on_engine(void *ctx, enum iperf_event event, const struct iperf_result *r)
{
    (void)ctx;
    char peer[IP4ADDR_STRLEN_MAX];
    ip4addr_ntoa_r(ip_2_ip4(&r->peer), peer, sizeof peer);
    bool server = run.cfg.role == IPERF_ROLE_SERVER;
    switch (event) {
    case IPERF_EVENT_LISTENING:
        esp_log('I', iperf_tag(), "Socket created");
        if (run.cfg.udp) {
            /* ESP_LOGI(TAG, "Socket bound, port %d", listen_addr4.sin_port): the network-order value */
            esp_log('I', iperf_tag(), "Socket bound, port %u", (unsigned)lwip_htons(run.cfg.port));
            run.udp_rx_deadline_us = fw_platform_time_us() + ESP_UDP_RX_TIMEOUT_US;
        }
        break;
    case IPERF_EVENT_CONNECTING:
        break;
    case IPERF_EVENT_STARTED:
        if (server && !run.cfg.udp) {
            if (version == ESP_V4) {
                esp_log('I', iperf_tag(), "accept: %s,%u\r\n", peer, (unsigned)r->peer_port); /* "%s,%d\n" */
            } else {
                esp_log('I', iperf_tag(), "accept: %s,%u", peer, (unsigned)r->peer_port);
            }
        } else if (!server && !run.cfg.udp) {
            esp_log('I', iperf_tag(), "Successfully connected");
        } else if (!server) {
            /* "Socket created, sending to %d:%d": the address's network-order bytes as an int */
            esp_log('I', iperf_tag(), "Socket created, sending to %" PRId32 ":%u",
                    (int32_t)lwip_htonl(run.cfg.peer_ip), (unsigned)run.cfg.port);
        }
        run.started = true;
        run.cur = 0;
        run.k = 1;
        run.average = 0.0;
        run.mark_bytes = 0;
        run.next_tick_us = r->start_us + (uint64_t)run.interval_s * 1000000u;
        print_header();
        break;
    case IPERF_EVENT_FINISHED:
        run.engine_done = true;
        run.final_bytes = r->bytes;
        if (run.muted) {
            break;
        }
        if (r->start_us == 0 && !server) { /* the client never sent: its connect failed */
            esp_log('E', iperf_tag(), "iperf_run_tcp_client(%d): Socket unable to connect: errno %d",
                    version == ESP_V4 ? 310 : 398, 104);
            run_exit();
        } else if (!run.started) {
            run_exit(); /* ended before its report: no summary */
        }
        break;
    }
}

static void esp_iperf_poll(uint64_t now)
{
    iperf_engines_poll(now);
    if (!run.running) {
        return;
    }
    if (run.started && now >= run.next_tick_us) {
        report_tick(now);
    } else if (!run.started && run.cfg.udp && run.cfg.role == IPERF_ROLE_SERVER && !run.engine_done &&
               now >= run.udp_rx_deadline_us) {
        esp_log('W', iperf_tag(), "udp server recv error, error code: 11, reason: No more processes");
        run_exit();
    }
}

static uint64_t esp_iperf_deadline(void)
{
    uint64_t next = iperf_engines_next_deadline_us();
    if (run.running && run.started) {
        next = iperf_earlier(next, run.next_tick_us);
    } else if (run.running && run.cfg.udp && run.cfg.role == IPERF_ROLE_SERVER) {
        next = iperf_earlier(next, run.udp_rx_deadline_us);
    }
    return next;
}

/* ---- The `iperf` command, as argtable parses it ------------------------------------------------ */

struct esp_args {
    bool server, udp, abort;
    const char *client;
    uint32_t port, len, interval, time, bandwidth;
    bool have_len, have_interval, have_time, have_bandwidth;
};

/* argtable3's messages, printed as "<command>: <message>" */
static bool arg_fail(const char *fmt, const char *what)
{
    char text[96];
    snprintf(text, sizeof text, fmt, what);
    fw_printf("iperf: %s\r\n", text);
    return false;
}

static bool take_int(int argc, char **argv, int *i, const char *opt, const char *meta, uint32_t max, uint32_t *out)
{
    if (*i + 1 >= argc) {
        return arg_fail("option \"%s\" requires an argument", opt);
    }
    const char *v = argv[++*i];
    if (!fw_parse_u32(v, 0, max, out)) {
        fw_printf("iperf: invalid argument \"%s\" to option %s %s\r\n", v, opt, meta);
        return false;
    }
    return true;
}

static bool esp_parse(int argc, char **argv, struct esp_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "-s") == 0 || strcmp(o, "--server") == 0) {
            a->server = true;
        } else if (strcmp(o, "-u") == 0 || strcmp(o, "--udp") == 0) {
            a->udp = true;
        } else if (strcmp(o, "--abort") == 0 || (version == ESP_V4 && strcmp(o, "-a") == 0)) {
            a->abort = true;
        } else if (strcmp(o, "-c") == 0 || strcmp(o, "--client") == 0) {
            if (i + 1 >= argc) {
                return arg_fail("option \"%s\" requires an argument", o);
            }
            a->client = argv[++i];
        } else if (strcmp(o, "-p") == 0) {
            if (!take_int(argc, argv, &i, o, "<port>", 65535, &a->port)) {
                return false;
            }
        } else if (strcmp(o, "-l") == 0) {
            if (!take_int(argc, argv, &i, o, "<length>", 65536, &a->len)) {
                return false;
            }
            a->have_len = true;
        } else if (strcmp(o, "-i") == 0) {
            if (!take_int(argc, argv, &i, o, "<interval>", 3600, &a->interval)) {
                return false;
            }
            a->have_interval = true;
        } else if (strcmp(o, "-t") == 0) {
            if (!take_int(argc, argv, &i, o, "<time>", FW_IPERF_MAX_TIME_S, &a->time)) {
                return false;
            }
            a->have_time = true;
        } else if (strcmp(o, "-b") == 0) {
            if (!take_int(argc, argv, &i, o, "<bandwidth>", 100000, &a->bandwidth)) {
                return false;
            }
            a->have_bandwidth = true;
        } else if (o[0] == '-') {
            return arg_fail("invalid option \"%s\"", o);
        } else {
            return arg_fail("unexpected argument \"%s\"", o);
        }
    }
    return true;
}

static void abort_run(void)
{
    if (run.running) {
        esp_log('I', iperf_tag(), "wait current iperf to stop ...");
        run.started = false;
        run_exit();
    }
    if (version == ESP_IPERF_CMD) {
        esp_log('I', iperf_tag(), "DONE.IPERF_STOP,OK.");
    }
}

static void mode_line(const struct esp_args *a, const char *dip)
{
    char sip[IP4ADDR_STRLEN_MAX];
    ip4addr_ntoa_r(netif_ip4_addr(fw_app_netif()), sip, sizeof sip);
    unsigned port = a->port ? (unsigned)a->port : FW_IPERF_DEFAULT_PORT;
    const char *mode_proto = a->udp ? "udp" : "tcp";
    const char *mode_role = a->server ? "server" : "client";
    if (version == ESP_V4) {
        esp_log('I', cmd_tag(), "mode=%s-%s sip=%s:%u, dip=%s:%u, interval=%" PRIu32 ", time=%" PRIu32, mode_proto,
                mode_role, sip, a->server ? port : FW_IPERF_DEFAULT_PORT, dip, a->server ? FW_IPERF_DEFAULT_PORT : port,
                run.interval_s, run.time_s);
    } else {
        esp_log('I', cmd_tag(), "mode=%s-%s sip=localhost:%u, dip=%s:%u, interval=%" PRIu32 ", time=%" PRIu32, mode_proto,
                mode_role, a->server ? port : FW_IPERF_DEFAULT_PORT, dip, a->server ? FW_IPERF_DEFAULT_PORT : port,
                run.interval_s, run.time_s);
    }
}

static void iperf_command(int argc, char **argv)
{
    struct esp_args a;
    if (!esp_parse(argc, argv, &a)) {
        return;
    }
    if (a.abort) {
        abort_run();
        return;
    }
    if ((a.client == NULL) == !a.server) {
        esp_log('E', cmd_tag(), "should specific client/server mode");
        return;
    }
    uint32_t peer = 0;
    if (a.client != NULL && !fw_parse_ipv4(a.client, &peer)) {
        peer = 0; /* esp_ip4addr_aton gives 0.0.0.0: the connect fails */
    }
    if (run.running && version == ESP_IPERF_CMD) {
        esp_log('E', cmd_tag(), "iperf is already running.");
        return;
    }
    uint32_t interval = a.have_interval && a.interval > 0 ? a.interval : ESP_DEFAULT_INTERVAL_S;
    uint32_t time_s = a.have_time ? a.time : ESP_DEFAULT_TIME_S;
    if (time_s <= interval) {
        time_s = interval;
    }
    char dip[IP4ADDR_STRLEN_MAX] = "0.0.0.0";
    if (a.client != NULL) {
        ip_text(peer, dip, sizeof dip);
    }
    if (run.running) { /* v4: the command prints its mode line, the engine refuses */
        uint32_t keep_i = run.interval_s;
        uint32_t keep_t = run.time_s;
        run.interval_s = interval;
        run.time_s = time_s;
        mode_line(&a, dip);
        run.interval_s = keep_i;
        run.time_s = keep_t;
        esp_log('W', iperf_tag(), "iperf is running");
        return;
    }
    memset(&run, 0, sizeof run);
    run.interval_s = interval;
    run.time_s = time_s;
    mode_line(&a, dip);
    struct iperf_config *c = &run.cfg;
    c->role = a.server ? IPERF_ROLE_SERVER : IPERF_ROLE_CLIENT;
    c->udp = a.udp;
    c->peer_ip = peer;
    c->port = (uint16_t)(a.port ? a.port : FW_IPERF_DEFAULT_PORT);
    c->duration_ms = a.server ? 0 : time_s * 1000u; /* a server runs until its report's time */
    c->len = a.have_len && a.len ? a.len : (a.udp ? ESP_UDP_LEN : ESP_TCP_LEN);
    if (c->udp && c->len > FW_IPERF_UDP_MAX_LEN) {
        c->len = FW_IPERF_UDP_MAX_LEN;
    }
    c->bandwidth = a.have_bandwidth && a.bandwidth > 0 ? (uint64_t)a.bandwidth * 1000000u : 0;
    c->format = 'm';
    c->silent_server = a.server && a.udp; /* Espressif's UDP server answers no FIN */
    run.engine = a.udp ? (a.server ? &iperf_udp_server : &iperf_udp_client) : (a.server ? &iperf_tcp_server : &iperf_tcp_client);
    if (!fw_test_claim(NULL, "iperf", "iperf")) {
        esp_log('E', iperf_tag(), "create task iperf_traffic failed");
        return;
    }
    run.running = true;
    if (run.engine->start(c, on_engine, NULL) != IPERF_START_OK) {
        run.engine_done = true;
        esp_log('E', iperf_tag(), "%s", a.server ? "Socket unable to bind: errno 112" : "Unable to create socket: errno 23");
        run_exit();
    }
}

/* ---- ping (iperf-cmd era: the example's ping, echo_example_main.c's formats) ------------------ */

static void esp_ping_reply(uint32_t bytes, uint32_t from, uint16_t seq, uint8_t ttl, uint64_t rtt_us)
{
    char a[IP4ADDR_STRLEN_MAX];
    ip_text(from, a, sizeof a);
    fw_printf("%" PRIu32 " bytes from %s icmp_seq=%u ttl=%u time=%" PRIu32 " ms\r\n", (uint32_t)(bytes - 8u), a,
              (unsigned)seq, (unsigned)ttl, (uint32_t)(rtt_us / 1000u));
}

static void esp_ping_timeout(uint32_t target, uint16_t seq)
{
    char a[IP4ADDR_STRLEN_MAX];
    ip_text(target, a, sizeof a);
    fw_printf("From %s icmp_seq=%u timeout\r\n", a, (unsigned)seq);
}

static void esp_ping_finish(const struct ping_summary *s)
{
    char a[IP4ADDR_STRLEN_MAX];
    ip_text(s->target, a, sizeof a);
    uint32_t loss = s->sent ? (uint32_t)((1.0 - (double)s->received / s->sent) * 100.0) : 0;
    fw_printf("\r\n--- %s ping statistics ---\r\n", a);
    fw_printf("%" PRIu32 " packets transmitted, %" PRIu32 " received, %" PRIu32 "%% packet loss, time %" PRIu32 "ms\r\n",
              s->sent, s->received, loss, (uint32_t)(s->elapsed_us / 1000u));
}

static const struct ping_printer esp_ping_printer = {NULL, esp_ping_reply, esp_ping_timeout, esp_ping_finish};

static bool take_seconds(int argc, char **argv, int *i, uint32_t min_ms, uint32_t *out_ms)
{
    if (*i + 1 >= argc) {
        fw_printf("ping: option \"%s\" requires an argument\r\n", argv[*i]);
        return false;
    }
    const char *v = argv[++*i];
    if (!fw_parse_seconds_ms(v, min_ms, 60000, out_ms)) {
        fw_printf("ping: invalid argument \"%s\" to option %s <t>\r\n", v, argv[*i - 1]);
        return false;
    }
    return true;
}

static void esp_ping_command(int argc, char **argv)
{
    struct ping_config cfg = {.count = 5, .interval_ms = 1000, .size = 64, .timeout_ms = 1000};
    const char *host = NULL;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        bool ok = true;
        if (strcmp(o, "-c") == 0 || strcmp(o, "-s") == 0) {
            if (i + 1 >= argc) {
                fw_printf("ping: option \"%s\" requires an argument\r\n", o);
                return;
            }
            uint32_t *dst = o[1] == 'c' ? &cfg.count : &cfg.size;
            uint32_t max = o[1] == 'c' ? FW_PING_MAX_COUNT : FW_PING_MAX_SIZE;
            ok = fw_parse_u32(argv[++i], 1, max, dst);
            if (!ok) {
                fw_printf("ping: invalid argument \"%s\" to option %s <n>\r\n", argv[i], o);
            }
        } else if (strcmp(o, "-i") == 0) {
            ok = take_seconds(argc, argv, &i, 0, &cfg.interval_ms);
        } else if (strcmp(o, "-W") == 0) {
            ok = take_seconds(argc, argv, &i, 1, &cfg.timeout_ms);
        } else if (o[0] == '-') {
            fw_printf("ping: invalid option \"%s\"\r\n", o);
            return;
        } else if (host == NULL) {
            host = o;
        } else {
            fw_printf("ping: unexpected argument \"%s\"\r\n", o);
            return;
        }
        if (!ok) {
            return;
        }
    }
    if (host == NULL) {
        fw_printf("ping: missing option <host>\r\n");
        return;
    }
    if (!fw_parse_ipv4(host, &cfg.target)) {
        fw_printf("ping: unknown host %s\r\n", host);
        fw_printf("Command returned non-zero error code: 0x1 (ERROR)\r\n");
        return;
    }
    char err[64];
    if (!ping_start(&cfg, &esp_ping_printer, err, sizeof err)) {
        fw_printf("ping: %s\r\n", err);
    }
}

/* ---- system commands ------------------------------------------------------------------------------ */

static uint32_t heap_free(void)
{
#if MEM_STATS
    return (uint32_t)(lwip_stats.mem.avail - lwip_stats.mem.used);
#else
    return 0;
#endif
}

static void free_command(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fw_printf("%" PRIu32 "\r\n", heap_free());
}

static void heap_command(int argc, char **argv)
{
    (void)argc;
    (void)argv;
#if MEM_STATS
    fw_printf("min heap size: %" PRIu32 "\r\n", (uint32_t)(lwip_stats.mem.avail - lwip_stats.mem.max));
#else
    fw_printf("min heap size: %" PRIu32 "\r\n", heap_free());
#endif
}

static void version_command(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fw_printf("IDF Version:%s\r\n", version == ESP_V4 ? "v4.4-hil-personality" : "v5.3-hil-personality");
    fw_printf("Chip info:\r\n\tmodel:host (hil-fw console personality)\r\n\tcores:1\r\n");
}

static void help_command(int argc, char **argv);

/* ---- Tables ------------------------------------------------------------------------------------------ */

static const struct fw_cmd v4_cmds[] = {
    {"help", "", "Print the list of registered commands", help_command},
    {"free", "", "Get the current size of free heap memory", free_command},
    {"heap", "", "Get minimum size of free heap memory that was available during program execution", heap_command},
    {"version", "", "Get version of chip and SDK", version_command},
    {"iperf", "", "iperf command", iperf_command},
};

static const struct fw_cmd cmd_cmds[] = {
    {"help", "", "Print the list of registered commands", help_command},
    {"free", "", "Get the current size of free heap memory", free_command},
    {"heap", "", "Get minimum size of free heap memory that was available during program execution", heap_command},
    {"version", "", "Get version of chip and SDK", version_command},
    {"iperf", "", "iperf command to measure network performance, through TCP or UDP connections.", iperf_command},
    {"ping", "", "send ICMP ECHO_REQUEST to network hosts", esp_ping_command},
};

/* esp_console's help: "<name>  <argtable syntax>", the help text indented, the glossary (one
 * line per fw_printf: a console write holds FW_OUT_LINE_MAX bytes). */
static const char *const v4_iperf_help[] = {
    "iperf  [-suVa] [-c <ip>] [-p <port>] [-l <length>] [-i <interval>] [-t <time>] [-b <bandwidth>]",
    "  iperf command",
    "  -c, --client=<ip>  run in client mode, connecting to <host>",
    "  -s, --server  run in server mode",
    "     -u, --udp  use UDP rather than TCP",
    "  -V, --ipv6_domain  use IPV6 address rather than IPV4",
    "  -p, --port=<port>  server port to listen on/connect to",
    "  -l, --len=<length>  Set read/write buffer size",
    "  -i, --interval=<interval>  seconds between periodic bandwidth reports",
    "  -t, --time=<time>  time in seconds to transmit for (default 10 secs)",
    "  -b, --bandwidth=<bandwidth>  bandwidth to send at in Mbits/sec",
    "   -a, --abort  abort running iperf",
    "",
};

static const char *const cmd_iperf_help[] = {
    ("iperf  [-suV] [-c <host>] [-p <port>] [-l <length>] [-i <interval>] [-t <time>] [-b <bandwidth>] "
     "[-f <format>] [--abort]"),
    "  iperf command to measure network performance, through TCP or UDP connections.",
    "  -c, --client=<host>  run in client mode, connecting to <host>",
    "  -s, --server  run in server mode",
    "     -u, --udp  use UDP rather than TCP",
    "  -p, --port=<port>  server port to listen on/connect to",
    "  -l, --len=<length>  length of buffer in bytes to write(Defaults: TCP=16384, IPv4 UDP=1470, IPv6 UDP=1450)",
    "  -i, --interval=<interval>  seconds between periodic bandwidth reports",
    "  -t, --time=<time>  time in seconds to transmit for (default 10 secs)",
    "  -b, --bandwidth=<bandwidth>  bandwidth to send at in Mbits/sec",
    "  -f, --format=<format>  'k' = Kbits/sec 'm' = Mbits/sec",
    "      --abort  abort running iperf",
    "",
};

static const char *const ping_help[] = {
    "ping  [-W <t>] [-i <t>] [-s <n>] [-c <n>] [-Q <n>] [-T <n>] <host>",
    "  send ICMP ECHO_REQUEST to network hosts",
    "  -W, --timeout=<t>  Time to wait for a response, in seconds",
    "  -i, --interval=<t>  Wait interval seconds between sending each packet",
    "  -s, --size=<n>  Specify the number of data bytes to be sent",
    "  -c, --count=<n>  Stop after sending count packets",
    "        <host>  Host address",
    "",
};

static void print_lines(const char *const *lines, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fw_printf("%s\r\n", lines[i]);
    }
}

static void help_command(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    size_t n;
    const struct fw_cmd *cmds = fw_console_commands(&n);
    for (size_t i = 0; i < n; i++) {
        const char *name = cmds[i].name;
        if (strcmp(name, "iperf") == 0 && version == ESP_V4) {
            print_lines(v4_iperf_help, sizeof v4_iperf_help / sizeof v4_iperf_help[0]);
        } else if (strcmp(name, "iperf") == 0) {
            print_lines(cmd_iperf_help, sizeof cmd_iperf_help / sizeof cmd_iperf_help[0]);
        } else if (strcmp(name, "ping") == 0) {
            print_lines(ping_help, sizeof ping_help / sizeof ping_help[0]);
        } else {
            fw_printf("%s \r\n  %s\r\n\r\n", name, cmds[i].help);
        }
    }
}

static void unknown_command(const char *name)
{
    (void)name;
    fw_printf("Unrecognized command\r\n");
}

static const struct fw_module v4_module = {v4_cmds, sizeof v4_cmds / sizeof v4_cmds[0], esp_iperf_poll, esp_iperf_deadline};
static const struct fw_module cmd_module = {cmd_cmds, sizeof cmd_cmds / sizeof cmd_cmds[0], esp_iperf_poll, esp_iperf_deadline};
static const struct fw_module *const v4_modules[] = {&v4_module};
static const struct fw_module *const cmd_modules[] = {&cmd_module, &ping_engine};

static const struct fw_console_style esp_console = {"iperf> ", true, unknown_command};

/* iperf_example_main.c's banner (v4.4 l.50-58, unchanged in v5.3's example), then the REPL's greeting */
static void banner(void)
{
    fw_printf("\r\n ==================================================\r\n");
    fw_printf(" |       Steps to test WiFi throughput            |\r\n");
    fw_printf(" |                                                |\r\n");
    fw_printf(" |  1. Print 'help' to gain overview of commands  |\r\n");
    fw_printf(" |  2. Configure device to station or soft-AP     |\r\n");
    fw_printf(" |  3. Setup WiFi connection                      |\r\n");
    fw_printf(" |  4. Run iperf to test UDP/TCP RX/TX throughput |\r\n");
    fw_printf(" |                                                |\r\n");
    fw_printf(" =================================================\r\n\r\n");
    fw_printf("\r\nType 'help' to get the list of commands.\r\n"
              "Use UP/DOWN arrows to navigate through command history.\r\n"
              "Press TAB when typing command name to auto-complete.\r\n");
}

static void banner_v4(void)
{
    version = ESP_V4;
    banner();
}

static void banner_cmd(void)
{
    version = ESP_IPERF_CMD;
    banner();
}

const struct fw_personality personality_espressif_v4 = {"espressif-v4", v4_modules, 1, &esp_console, banner_v4};
const struct fw_personality personality_espressif_iperf_cmd = {"espressif-iperf-cmd", cmd_modules, 2, &esp_console,
                                                               banner_cmd};
