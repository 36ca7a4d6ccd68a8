/*
 * Unit tests: the host port's planted defects (host/src/fault_inject.c, fault_plan.c) inside the
 * whole application with the test clock: none active by default; the ppm choice is exact and
 * even; pure TCP ACKs are told from data, SYN and FIN; frames to send are dropped or held and go
 * out in order when due (latency, ACK delay, clumps); a reordered received frame reaches the
 * stack after the next ones; CPU is spent per frame; the UDP rate and leak hooks; each guard
 * defect switches its own guard off (fw_guard_on), fdb_never_moves only in the bridge build (this
 * one refuses it); the console command checks its arguments and `clear` removes everything.
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fault_inject.h"
#include "fault_plan.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "lwip/init.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "test_platform.h"

static uint8_t delivered[64];
static unsigned delivered_count;

/* the tap driver's delivery (tapif.c on the host): the test records the frame's tag (byte 0) */
void tapif_deliver(struct netif *netif, const uint8_t *frame, size_t len)
{
    (void)netif;
    (void)len;
    if (delivered_count < sizeof delivered) {
        delivered[delivered_count] = frame[0];
    }
    delivered_count++;
}

static void feed(const char *s)
{
    fw_app_console_input(s, strlen(s));
}

static void advance_to(uint64_t t)
{
    test_now_us = t;
    fw_app_poll();
}

/* an Ethernet + IPv4 + TCP frame with `flags` and `payload` bytes of data, tagged in byte 0 */
static size_t tcp_frame(uint8_t *f, uint8_t tag, uint8_t flags, size_t payload)
{
    memset(f, 0, 128);
    f[0] = tag;
    f[12] = 0x08;
    f[13] = 0x00;
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    test_put16(ip + 2, (uint16_t)(20 + 20 + payload));
    ip[9] = 6;
    uint8_t *tcp = ip + 20;
    tcp[12] = 5 << 4;
    tcp[13] = flags;
    return 14 + 20 + 20 + payload;
}

/* what the "tap" holds: the tags of the frames written, in order */
static size_t written(int rd, uint8_t *tags, size_t max)
{
    uint8_t buf[2048];
    size_t n = 0;
    ssize_t r;
    while ((r = read(rd, buf, sizeof buf)) > 0 && n < max) {
        tags[n++] = buf[0];
    }
    return n;
}

