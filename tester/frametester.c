/*
 * frametester: the bench's RFC 2544 frame generator and receiver (one file, two roles, as
 * Zephyr's zperf keeps one engine per role). Frames are IPv4/UDP as RFC 2544's appendix C, of an
 * exact size on the wire, numbered and time-stamped, sent from a raw AF_PACKET socket that
 * bypasses the interface's qdisc: the spacing is this program's, not the bench shaper's.
 *
 *   frametester send IF DST_MAC SRC_IP DST_IP FRAME_BYTES RATE_FPS:COUNT[,RATE_FPS:COUNT...]
 *                    [--stream N] [--port P] [--pause-ms MS] [--burst-repeat K]
 *                    [--line-mbps M] [--slow-ns NS] [--cpu N]
 *       Sends each phase's COUNT frames evenly spaced at RATE_FPS (busy-waiting on
 *       CLOCK_MONOTONIC), never closer to the one before than the line-rate gap of an M Mbit/s
 *       Ethernet (default 100: preamble, frame and inter-frame gap; 0: no such floor). A frame
 *       more than a gap late (the host took the CPU) is sent at once and the schedule moves on
 *       from it (a "resync"): a stall leaves a gap in the stream, never a burst that catches up,
 *       and the sender falls short of its rate by the stall (it says so). --slow-ns
 *       spends NS more per frame: a deliberately slowed generator, for the tester's own check.
 *       --cpu N (both roles) runs the role on core N only: the sender's busy wait on one core,
 *       the receiver (and the rest of the host's work) on another. The sender runs at nice -20
 *       where the host allows it (it says so: "prioritized"). FRAME_BYTES is
 *       RFC 2544's frame size with the FCS (64..1518): FRAME_BYTES - 4 bytes leave the socket.
 *       --burst-repeat K sends the phases K times, --pause-ms apart (back-to-back trials).
 *       Prints one JSON object: frames sent, the phases' start times, the achieved rate and the
 *       gaps between consecutive frames as they left (median, p5, p95, max, share clumped:
 *       under half the even gap).
 *
 *   frametester recv IF STREAM EXPECT [--port P] [--linger-ms MS] [--cpu N]
 *       Counts the stream's frames arriving on IF until a line "stop" (or EOF) on stdin, then
 *       LINGER more milliseconds. Prints "ready" once listening, then one JSON object: frames
 *       received, duplicated, out of order, the missing sequence numbers as runs, the one-way
 *       latency (kernel receive time - send time, one host clock) as percentiles, and the
 *       longest gap between arrivals with the frames around it (RFC 6201's reset time).
 *
 *   frametester tap IF STREAM RATE_FPS:COUNT[,RATE_FPS:COUNT...] [--burst-repeat K] [--port P]
 *                   [--linger-ms MS] [--cpu N]
 *       The capture at the device's input: on the device's port (its side of the link), the
 *       stream's frames as the kernel received them (a packet socket whose filter keeps the
 *       stream's first 64 bytes and nothing else, into a TPACKET_V3 ring). Given the sender's phases (and repeats), it
 *       knows each frame's even gap from its sequence number and prints, like the sender, the
 *       gaps between consecutive frames at the port (median, p5, p95, max, clumped: under half
 *       the even gap), how many of the frames reached the port at all, and how many the
 *       capture's own socket dropped (it fell behind: then the missing ones may be its own).
 *       Stops as recv does.
 *
 * Exit codes: 0 done, 2 usage, 1 a system call failed (the message names it).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x52464332u /* "RFC2" */
#define MIN_FRAME 64
#define MAX_FRAME 1518
#define FCS 4
#define HDRS (14 + 20 + 8) /* Ethernet, IPv4, UDP */
#define DEFAULT_PORT 7     /* discard */
#define MAX_PHASES 16
/* histograms of 100-ns buckets up to 50 ms; beyond it counts in the last bucket */
#define HIST_NS 100
#define HIST_BUCKETS 500000
#define MAX_RUNS_LISTED 200
#define RX_BATCH 64

#define SENDER_NICE (-20) /* the sender's scheduling priority, where the host allows it */

static uint32_t hist[HIST_BUCKETS];

