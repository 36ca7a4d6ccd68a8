/*
 * modelbox: a device with a known answer, for the RFC 2544 family's own tests. It forwards every
 * frame between two ports (a repeater: no address learning) and decides which frames it drops by
 * a model of a device, from the kernel's receive time of each frame alone - so its answers are
 * the model's, not the bench host's: a frame that the model accepts leaves when the model says
 * (or as soon as the host can, later), and the loss is the model's exactly.
 *
 *   modelbox PORT_A PORT_B [--fps N] [--mbps R] [--queue Q] [--policer B] [--meter-ms TAU]
 *            [--reset-ms T] [--cpu N]
 *
 *   --fps N, --mbps R   the service time of one frame: 1/N s, and/or its bits on the wire (frame,
 *                       FCS, preamble, inter-frame gap) at R Mbit/s; the longer of the two
 *   --queue Q           frames that may wait while one is served (default 32); one more is dropped
 *   --policer B         no queue: a token bucket of B frames refilled at N frames/s (the frame
 *                       rate limit with a burst allowance of B frames)
 *   --meter-ms TAU      storm control: while the arrival rate, measured with a time constant of
 *                       TAU ms (meter += 1/TAU per frame, decaying as e^(-dt/TAU)), exceeds the
 *                       service rate, the share of the arrivals above it is dropped, evenly.
 *                       After an overload at 110 % falls to 50 % the meter needs
 *                       TAU x ln((1.1 - 0.5) / (1 - 0.5)) = 0.182 TAU to fall below the rate, and
 *                       frames are lost until shortly before that (the share falls to nothing)
 *   --reset-ms T        on SIGUSR1 the device resets: its queue is flushed and every frame
 *                       arriving in the next T ms is dropped (RFC 6201's reset time is T)
 *   --cpu N             runs on core N only (the frame tester's receiver's, off its sender's)
 *
 * Each direction has its own model. On SIGTERM or SIGINT it prints its counters as JSON on
 * stdout and exits 0; exit 2 is a usage error, 1 a failed system call.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <math.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_QUEUE 4096
#define FRAME_MAX 1600
#define BATCH 64
#define WIRE_EXTRA 24 /* FCS 4 + preamble 8 + inter-frame gap 12 */

struct slot {
    uint64_t depart_ns;
    uint16_t len;
    uint8_t data[FRAME_MAX];
};

struct direction {
    int rx, tx; /* sockets: receive on one port, send on the other */
    struct slot ring[MAX_QUEUE + 1];
    unsigned head, count; /* frames accepted and not yet sent */
    uint64_t busy_until;  /* the model's server: when it is free */
    double tokens;        /* policer */
    uint64_t last_arrival;
    double meter_fps;   /* the arrival-rate meter */
    double drop_credit; /* storm control's share of drops owed */
    uint64_t received, forwarded, dropped, dropped_reset, dropped_meter, dropped_host;
};

static volatile sig_atomic_t stop_now, reset_now;
static double svc_fps, svc_mbps, meter_tau_s;
static unsigned queue_len = 32, policer_burst;
static uint64_t reset_ns, reset_until;

static void on_stop(int sig) { (void)sig, stop_now = 1; }
static void on_reset(int sig) { (void)sig, reset_now = 1; }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "modelbox: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void usage(const char *why)
{
    fprintf(stderr, "modelbox: %s\nusage: modelbox PORT_A PORT_B [--fps N] [--mbps R] [--queue Q] [--policer B] "
                    "[--meter-ms TAU] [--reset-ms T] [--cpu N]\n", why);
    exit(2);
}

static double number(const char *text, const char *what, double lo, double hi)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(v >= lo && v <= hi)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be a number in %g..%g, not '%s'", what, lo, hi, text);
        usage(msg);
    }
    return v;
}

static int port_socket(const char *ifname)
{
    int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) {
        die("socket(AF_PACKET) (root or CAP_NET_RAW needed)");
    }
    int ifindex = (int)if_nametoindex(ifname);
    if (ifindex == 0) {
        die(ifname);
    }
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = ifindex};
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) {
        die("bind");
    }
    int one = 1, big = 32 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) < 0 ||
        setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) < 0) {
        die("setsockopt");
    }
    return fd;
}

/* the model's service time of one frame of `len` bytes (without the FCS), ns */
static uint64_t service_ns(unsigned len)
{
    double s = 0;
    if (svc_fps > 0) {
        s = 1e9 / svc_fps;
    }
    if (svc_mbps > 0) {
        double bits = (double)(len + WIRE_EXTRA) * 8;
        double t = bits * 1000.0 / svc_mbps;
        s = t > s ? t : s;
    }
    return (uint64_t)s;
}