static uint64_t real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int main(void)
{
    /* the pure parts: names, the every-Nth choice, pure ACKs */
    CHECK(fault_find("tx_work_us") == FAULT_TX_WORK_US && fault_find("nope") == -1);
    uint32_t acc = 0;
    unsigned hits = 0;
    for (int i = 0; i < 1000000; i++) {
        hits += fault_ppm_hit(&acc, 5000);
    }
    CHECK(hits == 5000); /* exactly 0.5 % */
    acc = 0;
    CHECK(!fault_ppm_hit(&acc, 0) && acc == 0);
    acc = 0;
    hits = 0;
    for (int i = 0; i < 10; i++) {
        hits += fault_ppm_hit(&acc, 1000000); /* every frame */
    }
    CHECK(hits == 10);
    uint8_t f[2048];
    CHECK(fault_is_pure_tcp_ack(f, tcp_frame(f, 1, 0x10, 0)));
    CHECK(!fault_is_pure_tcp_ack(f, tcp_frame(f, 1, 0x18, 100))); /* data */
    CHECK(!fault_is_pure_tcp_ack(f, tcp_frame(f, 1, 0x12, 0)));   /* SYN-ACK */
    CHECK(!fault_is_pure_tcp_ack(f, tcp_frame(f, 1, 0x11, 0)));   /* FIN-ACK */
    CHECK(!fault_is_pure_tcp_ack(f, 30));                         /* too short */
    size_t n = tcp_frame(f, 1, 0x10, 0);
    f[14 + 9] = 17; /* UDP */
    CHECK(!fault_is_pure_tcp_ack(f, n));

    lwip_init();
    static struct netif netif;
    test_netif_add(&netif, 0x0a4d0002u, 0xffffff00u);
    CHECK(fault_inject_install());
    fw_app_init(&netif);
    int pipefd[2]; /* a datagram pair keeps each frame apart, as a tap does */
    CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, pipefd) == 0);
    const int rd = pipefd[0], wr = pipefd[1];
    uint8_t tags[64];

    /* nothing planted: every frame passes, no deadline, the reply says none */
    test_output_reset();
    feed("fault\r\n");
    CHECK(strstr(test_output, "RESULT fault tx_work_us=0 ") != NULL && strstr(test_output, " planted=0 ") != NULL);
    CHECK(!fault_on_send(wr, f, tcp_frame(f, 1, 0x10, 0)));
    CHECK(!fault_on_receive(&netif, f, n));
    CHECK(fw_app_poll_delay_us() == UINT64_MAX);
    const struct fw_fault_hooks *hooks = fw_app_fault_hooks();
    CHECK(hooks != NULL && hooks->udp_rate_pct() == 0);

    /* bad arguments: one error each, nothing planted */
    test_output_reset();
    feed("fault bogus 1\r\n");
    CHECK(strstr(test_output, "ERR fault") != NULL && strstr(test_output, "unknown defect bogus") != NULL);
    test_output_reset();
    feed("fault tx_drop_ppm 2000000\r\n");
    CHECK(strstr(test_output, "ERR fault") != NULL && strstr(test_output, "takes 0-1000000") != NULL);
    test_output_reset();
    feed("fault tx_drop_ppm\r\n");
    CHECK(strstr(test_output, "usage: fault") != NULL);

    /* send loss: a quarter of the frames, counted by the reply */
    feed("fault tx_drop_ppm 250000\r\n");
    unsigned taken = 0;
    for (uint8_t i = 0; i < 8; i++) {
        taken += fault_on_send(wr, f, tcp_frame(f, i, 0x18, 10));
    }
    CHECK(taken == 2);
    test_output_reset();
    feed("fault\r\n");
    CHECK(strstr(test_output, "tx_drop_ppm=250000") != NULL && strstr(test_output, " planted=1 ") != NULL);
    CHECK(strstr(test_output, " dropped_tx=2 ") != NULL);
    feed("fault clear\r\n");

    /* latency: every frame held 1 ms, written in order when due; the deadline is the first's */
    feed("fault latency_us 1000\r\n");
    uint64_t t0 = test_now_us;
    for (uint8_t i = 10; i < 13; i++) {
        CHECK(fault_on_send(wr, f, tcp_frame(f, i, 0x18, 10)));
        test_now_us += 100;
    }
    CHECK(fw_app_poll_delay_us() <= 1000 - 300 + 1);
    advance_to(t0 + 999);
    CHECK(written(rd, tags, 64) == 0);
    advance_to(t0 + 1100);
    CHECK(written(rd, tags, 64) == 2 && tags[0] == 10 && tags[1] == 11);
    advance_to(t0 + 1200);
    CHECK(written(rd, tags, 64) == 1 && tags[0] == 12);
    feed("fault clear\r\n");

    /* ACK delay: pure ACKs held, data behind a held ACK waits its turn (no reordering) */
    feed("fault ack_delay_us 500\r\n");
    t0 = test_now_us;
    CHECK(fault_on_send(wr, f, tcp_frame(f, 20, 0x10, 0)));
    CHECK(fault_on_send(wr, f, tcp_frame(f, 21, 0x18, 10))); /* behind the ACK */
    advance_to(t0 + 499);
    CHECK(written(rd, tags, 64) == 0);
    advance_to(t0 + 500);
    CHECK(written(rd, tags, 64) == 2 && tags[0] == 20 && tags[1] == 21);
    CHECK(!fault_on_send(wr, f, tcp_frame(f, 22, 0x18, 10))); /* nothing held: data goes at once */
    feed("fault clear\r\n");

    /* ACK loss: every other pure ACK, never data */
    feed("fault ack_drop_ppm 500000\r\n");
    taken = 0;
    for (uint8_t i = 0; i < 4; i++) {
        taken += fault_on_send(wr, f, tcp_frame(f, i, 0x10, 0));
        CHECK(!fault_on_send(wr, f, tcp_frame(f, i, 0x18, 10)));
    }
    CHECK(taken == 2);
    feed("fault clear\r\n");

    /* clumps: frames within a 2-ms window go out together at its end */
    feed("fault tx_clump_us 2000\r\n");
    t0 = test_now_us;
    CHECK(fault_on_send(wr, f, tcp_frame(f, 30, 0x18, 10)));
    test_now_us = t0 + 1500;
    CHECK(fault_on_send(wr, f, tcp_frame(f, 31, 0x18, 10)));
    advance_to(t0 + 1999);
    CHECK(written(rd, tags, 64) == 0);
    advance_to(t0 + 2000);
    CHECK(written(rd, tags, 64) == 2 && tags[0] == 30 && tags[1] == 31);
    feed("fault clear\r\n");

    /* silent receive loss: taken and counted as received, never delivered */
    feed("fault rx_drop_ppm 1000000\r\n");
    const uint32_t recv_before = lwip_stats.link.recv;
    CHECK(fault_on_receive(&netif, f, n));
    CHECK(lwip_stats.link.recv == recv_before + 1 && delivered_count == 0);
    feed("fault clear\r\n");

    /* reordering: the held frame reaches the stack after FW_FAULT_REORDER_DISTANCE more */
    feed("fault rx_reorder_ppm 1000000\r\n");
    f[0] = 40;
    CHECK(fault_on_receive(&netif, f, n)); /* held */
    feed("fault rx_reorder_ppm 0\r\n");     /* the next ones pass */
    for (uint8_t i = 0; i < FW_FAULT_REORDER_DISTANCE; i++) {
        f[0] = (uint8_t)(41 + i);
        CHECK(!fault_on_receive(&netif, f, n));
        tapif_deliver(&netif, f, n);
        fault_after_receive();
    }
    CHECK(delivered_count == FW_FAULT_REORDER_DISTANCE + 1 && delivered[FW_FAULT_REORDER_DISTANCE] == 40);
    CHECK(delivered[0] == 41);
    /* a lone held frame goes after FW_FAULT_REORDER_MAX_US */
    delivered_count = 0;
    feed("fault rx_reorder_ppm 1000000\r\n");
    f[0] = 50;
    CHECK(fault_on_receive(&netif, f, n));
    advance_to(test_now_us + FW_FAULT_REORDER_MAX_US);
    CHECK(delivered_count == 1 && delivered[0] == 50);
    feed("fault clear\r\n");

    /* CPU per frame: spent on the real clock */
    feed("fault tx_work_us 2000\r\n");
    uint64_t r0 = real_us();
    (void)fault_on_send(wr, f, tcp_frame(f, 60, 0x18, 10));
    CHECK(real_us() - r0 >= 2000);
    feed("fault clear\r\n");
    feed("fault rx_work_us 2000\r\n");
    r0 = real_us();
    CHECK(!fault_on_receive(&netif, f, n));
    CHECK(real_us() - r0 >= 2000);
    feed("fault clear\r\n");
    (void)written(rd, tags, 64);

    /* the UDP client's rate, and buffers leaked per test */
    feed("fault udp_rate_pct 92\r\n");
    CHECK(hooks->udp_rate_pct() == 92);
    feed("fault leak_per_test 3\r\n");
    const unsigned used_before = (unsigned)lwip_stats.memp[MEMP_PBUF_POOL]->used;
    hooks->test_finished();
    hooks->test_finished();
    CHECK(fw_app_poll_delay_us() == 0); /* taken at the next poll */
    advance_to(test_now_us);
    CHECK((unsigned)lwip_stats.memp[MEMP_PBUF_POOL]->used == used_before + 6);
    test_output_reset();
    feed("fault\r\n");
    CHECK(strstr(test_output, " leaked=6") != NULL && strstr(test_output, " planted=2 ") != NULL);

    /* the guards against hostile traffic: each defect switches its guard off, none other; 0-1 */
    feed("fault clear\r\n");
    for (int g = 0; g < FW_GUARD_COUNT; g++) {
        CHECK(fw_guard_on((enum fw_guard)g));
    }
    static const struct {
        const char *name;
        enum fw_guard guard;
    } guard_defects[] = {
        {"trust_ping_replies", FW_GUARD_PING_REPLIES},   {"answer_any_fin", FW_GUARD_UDP_LINGER_PEER},
        {"keep_first_sender", FW_GUARD_UDP_TAKEOVER},    {"trust_udp_seq", FW_GUARD_UDP_SEQ_WINDOW},
        {"hold_half_open", FW_GUARD_TCP_HALF_OPEN},      {"keep_silent_clients", FW_GUARD_TCP_SILENT_CLIENT},
        {"wait_closed_window", FW_GUARD_TCP_PEER_STALL}, {"trust_arp_changes", FW_GUARD_ARP_CHANGES},
        {"fdb_never_moves", FW_GUARD_FDB_MOVES},          {"evict_arp_for_syn", FW_GUARD_SYN_UNRESOLVED},
        {"take_data_acking_unsent", FW_GUARD_TCP_ACK_UNSENT},
    };
    CHECK(sizeof guard_defects / sizeof guard_defects[0] == FW_GUARD_COUNT);
    for (size_t i = 0; i < sizeof guard_defects / sizeof guard_defects[0]; i++) {
        char line[64];
        snprintf(line, sizeof line, "fault %s 1\r\n", guard_defects[i].name);
        test_output_reset();
        feed(line);
        if (guard_defects[i].guard == FW_GUARD_FDB_MOVES) {
            /* the bridge build's own (its address table); this build (no FW_BRIDGE) refuses it */
            CHECK(strstr(test_output, "ERR fault fdb_never_moves is the bridge build's (host-bridge)") != NULL);
            CHECK(fw_guard_on(FW_GUARD_FDB_MOVES));
            feed("fault fdb_never_moves 0\r\n");
            CHECK(strstr(test_output, " fdb_never_moves=0 evict_arp_for_syn=0 take_data_acking_unsent=0 planted=0 ") != NULL);
            continue;
        }
        CHECK(strstr(test_output, " planted=1 ") != NULL);
        for (int g = 0; g < FW_GUARD_COUNT; g++) {
            CHECK(fw_guard_on((enum fw_guard)g) == (g != (int)guard_defects[i].guard));
        }
        snprintf(line, sizeof line, "fault %s 2\r\n", guard_defects[i].name);
        test_output_reset();
        feed(line);
        CHECK(strstr(test_output, "ERR fault") != NULL && strstr(test_output, "takes 0-1") != NULL);
        snprintf(line, sizeof line, "fault %s 0\r\n", guard_defects[i].name);
        feed(line);
        CHECK(fw_guard_on(guard_defects[i].guard));
    }
    test_output_reset();
    feed("fault\r\n");
    CHECK(strstr(test_output, " leak_per_test=0 trust_ping_replies=0 answer_any_fin=0 keep_first_sender=0 "
                              "trust_udp_seq=0 hold_half_open=0 keep_silent_clients=0 wait_closed_window=0 "
                              "trust_arp_changes=0 fdb_never_moves=0 evict_arp_for_syn=0 "
                              "take_data_acking_unsent=0 planted=0 ") != NULL);

    /* a stall: the firmware stops for its length once per period */
    feed("fault clear\r\n");
    feed("fault stall_every_ms 10\r\n");
    feed("fault stall_ms 3\r\n");
    advance_to(test_now_us); /* schedules the first */
    advance_to(test_now_us + 10000);
    r0 = real_us();
    advance_to(test_now_us + 1);
    test_output_reset();
    feed("fault\r\n");
    CHECK(strstr(test_output, " stalls=") != NULL);
    feed("fault clear\r\n");
    test_output_reset();
    feed("fault\r\n");
    CHECK(strstr(test_output, " planted=0 ") != NULL);
    CHECK(fw_app_poll_delay_us() == UINT64_MAX);
    close(rd);
    close(wr);
    return check_summary("fault_inject");
}