static uint64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "frametester: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void usage(const char *why)
{
    fprintf(stderr, "frametester: %s\n"
                    "usage: frametester send IF DST_MAC SRC_IP DST_IP FRAME_BYTES RATE:COUNT[,RATE:COUNT...] "
                    "[--stream N] [--port P] [--burst-repeat K] [--pause-ms MS] [--line-mbps M] [--slow-ns NS] [--cpu N]\n"
                    "       frametester recv IF STREAM EXPECT [--port P] [--linger-ms MS] [--cpu N]\n"
                    "       frametester tap IF STREAM RATE:COUNT[,RATE:COUNT...] [--burst-repeat K] [--port P] "
                    "[--linger-ms MS] [--cpu N]\n",
            why);
    exit(2);
}

static unsigned long number(const char *text, const char *what, unsigned long lo, unsigned long hi)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be a whole number in %lu..%lu, not '%s'", what, lo, hi, text);
        usage(msg);
    }
    return v;
}

/* runs on one core only: the sender's busy wait and the receiver keep off each other's core */
static void pin_to_cpu(unsigned long cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0) {
        die("sched_setaffinity (--cpu)");
    }
}

/* a role's options: each "--name VALUE" a whole number in lo..hi; --cpu (every role) pins the
 * role to that core once the options are read */
struct option_spec {
    const char *name;
    unsigned long *value;
    unsigned long lo, hi;
};

static void parse_options(int argc, char **argv, int first, const struct option_spec *specs, size_t n,
                          const char *role)
{
    unsigned long cpu = ULONG_MAX;
    for (int i = first; i < argc; i += 2) {
        if (i + 1 >= argc) {
            usage("an option without its value");
        }
        if (strcmp(argv[i], "--cpu") == 0) {
            cpu = number(argv[i + 1], "--cpu", 0, CPU_SETSIZE - 1);
            continue;
        }
        size_t k = 0;
        while (k < n && strcmp(argv[i], specs[k].name) != 0) {
            k++;
        }
        if (k == n) {
            char msg[96];
            snprintf(msg, sizeof msg, "unknown %s option: %s", role, argv[i]);
            usage(msg);
        }
        *specs[k].value = number(argv[i + 1], specs[k].name, specs[k].lo, specs[k].hi);
    }
    if (cpu != ULONG_MAX) {
        pin_to_cpu(cpu);
    }
}

static void hist_add(uint64_t ns)
{
    uint64_t b = ns / HIST_NS;
    hist[b < HIST_BUCKETS ? b : HIST_BUCKETS - 1]++;
}

/* the value (ns, the bucket's lower edge) below which `pct` % of the `n` samples lie */
static uint64_t hist_pct(uint64_t n, double pct)
{
    if (n == 0) {
        return 0;
    }
    uint64_t rank = (uint64_t)(pct / 100.0 * (double)(n - 1)), seen = 0;
    for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
        seen += hist[b];
        if (seen > rank) {
            return (uint64_t)b * HIST_NS;
        }
    }
    return (uint64_t)(HIST_BUCKETS - 1) * HIST_NS;
}

static int packet_socket(const char *ifname, int protocol, int *ifindex)
{
    int fd = socket(AF_PACKET, SOCK_RAW, protocol);
    if (fd < 0) {
        die("socket(AF_PACKET) (root or CAP_NET_RAW needed)");
    }
    *ifindex = (int)if_nametoindex(ifname);
    if (*ifindex == 0) {
        die(ifname);
    }
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = (uint16_t)protocol, .sll_ifindex = *ifindex};
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) {
        die("bind(AF_PACKET)");
    }
    return fd;
}

static uint16_t ip_checksum(const uint8_t *p, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)), put16(p + 2, (uint16_t)v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)(v >> 32)), put32(p + 4, (uint32_t)v); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

struct phase {
    unsigned long rate_fps;
    unsigned long count;
};

/* the frame: Ethernet II, IPv4 (DF, id 0: RFC 6864's atomic datagram), UDP (checksum 0),
 * payload: magic, sequence number, send time (CLOCK_REALTIME ns), stream id */