/* the model's decision for a frame arriving at `t`: true to accept it */
static bool admit(struct direction *d, uint64_t t, unsigned len)
{
    if (t < reset_until) {
        d->dropped_reset++;
        return false;
    }
    uint64_t svc = service_ns(len);
    if (meter_tau_s > 0) {
        double dt = d->last_arrival ? (double)(t - d->last_arrival) / 1e9 : 0;
        d->meter_fps = d->meter_fps * exp(-dt / meter_tau_s) + 1.0 / meter_tau_s;
    }
    double since = d->last_arrival ? (double)(t - d->last_arrival) / 1e9 : 0;
    d->last_arrival = t;
    double limit_fps = svc > 0 ? 1e9 / (double)svc : 0;
    if (meter_tau_s > 0 && limit_fps > 0 && d->meter_fps > limit_fps) {
        /* storm control drops the share of the arrivals above the limit, evenly (a credit that
         * drops a frame each time it reaches one): an overloaded device still forwards its rate */
        d->drop_credit += (d->meter_fps - limit_fps) / d->meter_fps;
        if (d->drop_credit >= 1.0) {
            d->drop_credit -= 1.0;
            d->dropped_meter++;
            return false;
        }
    } else {
        d->drop_credit = 0;
    }
    if (policer_burst > 0) {
        d->tokens += since * svc_fps;
        if (d->tokens > policer_burst) {
            d->tokens = policer_burst;
        }
        if (d->tokens < 1.0) {
            return false;
        }
        d->tokens -= 1.0;
        return true;
    }
    /* the frames in the device at t: those whose departure is after t (one of them in service) */
    /* (departures only grow along the ring: the ones already due are at its head) */
    unsigned due = 0;
    while (due < d->count && d->ring[(d->head + due) % (MAX_QUEUE + 1)].depart_ns <= t) {
        due++;
    }
    unsigned inside = d->count - due;
    if (inside > queue_len) { /* one in service, queue_len waiting */
        return false;
    }
    uint64_t start = d->busy_until > t ? d->busy_until : t;
    d->busy_until = start + svc;
    return true;
}

static void receive(struct direction *d)
{
    static uint8_t frames[BATCH][FRAME_MAX];
    static char ctrl[BATCH][CMSG_SPACE(sizeof(struct timespec))];
    struct iovec iov[BATCH];
    struct mmsghdr msgs[BATCH];
    struct sockaddr_ll from[BATCH];
    for (int i = 0; i < BATCH; i++) {
        iov[i] = (struct iovec){frames[i], FRAME_MAX};
        msgs[i].msg_hdr = (struct msghdr){.msg_name = &from[i], .msg_namelen = sizeof from[i], .msg_iov = &iov[i],
                                          .msg_iovlen = 1, .msg_control = ctrl[i], .msg_controllen = sizeof ctrl[i]};
    }
    int n = recvmmsg(d->rx, msgs, BATCH, MSG_DONTWAIT, NULL);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) {
            return;
        }
        die("recvmmsg");
    }
    for (int i = 0; i < n; i++) {
        if (from[i].sll_pkttype == PACKET_OUTGOING || msgs[i].msg_len < 14 || msgs[i].msg_len > FRAME_MAX) {
            continue;
        }
        uint64_t t = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(c), sizeof ts);
                t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
            }
        }
        if (t == 0) {
            t = now_ns();
        }
        d->received++;
        if (d->count == MAX_QUEUE) { /* the host kept the model from sending: not the model's drop */
            d->dropped_host++;
            d->dropped++;
            continue;
        }
        if (!admit(d, t, msgs[i].msg_len)) {
            d->dropped++;
            continue;
        }
        struct slot *s = &d->ring[(d->head + d->count) % (MAX_QUEUE + 1)];
        s->depart_ns = policer_burst > 0 ? t : d->busy_until;
        s->len = (uint16_t)msgs[i].msg_len;
        memcpy(s->data, frames[i], msgs[i].msg_len);
        d->count++;
    }
}

/* sends the frames whose departure time has come; returns the next departure (0: none) */
static uint64_t transmit(struct direction *d, uint64_t now)
{
    while (d->count > 0) {
        struct slot *s = &d->ring[d->head];
        if (s->depart_ns > now) {
            return s->depart_ns;
        }
        if (send(d->tx, s->data, s->len, 0) < 0 && errno != ENOBUFS && errno != EAGAIN) {
            die("send");
        }
        d->forwarded++;
        d->head = (d->head + 1) % (MAX_QUEUE + 1);
        d->count--;
    }
    return 0;
}

