/*
 * Unit tests at the edges of the firmware's figures (issue 27, "the firmware's figures are exact"),
 * inside the whole application with the test clock and crafted datagrams handed to the netif as
 * Ethernet frames:
 *   - a stream receiver that loses more bursts than one report holds: the summary carries the
 *     total lost and says how many burst lines were left out;
 *   - duplicated stream packets are counted apart and never hide loss;
 *   - reordered stream packets (within a burst and a straggler of the previous burst) are
 *     received, counted out of order, and no burst is reported lossy for them;
 *   - the iperf UDP server refuses a jump in sequence numbers beyond FW_IPERF_UDP_SEQ_WINDOW, and with
 *     that guard off (the host's `trust_udp_seq`) prints the loss near 100 % exactly in 64 bits;
 *   - iperf pacing over a day at 1 Gbit/s (and at the 100 Gbit/s maximum): the next send time is
 *     monotonic and exact at t = 86400 s, the allowance likewise;
 *   - the arithmetic under those fixes (fw_muldiv.h) against 128-bit arithmetic where the host has it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "fw_muldiv.h"
#include "fw_out.h"
#include "iperf_engine.h"
#include "iperf_wire.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "stream_wire.h"
#include "test_platform.h"

#define DUT_IP 0x0a4d0002u  /* 10.77.0.2 */
#define PEER_IP 0x0a4d0001u /* 10.77.0.1 */

static struct netif netif;

static void feed(const char *s)
{
    fw_app_console_input(s, strlen(s));
}

/* One UDP datagram from PEER_IP:sport to the DUT's dport, as an Ethernet frame on the netif. */
static void inject_udp(uint16_t sport, uint16_t dport, const uint8_t *payload, uint16_t len)
{
    static uint8_t udp[8 + FW_IPERF_UDP_MAX_LEN];
    CHECK(len <= FW_IPERF_UDP_MAX_LEN);
    test_put16(udp, sport);
    test_put16(udp + 2, dport);
    test_put16(udp + 4, (uint16_t)(8u + len));
    test_put16(udp + 6, 0); /* checksum 0: none (IPv4) */
    memcpy(udp + 8, payload, len);
    CHECK(test_inject_ipv4(&netif, PEER_IP, DUT_IP, 17, 0, 0, udp, (uint16_t)(8u + len)));
}

/* The value of " key=" on the first line that starts with prefix (-1: no such line or key). */
static long long field(const char *prefix, const char *key)
{
    const char *line = test_output;
    size_t plen = strlen(prefix);
    while (line != NULL && *line != '\0') {
        const char *eol = strstr(line, "\r\n");
        if (strncmp(line, prefix, plen) == 0) {
            char pat[48];
            snprintf(pat, sizeof pat, " %s=", key);
            const char *k = strstr(line, pat);
            if (k == NULL || (eol != NULL && k > eol)) {
                return -1;
            }
            return strtoll(k + strlen(pat), NULL, 10);
        }
        line = eol != NULL ? eol + 2 : NULL;
    }
    return -1;
}

/* How often needle occurs in the output. */
static unsigned occurrences(const char *needle)
{
    unsigned n = 0;
    for (const char *s = strstr(test_output, needle); s != NULL; s = strstr(s + 1, needle)) {
        n++;
    }
    return n;
}

/* After a scenario with failed checks (or any, with TEST_VERBOSE set): what the application
 * printed, its STREAM and RESULT lines. */
static void show_output_if_failed(const char *scenario, int failures_before)
{
    if (check_failures == failures_before && getenv("TEST_VERBOSE") == NULL) {
        return;
    }
    fprintf(stderr, "--- %s printed:\n", scenario);
    for (const char *line = test_output; *line != '\0';) {
        const char *eol = strstr(line, "\r\n");
        size_t len = eol != NULL ? (size_t)(eol - line) : strlen(line);
        if (strncmp(line, "STREAM", 6) == 0 || strncmp(line, "RESULT", 6) == 0) {
            fprintf(stderr, "    %.*s\n", (int)len, line);
        }
        line += len + (eol != NULL ? 2u : 0u);
    }
}

/* ---- stream ----------------------------------------------------------------------------------- */

#define SID 7
#define SPORT 6007
#define BURST 4
#define PERIOD_US 200000u

static uint64_t stream_t0;
static uint32_t stream_seq;

static void stream_begin(void)
{
    feed("stream clear\r\n");
    feed("stream add rx 7 6007 24 4 200 250\r\n");
    test_output_reset();
    feed("stream start 100\r\n");
    CHECK(strstr(test_output, "stream: 1 streams running") != NULL);
    stream_t0 = test_now_us;
    stream_seq = 0;
}