static size_t build_frame(uint8_t *f, size_t bytes, const uint8_t dst[6], const uint8_t src[6], struct in_addr sip,
                          struct in_addr dip, uint16_t stream, uint16_t port)
{
    memset(f, 0, bytes);
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(bytes - 14));
    put16(ip + 6, 0x4000);
    ip[8] = 64;
    ip[9] = 17;
    memcpy(ip + 12, &sip, 4);
    memcpy(ip + 16, &dip, 4);
    put16(ip + 10, ip_checksum(ip, 20));
    uint8_t *udp = ip + 20;
    put16(udp, (uint16_t)(49152 + stream % 16384));
    put16(udp + 2, port);
    put16(udp + 4, (uint16_t)(bytes - 14 - 20));
    put32(f + HDRS, MAGIC);
    put16(f + HDRS + 16, stream);
    return bytes;
}

static int parse_mac(const char *text, uint8_t mac[6])
{
    unsigned v[6];
    if (sscanf(text, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) {
        return -1;
    }
    for (int i = 0; i < 6; i++) {
        if (v[i] > 255) {
            return -1;
        }
        mac[i] = (uint8_t)v[i];
    }
    return 0;
}

/* RATE_FPS:COUNT[,RATE_FPS:COUNT...] into `phases`; returns how many */
static int parse_phases(char *text, struct phase phases[MAX_PHASES])
{
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(text, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (colon == NULL || n == MAX_PHASES) {
            usage("phases are RATE_FPS:COUNT, at most 16, comma-separated");
        }
        *colon = '\0';
        phases[n].rate_fps = number(tok, "RATE_FPS", 1, 10000000);
        phases[n].count = number(colon + 1, "COUNT", 1, 1000000000);
        n++;
    }
    return n;
}

static int cmd_send(int argc, char **argv)
{
    if (argc < 8) {
        usage("send needs IF DST_MAC SRC_IP DST_IP FRAME_BYTES RATE:COUNT[,...]");
    }
    const char *ifname = argv[2];
    uint8_t dst[6], src[6];
    struct in_addr sip, dip;
    if (parse_mac(argv[3], dst) < 0) {
        usage("DST_MAC must be six hex bytes separated by ':'");
    }
    if (inet_pton(AF_INET, argv[4], &sip) != 1 || inet_pton(AF_INET, argv[5], &dip) != 1) {
        usage("SRC_IP and DST_IP must be IPv4 addresses");
    }
    size_t frame = number(argv[6], "FRAME_BYTES", MIN_FRAME, MAX_FRAME);
    struct phase phases[MAX_PHASES];
    int n_phases = parse_phases(argv[7], phases);
    unsigned long stream = 1, port = DEFAULT_PORT, repeat = 1, pause_ms = 0, line_mbps = 100, slow_ns = 0;
    const struct option_spec specs[] = {
        {"--stream", &stream, 0, 65535},           {"--port", &port, 1, 65535},
        {"--burst-repeat", &repeat, 1, 100000},    {"--pause-ms", &pause_ms, 0, 600000},
        {"--line-mbps", &line_mbps, 0, 100000},    {"--slow-ns", &slow_ns, 0, 100000000},
    };
    parse_options(argc, argv, 8, specs, sizeof specs / sizeof specs[0], "send");
    /* the highest nice priority: at normal priority the busy wait shares its core with whatever
     * else the host runs there, for milliseconds at a time (a gap in the stream, a "resync").
     * Not SCHED_FIFO: the kernel throttles a real-time task that spins for 0.95 s of a second,
     * a 50-ms gap. Where the host refuses (no CAP_SYS_NICE) it runs as it is and says so. */
    errno = 0;
    bool prioritized = setpriority(PRIO_PROCESS, 0, SENDER_NICE) == 0;
    int ifindex;
    int fd = packet_socket(ifname, 0, &ifindex);
    int one = 1;
    if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) < 0) {
        die("PACKET_QDISC_BYPASS");
    }
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
        die("SIOCGIFHWADDR");
    }
    memcpy(src, ifr.ifr_hwaddr.sa_data, 6);
    uint8_t buf[MAX_FRAME];
    size_t bytes = build_frame(buf, frame - FCS, dst, src, sip, dip, (uint16_t)stream, (uint16_t)port);

    /* the line-rate gap: preamble and start delimiter (8) + frame + inter-frame gap (12) bytes */
    uint64_t wire_gap = line_mbps ? (uint64_t)((double)(frame + 20) * 8 * 1000.0 / (double)line_mbps) : 0;
    uint64_t stalled = 0; /* the time the schedule lost to stalls (the sum of the resyncs' lateness) */
    uint64_t sent = 0, resyncs = 0, clumped = 0, gaps = 0, gap_max = 0, late_max = 0, retries = 0;
    uint64_t prev = 0, first = 0, last = 0, even_sum_ns = 0;
    uint64_t phase_start_rt[MAX_PHASES] = {0};
    for (unsigned long r = 0; r < repeat; r++) {
        if (r > 0 && pause_ms > 0) {
            struct timespec pause = {(time_t)(pause_ms / 1000), (long)(pause_ms % 1000) * 1000000L};
            nanosleep(&pause, NULL);
            prev = 0; /* a pause is no gap of the stream */
        }
        for (int p = 0; p < n_phases; p++) {
            double even = 1e9 / (double)phases[p].rate_fps;
            uint64_t gap = (uint64_t)even;
            /* the schedule: anchor + k x even; a phase after another goes on from its last frame
             * (the rate changes at one gap of the new rate, RFC 2544's timestamp A) */
            uint64_t anchor = p > 0 && prev != 0 ? prev + gap : now_ns(CLOCK_MONOTONIC);
            unsigned long k0 = 0;
            if (r == 0) {
                phase_start_rt[p] = now_ns(CLOCK_REALTIME);
            }
            for (unsigned long i = 0; i < phases[p].count; i++) {
                uint64_t due = anchor + (uint64_t)((double)(i - k0) * even);
                uint64_t t = now_ns(CLOCK_MONOTONIC);
                if (t > due) { /* late against the schedule (not against the wire's floor below) */
                    if (t - due > late_max) {
                        late_max = t - due;
                    }
                    if (t - due > gap) {
                        /* more than a gap late (the host took the CPU): the schedule moves on
                         * from now, so no burst follows the stall to catch up */
                        resyncs++;
                        stalled += t - due;
                        anchor = t;
                        k0 = i;
                        due = t;
                    }
                }
                if (prev != 0 && due < prev + wire_gap) {
                    due = prev + wire_gap; /* never closer than the wire allows */
                }
                while (t < due) {
                    t = now_ns(CLOCK_MONOTONIC);
                }
                if (slow_ns) {
                    uint64_t until = t + slow_ns;
                    while (now_ns(CLOCK_MONOTONIC) < until) {
                    }
                }
                put32(buf + HDRS + 4, (uint32_t)sent);
                put64(buf + HDRS + 8, now_ns(CLOCK_REALTIME));
                while (send(fd, buf, bytes, 0) < 0) {
                    if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
                        die("send");
                    }
                    retries++;
                }
                if (prev != 0 && i > 0) {
                    uint64_t g = t - prev;
                    hist_add(g);
                    gaps++;
                    even_sum_ns += gap;
                    if (g < gap / 2) {
                        clumped++;
                    }
                    if (g > gap_max) {
                        gap_max = g;
                    }
                }
                prev = t;
                if (sent == 0) {
                    first = t;
                }
                last = t;
                sent++;
            }
        }
    }
    double elapsed = (double)(last - first) / 1e9;
    printf("{\"sent\": %" PRIu64 ", \"frame_bytes\": %zu, \"repeat\": %lu, \"elapsed_s\": %.9f, "
           "\"achieved_fps\": %.1f, \"prioritized\": %s, \"wire_gap_ns\": %" PRIu64 ", \"send_retries\": %" PRIu64 ", \"late_max_ns\": %" PRIu64
           ", \"resyncs\": %" PRIu64 ", \"stalled_ns\": %" PRIu64 ", \"phases\": [",
           sent, frame, repeat, elapsed, (repeat == 1 && n_phases == 1 && elapsed > 0) ? (double)(sent - 1) / elapsed : 0.0,
           prioritized ? "true" : "false", wire_gap, retries, late_max, resyncs, stalled);
    for (int p = 0; p < n_phases; p++) {
        printf("%s{\"rate_fps\": %lu, \"count\": %lu, \"start_rt_ns\": %" PRIu64 "}", p ? ", " : "",
               phases[p].rate_fps, phases[p].count, phase_start_rt[p]);
    }
    printf("], \"gaps\": {\"n\": %" PRIu64 ", \"even_ns\": %.1f, \"p5_ns\": %" PRIu64 ", \"median_ns\": %" PRIu64
           ", \"p95_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 ", \"clumped\": %" PRIu64 "}}\n",
           gaps, gaps ? (double)even_sum_ns / (double)gaps : 0.0, hist_pct(gaps, 5), hist_pct(gaps, 50),
           hist_pct(gaps, 95), gap_max, clumped);
    close(fd);
    return 0;
}