static struct direction dirs[2];

int main(int argc, char **argv)
{
    if (argc < 3) {
        usage("two ports are needed");
    }
    for (int i = 3; i < argc; i += 2) {
        if (i + 1 >= argc) {
            usage("an option without its value");
        } else if (strcmp(argv[i], "--fps") == 0) {
            svc_fps = number(argv[i + 1], "--fps", 1, 1e8);
        } else if (strcmp(argv[i], "--mbps") == 0) {
            svc_mbps = number(argv[i + 1], "--mbps", 0.001, 1e6);
        } else if (strcmp(argv[i], "--queue") == 0) {
            queue_len = (unsigned)number(argv[i + 1], "--queue", 0, MAX_QUEUE - 1);
        } else if (strcmp(argv[i], "--policer") == 0) {
            policer_burst = (unsigned)number(argv[i + 1], "--policer", 1, 1e6);
        } else if (strcmp(argv[i], "--meter-ms") == 0) {
            meter_tau_s = number(argv[i + 1], "--meter-ms", 0.1, 1e5) / 1000;
        } else if (strcmp(argv[i], "--cpu") == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET((int)number(argv[i + 1], "--cpu", 0, CPU_SETSIZE - 1), &set);
            if (sched_setaffinity(0, sizeof set, &set) < 0) {
                die("sched_setaffinity (--cpu)");
            }
        } else if (strcmp(argv[i], "--reset-ms") == 0) {
            reset_ns = (uint64_t)(number(argv[i + 1], "--reset-ms", 0, 1e6) * 1e6);
        } else {
            usage("unknown option");
        }
    }
    if (svc_fps <= 0 && svc_mbps <= 0) {
        usage("a service rate is needed: --fps and/or --mbps");
    }
    if (policer_burst > 0 && svc_fps <= 0) {
        usage("--policer needs --fps (the bucket's refill)");
    }
    int a = port_socket(argv[1]), b = port_socket(argv[2]);
    dirs[0].rx = a, dirs[0].tx = b;
    dirs[1].rx = b, dirs[1].tx = a;
    dirs[0].tokens = dirs[1].tokens = policer_burst;
    struct sigaction stop = {.sa_handler = on_stop}, rst = {.sa_handler = on_reset};
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGUSR1, &rst, NULL);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* wake-ups at the departure times, not 50 us later */
    struct pollfd pfd[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
    while (!stop_now) {
        if (reset_now) {
            reset_now = 0;
            reset_until = now_ns() + reset_ns;
            for (int i = 0; i < 2; i++) {
                dirs[i].dropped_reset += dirs[i].count;
                dirs[i].dropped += dirs[i].count;
                dirs[i].count = 0;
                dirs[i].busy_until = 0;
            }
        }
        uint64_t now = now_ns(), next = 0;
        for (int i = 0; i < 2; i++) {
            uint64_t due = transmit(&dirs[i], now);
            if (due && (!next || due < next)) {
                next = due;
            }
        }
        /* sleeps until the next departure or frame (no busy wait: the tester's sender needs the
         * host's cores; a departure a few microseconds late changes a frame's latency, never
         * the model's loss, which is decided on the arrival times) */
        uint64_t wait = next ? next - now : 50000000ull;
        struct timespec timeout = {(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};
        if (ppoll(pfd, 2, &timeout, NULL) < 0 && errno != EINTR) {
            die("ppoll");
        }
        for (int i = 0; i < 2; i++) {
            if (pfd[i].revents & POLLIN) {
                receive(&dirs[i]);
            }
        }
    }
    printf("{");
    for (int i = 0; i < 2; i++) {
        struct direction *d = &dirs[i];
        printf("%s\"%s\": {\"received\": %" PRIu64 ", \"forwarded\": %" PRIu64 ", \"dropped\": %" PRIu64
               ", \"dropped_reset\": %" PRIu64 ", \"dropped_meter\": %" PRIu64 ", \"dropped_host\": %" PRIu64 "}",
               i ? ", " : "", i ? "b_to_a" : "a_to_b", d->received, d->forwarded, d->dropped, d->dropped_reset,
               d->dropped_meter, d->dropped_host);
    }
    printf("}\n");
    return 0;
}