/* Packet `index` of `burst` arriving on time; seq as the sender numbers it (burst * BURST + index). */
static void stream_pkt(uint32_t burst, uint16_t index)
{
    uint8_t b[STREAM_HDR_LEN];
    struct stream_pkt p = {SID, index, burst, burst * BURST + index, 0};
    stream_pkt_encode(b, &p);
    uint64_t due = stream_t0 + 1000u + (uint64_t)burst * PERIOD_US + (uint64_t)index * 100u;
    test_now_us = due > test_now_us ? due : test_now_us + 10u; /* a straggler: a little after the last */
    inject_udp(40000, SPORT, b, sizeof b);
}

static void stream_end(void)
{
    feed("stream -a\r\n");
    CHECK(strstr(test_output, "RESULT stream status=aborted streams=1 ") != NULL);
}

/* Burst 0 arrives, bursts 1..20 are lost, burst 21 arrives: 20 lossy bursts, 80 packets lost. */
static void test_stream_losses_beyond_cap(void)
{
    int failures = check_failures;
    stream_begin();
    for (uint16_t i = 0; i < BURST; i++) {
        stream_pkt(0, i);
    }
    for (uint16_t i = 0; i < BURST; i++) {
        stream_pkt(21, i);
    }
    stream_end();
    unsigned lines = occurrences("STREAMLOSS id=7 ");
    long long capped = field("STREAM id=7 dir=rx", "losses_capped");
    CHECK(field("STREAM id=7 dir=rx", "received") == 8);
    CHECK(field("STREAM id=7 dir=rx", "lost") == 80);
    CHECK(field("STREAM id=7 dir=rx", "lossy_bursts") == 20);
    CHECK(capped >= 0 && lines + (unsigned long long)capped == 20u);
    CHECK(lines >= 8u); /* the lines that fit still come */
    CHECK(strstr(test_output, "STREAMLOSS id=7 burst=1 lost=4\r\n") != NULL);
    CHECK(strstr(test_output, "STREAMLOSS id=7 burst=0 ") == NULL && strstr(test_output, "STREAMLOSS id=7 burst=21 ") == NULL);
    show_output_if_failed("stream_losses_beyond_cap", failures);
}

/* Each burst's packets sent twice or more: duplicates never count as received nor hide loss. */
static void test_stream_duplicates(void)
{
    int failures = check_failures;
    stream_begin();
    /* burst 0: all four, index 1 three times */
    stream_pkt(0, 0);
    stream_pkt(0, 1);
    stream_pkt(0, 1);
    stream_pkt(0, 2);
    stream_pkt(0, 1);
    stream_pkt(0, 3);
    /* burst 1: indexes 2 and 3 lost; 0 and 1 each arrive twice (four packets, a full burst's count) */
    stream_pkt(1, 0);
    stream_pkt(1, 0);
    stream_pkt(1, 1);
    stream_pkt(1, 1);
    /* burst 2 complete */
    for (uint16_t i = 0; i < BURST; i++) {
        stream_pkt(2, i);
    }
    stream_end();
    CHECK(field("STREAM id=7 dir=rx", "received") == 10);
    CHECK(field("STREAM id=7 dir=rx", "duplicates") == 4);
    CHECK(field("STREAM id=7 dir=rx", "lost") == 2);
    CHECK(field("STREAM id=7 dir=rx", "outoforder") == 0);
    CHECK(strstr(test_output, "STREAMLOSS id=7 burst=1 lost=2\r\n") != NULL);
    CHECK(occurrences("STREAMLOSS id=7 ") == 1);
    show_output_if_failed("stream_duplicates", failures);
}

/* Reordering: inside a burst, and a straggler of burst 1 after burst 2 began. Nothing is lost. */
static void test_stream_reordering(void)
{
    int failures = check_failures;
    stream_begin();
    stream_pkt(0, 0);
    stream_pkt(0, 2);
    stream_pkt(0, 1);
    stream_pkt(0, 3);
    stream_pkt(1, 0);
    stream_pkt(1, 1);
    stream_pkt(1, 2);
    stream_pkt(2, 0);
    stream_pkt(1, 3); /* late by one packet, still on time for its threshold */
    stream_pkt(2, 1);
    stream_pkt(2, 2);
    stream_pkt(2, 3);
    stream_end();
    CHECK(field("STREAM id=7 dir=rx", "received") == 12);
    CHECK(field("STREAM id=7 dir=rx", "outoforder") == 2);
    CHECK(field("STREAM id=7 dir=rx", "duplicates") == 0);
    CHECK(field("STREAM id=7 dir=rx", "lost") == 0);
    CHECK(field("STREAM id=7 dir=rx", "late") == 0);
    CHECK(occurrences("STREAMLOSS id=7 ") == 0);
    show_output_if_failed("stream_reordering", failures);
}