static bool stdin_says_stop(void)
{
    char line[64];
    if (fgets(line, sizeof line, stdin) == NULL) {
        return true; /* EOF: the controller went away */
    }
    return strncmp(line, "stop", 4) == 0;
}

/* a listening role's wait: up to 100 ms for its socket (and, until "stop", for stdin); false once
 * the linger after "stop" is over */
static bool wait_listening(struct pollfd pfd[2], bool *stopping, uint64_t *stop_at, uint64_t linger_ns)
{
    int timeout = 100;
    if (*stopping) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (now >= *stop_at) {
            return false;
        }
        timeout = (int)((*stop_at - now) / 1000000) + 1;
    }
    if (poll(pfd, *stopping ? 1 : 2, timeout) < 0 && errno != EINTR) {
        die("poll");
    }
    if (!*stopping && (pfd[1].revents & (POLLIN | POLLHUP)) && stdin_says_stop()) {
        *stopping = true;
        *stop_at = now_ns(CLOCK_MONOTONIC) + linger_ns;
    }
    return true;
}

static int cmd_recv(int argc, char **argv)
{
    if (argc < 5) {
        usage("recv needs IF STREAM EXPECT");
    }
    const char *ifname = argv[2];
    uint16_t stream = (uint16_t)number(argv[3], "STREAM", 0, 65535);
    uint64_t expect = number(argv[4], "EXPECT", 1, 1000000000);
    unsigned long port = DEFAULT_PORT, linger_ms = 500;
    const struct option_spec specs[] = {{"--port", &port, 1, 65535}, {"--linger-ms", &linger_ms, 0, 60000}};
    parse_options(argc, argv, 5, specs, sizeof specs / sizeof specs[0], "recv");
    uint8_t *seen = calloc((size_t)(expect + 7) / 8, 1);
    if (seen == NULL) {
        die("calloc");
    }
    int ifindex;
    int fd = packet_socket(ifname, htons(ETH_P_IP), &ifindex);
    int big = 64 << 20, one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) < 0) {
        die("SO_RCVBUFFORCE");
    }
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) < 0) {
        die("SO_TIMESTAMPNS");
    }
    /* a bound UDP socket that is never read: the frames' port is open, so the receiving host
     * sends no ICMP port unreachable back through the device */
    int sink = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int small = 4096;
    if (sink < 0 || setsockopt(sink, SOL_SOCKET, SO_RCVBUF, &small, sizeof small) < 0 ||
        bind(sink, (struct sockaddr *)&any, sizeof any) < 0) {
        die("binding the UDP sink port");
    }
    printf("ready\n");
    fflush(stdout);

    static uint8_t frames[RX_BATCH][128];
    static char ctrl[RX_BATCH][CMSG_SPACE(sizeof(struct timespec))];
    struct iovec iov[RX_BATCH];
    struct mmsghdr msgs[RX_BATCH];
    struct sockaddr_ll from[RX_BATCH];
    uint64_t received = 0, dup = 0, ooo = 0, beyond = 0, others = 0, highest = 0, lat_max = 0, lat_sum = 0;
    uint64_t first_rx = 0, last_rx = 0, gap_max = 0, gap_before = 0, gap_after = 0, prev_seq = 0;
    bool any_seq = false, stopping = false;
    uint64_t stop_at = 0;
    struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = STDIN_FILENO, .events = POLLIN}};
    while (wait_listening(pfd, &stopping, &stop_at, (uint64_t)linger_ms * 1000000ull)) {
        if (!(pfd[0].revents & POLLIN)) {
            continue;
        }
        for (int i = 0; i < RX_BATCH; i++) {
            iov[i] = (struct iovec){frames[i], sizeof frames[i]};
            msgs[i].msg_hdr = (struct msghdr){.msg_name = &from[i], .msg_namelen = sizeof from[i], .msg_iov = &iov[i],
                                              .msg_iovlen = 1, .msg_control = ctrl[i], .msg_controllen = sizeof ctrl[i]};
        }
        int n = recvmmsg(fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                continue;
            }
            die("recvmmsg");
        }
        for (int i = 0; i < n; i++) {
            const uint8_t *f = frames[i];
            if (from[i].sll_pkttype == PACKET_OUTGOING || msgs[i].msg_len < HDRS + 18 || f[23] != 17 ||
                (f[36] << 8 | f[37]) != (int)port || get32(f + HDRS) != MAGIC || (f[HDRS + 16] << 8 | f[HDRS + 17]) != stream) {
                others++;
                continue;
            }
            uint64_t rx = 0;
            for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c != NULL; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                    struct timespec ts;
                    memcpy(&ts, CMSG_DATA(c), sizeof ts);
                    rx = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
                }
            }
            if (rx == 0) {
                rx = now_ns(CLOCK_REALTIME);
            }
            uint64_t seq = get32(f + HDRS + 4), tx = get64(f + HDRS + 8);
            if (seq >= expect) {
                beyond++;
                continue;
            }
            if (seen[seq / 8] & (1u << (seq % 8))) {
                dup++;
                continue;
            }
            seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
            received++;
            if (any_seq && seq < highest) {
                ooo++;
            }
            if (!any_seq || seq > highest) {
                highest = seq;
            }
            uint64_t lat = rx > tx ? rx - tx : 0;
            hist_add(lat);
            lat_sum += lat;
            if (lat > lat_max) {
                lat_max = lat;
            }
            if (first_rx == 0) {
                first_rx = rx;
            } else if (rx > last_rx && rx - last_rx > gap_max) {
                gap_max = rx - last_rx;
                gap_before = prev_seq;
                gap_after = seq;
            }
            last_rx = rx > last_rx ? rx : last_rx;
            prev_seq = seq;
            any_seq = true;
        }
    }
    printf("{\"expected\": %" PRIu64 ", \"received\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"duplicated\": %" PRIu64
           ", \"out_of_order\": %" PRIu64 ", \"beyond\": %" PRIu64 ", \"other_frames\": %" PRIu64
           ", \"first_rx_ns\": %" PRIu64 ", \"last_rx_ns\": %" PRIu64 ", \"latency_ns\": {\"min\": %" PRIu64
           ", \"p50\": %" PRIu64 ", \"p90\": %" PRIu64 ", \"p99\": %" PRIu64 ", \"max\": %" PRIu64 ", \"mean\": %.1f}"
           ", \"longest_gap\": {\"ns\": %" PRIu64 ", \"after_seq\": %" PRIu64 ", \"next_seq\": %" PRIu64 "}, \"lost_runs\": [",
           expect, received, expect - received, dup, ooo, beyond, others, first_rx, last_rx, hist_pct(received, 0),
           hist_pct(received, 50), hist_pct(received, 90), hist_pct(received, 99), lat_max,
           received ? (double)lat_sum / (double)received : 0.0, gap_max, gap_before, gap_after);
    uint64_t runs = 0, first_lost = 0, last_lost = 0;
    for (uint64_t s = 0; s < expect;) {
        if (seen[s / 8] & (1u << (s % 8))) {
            s++;
            continue;
        }
        uint64_t e = s;
        while (e + 1 < expect && !(seen[(e + 1) / 8] & (1u << ((e + 1) % 8)))) {
            e++;
        }
        if (runs == 0) {
            first_lost = s;
        }
        last_lost = e;
        if (runs < MAX_RUNS_LISTED) {
            printf("%s[%" PRIu64 ", %" PRIu64 "]", runs ? ", " : "", s, e);
        }
        runs++;
        s = e + 1;
    }
    printf("], \"lost_run_count\": %" PRIu64 ", \"first_lost_seq\": %" PRIu64 ", \"last_lost_seq\": %" PRIu64 "}\n",
           runs, first_lost, last_lost);
    free(seen);
    close(sink);
    close(fd);
    return 0;
}

/* keeps the tester's frames of `port` (IPv4, UDP, the magic word; an IPv4 header of 20 bytes, as
 * the sender writes it), truncated to 64 bytes; everything else stays in the kernel */
static void keep_tester_frames(int fd, unsigned long port)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 7),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 5),
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 36),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)port, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, HDRS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MAGIC, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 64),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof code / sizeof code[0]), .filter = code};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0) {
        die("SO_ATTACH_FILTER");
    }
}

/* the capture's state: what it has seen of the stream, and the gaps between consecutive frames */
struct tap_state {
    const struct phase *phases;
    int n_phases;
    uint64_t per_repeat, expect, arrived, unique, gaps, clumped, gap_max, even_sum_ns, prev_rx, prev_seq;
    uint16_t stream;
    uint8_t *seen;
    bool any;
};

static void tap_frame(struct tap_state *t, const uint8_t *f, uint32_t len, uint64_t rx)
{
    if (len < HDRS + 18 || (f[HDRS + 16] << 8 | f[HDRS + 17]) != t->stream) {
        return;
    }
    uint64_t seq = get32(f + HDRS + 4);
    if (seq >= t->expect) {
        return;
    }
    t->arrived++;
    if (!(t->seen[seq / 8] & (1u << (seq % 8)))) {
        t->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
        t->unique++;
    }
    /* a gap of the stream: between a frame and the one sent right after it, within one repeat
     * (a pause between back-to-back bursts is no gap) */
    uint64_t pos = seq % t->per_repeat;
    if (t->any && seq == t->prev_seq + 1 && pos != 0 && rx >= t->prev_rx) {
        uint64_t g = rx - t->prev_rx, even = 0, upto = 0;
        for (int p = 0; p < t->n_phases; p++) {
            upto += t->phases[p].count;
            if (pos < upto) {
                even = (uint64_t)(1e9 / (double)t->phases[p].rate_fps);
                break;
            }
        }
        hist_add(g);
        t->gaps++;
        t->even_sum_ns += even;
        if (g < even / 2) {
            t->clumped++;
        }
        if (g > t->gap_max) {
            t->gap_max = g;
        }
    }
    t->prev_rx = rx;
    t->prev_seq = seq;
    t->any = true;
}