/* ---- iperf UDP server: a jump in 64-bit sequence numbers ------------------------------------- */

static void iperf_dgram(int64_t seq)
{
    uint8_t b[100] = {0};
    iperf_udp_hdr_encode(b, seq, test_now_us);
    test_put32(b + IPERF_UDP_HDR_LEN, IPERF_FLAG_EXTEND | IPERF_FLAG_SEQNO64B); /* client header: 64-bit seq */
    inject_udp(40001, FW_IPERF_DEFAULT_PORT, b, sizeof b);
    test_now_us += 1000u;
}

/* the sequence window (FW_IPERF_UDP_SEQ_WINDOW) switched off, as the host's `trust_udp_seq` plants it */
static bool seq_window_off;

static bool guard_off(enum fw_guard guard)
{
    return seq_window_off && guard == FW_GUARD_UDP_SEQ_WINDOW;
}

static const struct fw_fault_hooks hooks = {NULL, NULL, guard_off};

static void test_iperf_seq64_jump(void)
{
    int failures = check_failures;
    const int64_t jump = (int64_t)1 << 60;
    /* the guard on: a jump beyond the sequence window (and a FIN claiming it) is no datagram at all */
    test_output_reset();
    feed("iperf -s -u\r\n");
    iperf_dgram(1);
    iperf_dgram(2);
    iperf_dgram(jump);
    iperf_dgram(-(jump + 1));
    CHECK(strstr(test_output, "RESULT iperf") == NULL); /* that FIN did not end the test */
    iperf_dgram(-3); /* the real FIN: 2 sent */
    CHECK(strstr(test_output, " datagrams=2 lost=0 loss_pct=0.0000 outoforder=0 ") != NULL);
    show_output_if_failed("iperf_seq64_jump_refused", failures);
    test_now_us += 3000000u;
    fw_app_poll();
    /* the guard off: the figures after such a jump, exact in 64 bits */
    failures = check_failures;
    seq_window_off = true;
    test_output_reset();
    feed("iperf -s -u\r\n");
    CHECK(strstr(test_output, "iperf: UDP server listening on port 5001\r\n") != NULL);
    iperf_dgram(1);
    iperf_dgram(2);
    iperf_dgram(jump); /* 2^60 - 3 datagrams lost */
    iperf_dgram(-(jump + 1)); /* FIN: 2^60 sent */
    CHECK(strstr(test_output, "RESULT iperf role=server proto=udp status=ok ") != NULL);
    CHECK(strstr(test_output, " datagrams=1152921504606846976 lost=1152921504606846973 ") != NULL);
    CHECK(strstr(test_output, " loss_pct=99.9999 ") != NULL);
    show_output_if_failed("iperf_seq64_jump", failures);
    seq_window_off = false;
    failures = check_failures;
    /* a modest loss next to it: 1 of 4 */
    test_now_us += 3000000u;
    fw_app_poll();
    test_output_reset();
    feed("iperf -s -u\r\n");
    iperf_dgram(1);
    iperf_dgram(2);
    iperf_dgram(4);
    iperf_dgram(-5);
    CHECK(strstr(test_output, " datagrams=4 lost=1 loss_pct=25.0000 ") != NULL);
    show_output_if_failed("iperf_loss_1_of_4", failures);
    test_now_us += 3000000u;
    fw_app_poll();
}

/* ---- iperf pacing: a day at 1 Gbit/s ----------------------------------------------------------- */

static void test_pacing_day(uint64_t bandwidth)
{
    struct iperf_run run;
    memset(&run, 0, sizeof run);
    run.cfg.bandwidth = bandwidth; /* bit/s */
    run.result.start_us = 5000000u;
    const uint64_t start = run.result.start_us;
    const uint64_t day_us = 86400ull * 1000000u;
    const uint64_t bytes_per_s = bandwidth / 8u;
    const uint64_t day_bytes = bytes_per_s * 86400u;
    int failures = check_failures;
    CHECK(iperf_paced_next_us(&run, day_bytes) == start + day_us);
    CHECK(iperf_paced_next_us(&run, day_bytes + bytes_per_s) == start + day_us + 1000000u);
    CHECK(iperf_paced_allowance(&run, 0, start + day_us) == day_bytes);
    CHECK(iperf_paced_allowance(&run, day_bytes - 1470u, start + day_us) == 1470u);
    CHECK(iperf_paced_allowance(&run, day_bytes, start + day_us) == 0);
    /* every whole second of the day: next send time exact and monotonic, allowance exact */
    uint64_t prev = 0;
    unsigned bad_next = 0;
    unsigned bad_allow = 0;
    for (uint64_t s = 0; s <= 86400u; s += 7u) {
        uint64_t sent = s * bytes_per_s;
        uint64_t next = iperf_paced_next_us(&run, sent);
        uint64_t mid = iperf_paced_next_us(&run, sent + bytes_per_s / 2u);
        bad_next += next != start + s * 1000000u || next < prev || mid < next || mid != start + s * 1000000u + 500000u;
        prev = mid;
        bad_allow += iperf_paced_allowance(&run, 0, start + s * 1000000u) != sent;
    }
    CHECK(bad_next == 0);
    CHECK(bad_allow == 0);
    if (check_failures != failures) {
        fprintf(stderr, "--- pacing at %llu bit/s, start %llu us: next_us(a day's bytes) = %llu (want %llu), "
                "allowance(0, t = 86400 s) = %llu (want %llu); %u of the day's seconds with a wrong next send "
                "time, %u with a wrong allowance\n",
                (unsigned long long)bandwidth, (unsigned long long)start,
                (unsigned long long)iperf_paced_next_us(&run, day_bytes), (unsigned long long)(start + day_us),
                (unsigned long long)iperf_paced_allowance(&run, 0, start + day_us), (unsigned long long)day_bytes,
                bad_next, bad_allow);
    }
}

/* ---- fw_muldiv_u64 / fw_ppm: the arithmetic under the fixes ------------------------------------ */

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void test_muldiv(void)
{
    CHECK(fw_muldiv_u64(10, 3, 4) == 7);
    CHECK(fw_muldiv_u64(0, UINT64_MAX, 1) == 0 && fw_muldiv_u64(5, 5, 0) == UINT64_MAX);
    CHECK(fw_muldiv_u64(1080000000000000ull, 8000000u, 100000000000ull) == 86400000000ull);
    CHECK(fw_muldiv_u64(UINT64_MAX, UINT64_MAX, UINT64_MAX) == UINT64_MAX);
    CHECK(fw_muldiv_u64(UINT64_MAX, 2, 3) == 0xAAAAAAAAAAAAAAAAull);
    CHECK(fw_muldiv_u64(UINT64_MAX, 2, 1) == UINT64_MAX); /* the quotient does not fit: saturated */
    CHECK(fw_muldiv_u64((uint64_t)1 << 63, 4, 2) == UINT64_MAX);
    CHECK(fw_muldiv_u64((uint64_t)1 << 63, 2, 2) == (uint64_t)1 << 63);
    CHECK(fw_ppm(((uint64_t)1 << 60) - 3u, (uint64_t)1 << 60) == 999999u);
    CHECK(fw_ppm(UINT64_MAX, UINT64_MAX) == 1000000u && fw_ppm(1, 4) == 250000u && fw_ppm(7, 0) == 0);
#ifdef __SIZEOF_INT128__
    /* against the compiler's 128-bit arithmetic, operands of every size */
    uint64_t x = 88172645463325252ull;
    unsigned bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t a = xorshift(&x) >> (xorshift(&x) % 64u);
        uint64_t b = xorshift(&x) >> (xorshift(&x) % 64u);
        uint64_t d = xorshift(&x) >> (xorshift(&x) % 64u);
        if (d == 0) {
            continue;
        }
        unsigned __int128 q = (unsigned __int128)a * b / d;
        uint64_t want = q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
        bad += fw_muldiv_u64(a, b, d) != want;
    }
    CHECK(bad == 0);
#endif
    /* a rate whose bytes x 8000 passes 2^64: 3e15 bytes over 1e6 s is 24 Gbit/s */
    char buf[32];
    CHECK(strcmp(fw_fmt_mbps(buf, sizeof buf, 3000000000000000ull, 1000000000000ull), "24000.000") == 0);
}

int main(void)
{
    lwip_init();
    test_netif_add(&netif, DUT_IP, 0xffffff00u);
    fw_app_set_fault_hooks(&hooks);
    fw_app_init(&netif);

    test_stream_losses_beyond_cap();
    test_stream_duplicates();
    test_stream_reordering();
    test_iperf_seq64_jump();
    test_pacing_day(1000000000u);  /* 1 Gbit/s */
    test_pacing_day(100000000000u); /* 100 Gbit/s, the -b maximum */
    test_muldiv();
    return check_summary("test_fw_edges");
}