/* the capture's ring (TPACKET_V3): the kernel writes each kept frame's first bytes and its
 * receive time into blocks this process reads without a system call per frame, so the capture
 * takes little of the core it shares with the device under test */
#define TAP_BLOCK_BYTES (1u << 20)
#define TAP_BLOCKS 16u
#define TAP_FRAME_BYTES 2048u
#define TAP_BLOCK_TIMEOUT_MS 10u

static int cmd_tap(int argc, char **argv)
{
    if (argc < 5) {
        usage("tap needs IF STREAM RATE:COUNT[,...]");
    }
    const char *ifname = argv[2];
    struct phase phases[MAX_PHASES];
    struct tap_state t = {.stream = (uint16_t)number(argv[3], "STREAM", 0, 65535)};
    t.n_phases = parse_phases(argv[4], phases);
    t.phases = phases;
    unsigned long port = DEFAULT_PORT, linger_ms = 300, repeat = 1;
    const struct option_spec specs[] = {
        {"--port", &port, 1, 65535}, {"--linger-ms", &linger_ms, 0, 60000}, {"--burst-repeat", &repeat, 1, 100000}};
    parse_options(argc, argv, 5, specs, sizeof specs / sizeof specs[0], "tap");
    for (int p = 0; p < t.n_phases; p++) {
        t.per_repeat += phases[p].count;
    }
    t.expect = t.per_repeat * repeat;
    t.seen = calloc((size_t)(t.expect + 7) / 8, 1);
    if (t.seen == NULL) {
        die("calloc");
    }
    /* every protocol: a port enslaved to a bridge hands its frames to the bridge before any
     * protocol's socket sees them; only the taps of all protocols see them first */
    int ifindex;
    int fd = packet_socket(ifname, htons(ETH_P_ALL), &ifindex);
    keep_tester_frames(fd, port);
    int version = TPACKET_V3;
    if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) < 0) {
        die("PACKET_VERSION");
    }
    struct tpacket_req3 req = {.tp_block_size = TAP_BLOCK_BYTES, .tp_block_nr = TAP_BLOCKS,
                               .tp_frame_size = TAP_FRAME_BYTES,
                               .tp_frame_nr = TAP_BLOCK_BYTES / TAP_FRAME_BYTES * TAP_BLOCKS,
                               .tp_retire_blk_tov = TAP_BLOCK_TIMEOUT_MS};
    if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) < 0) {
        die("PACKET_RX_RING");
    }
    uint8_t *ring = mmap(NULL, (size_t)TAP_BLOCK_BYTES * TAP_BLOCKS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        die("mmap (the capture's ring)");
    }
    printf("ready\n");
    fflush(stdout);

    bool stopping = false;
    uint64_t stop_at = 0;
    unsigned block = 0;
    struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN | POLLERR}, {.fd = STDIN_FILENO, .events = POLLIN}};
    for (;;) {
        struct tpacket_block_desc *bd = (struct tpacket_block_desc *)(ring + (size_t)block * TAP_BLOCK_BYTES);
        if (bd->hdr.bh1.block_status & TP_STATUS_USER) {
            const uint8_t *pkt = (const uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt;
            for (uint32_t i = 0; i < bd->hdr.bh1.num_pkts; i++) {
                const struct tpacket3_hdr *h = (const struct tpacket3_hdr *)pkt;
                const struct sockaddr_ll *sll =
                    (const struct sockaddr_ll *)(pkt + TPACKET_ALIGN(sizeof(struct tpacket3_hdr)));
                /* the device's input: frames arriving at its port, not those it sends out of it */
                if (sll->sll_pkttype != PACKET_OUTGOING) {
                    tap_frame(&t, pkt + h->tp_mac, h->tp_snaplen,
                              (uint64_t)h->tp_sec * 1000000000ull + (uint64_t)h->tp_nsec);
                }
                pkt += h->tp_next_offset;
            }
            __atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
            block = (block + 1) % TAP_BLOCKS;
            continue;
        }
        /* the linger, and a block's timeout: the last block is handed over once it retires */
        if (!wait_listening(pfd, &stopping, &stop_at, ((uint64_t)linger_ms + 2 * TAP_BLOCK_TIMEOUT_MS) * 1000000ull)) {
            break;
        }
        if (pfd[0].revents & POLLERR) {
            /* the port went down (a reconnection): the socket reports it once; read, it clears */
            int err = 0;
            socklen_t err_len = sizeof err;
            (void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
        }
    }
    /* frames the ring had no room for (the capture fell behind): their absence is the capture's */
    struct tpacket_stats_v3 st = {0};
    socklen_t st_len = sizeof st;
    if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &st_len) < 0) {
        die("PACKET_STATISTICS");
    }
    printf("{\"expected\": %" PRIu64 ", \"arrived\": %" PRIu64 ", \"unique\": %" PRIu64 ", \"missing\": %" PRIu64
           ", \"capture_dropped\": %u, \"gaps\": {\"n\": %" PRIu64 ", \"even_ns\": %.1f, \"p5_ns\": %" PRIu64
           ", \"median_ns\": %" PRIu64 ", \"p95_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 ", \"clumped\": %" PRIu64 "}}\n",
           t.expect, t.arrived, t.unique, t.expect - t.unique, st.tp_drops, t.gaps,
           t.gaps ? (double)t.even_sum_ns / (double)t.gaps : 0.0, hist_pct(t.gaps, 5), hist_pct(t.gaps, 50),
           hist_pct(t.gaps, 95), t.gap_max, t.clumped);
    munmap(ring, (size_t)TAP_BLOCK_BYTES * TAP_BLOCKS);
    free(t.seen);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage("a role is needed: send, recv or tap");
    }
    if (strcmp(argv[1], "send") == 0) {
        return cmd_send(argc, argv);
    }
    if (strcmp(argv[1], "recv") == 0) {
        return cmd_recv(argc, argv);
    }
    if (strcmp(argv[1], "tap") == 0) {
        return cmd_tap(argc, argv);
    }
    usage("the role is send, recv or tap");
    return 2;
}
