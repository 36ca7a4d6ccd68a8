/* fault_inject.c - the host port's planted defects (fault_inject.h). */
#define _GNU_SOURCE
#include "fault_inject.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault_plan.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_console.h"
#include "fw_fault_hooks.h"
#include "fw_inttypes.h"
#include "fw_module.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"

#define FRAME_MAX 1518

struct held_frame {
    int fd;
    uint16_t len;
    uint64_t due_us;
    uint8_t bytes[FRAME_MAX];
};

static struct {
    uint32_t value[FAULT_COUNT];
    /* every-Nth accumulators of the ppm defects */
    uint32_t tx_drop_acc, rx_drop_acc, rx_reorder_acc, ack_drop_acc, rx_ack_drop_acc;
    /* frames to send held (latency, ACK delay, clumps), in the order they go out */
    struct held_frame held[FW_FAULT_HOLD_SLOTS];
    unsigned head, count;
    uint64_t clump_end_us; /* the open clump's end; 0: none open */
    /* the one received frame held back (reordering) */
    struct netif *reorder_netif;
    uint8_t reorder_bytes[FRAME_MAX];
    size_t reorder_len; /* 0: none held */
    unsigned reorder_after; /* frames delivered since it was held */
    uint64_t reorder_since_us;
    uint64_t next_stall_us; /* 0: not scheduled yet */
    /* what the planted defects did, for the reply */
    uint32_t dropped_tx, dropped_rx, reordered, acks_held, acks_dropped, frames_held, hold_overflow, stalls;
    struct pbuf *leaked[FW_PBUF_POOL_SIZE];
    unsigned leaked_count;
    uint32_t leak_pending; /* buffers to leak at the next poll, once the frame being handled is freed */
} f;

_Static_assert((FW_FAULT_HOLD_SLOTS & (FW_FAULT_HOLD_SLOTS - 1)) == 0, "FW_FAULT_HOLD_SLOTS must be a power of two");

static uint64_t cpu_clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void spend_cpu_us(uint32_t us)
{
    if (us == 0) {
        return;
    }
    const uint64_t until = cpu_clock_us() + us;
    while (cpu_clock_us() < until) {
        /* the defect: CPU spent for nothing, as a slow driver or a copy too many would */
    }
}

static void write_frame(int fd, const uint8_t *bytes, size_t len)
{
    ssize_t n;
    do {
        n = write(fd, bytes, len);
    } while (n < 0 && errno == EINTR);
    /* a frame the tap refuses is lost as it would be without the hold */
}

static void release_due(uint64_t now_us)
{
    while (f.count > 0 && f.held[f.head].due_us <= now_us) {
        const struct held_frame *h = &f.held[f.head];
        write_frame(h->fd, h->bytes, h->len);
        f.head = (f.head + 1u) & (FW_FAULT_HOLD_SLOTS - 1u);
        f.count--;
    }
    if (f.count == 0 && f.clump_end_us != 0 && f.clump_end_us <= now_us) {
        f.clump_end_us = 0;
    }
}

/* Holds a frame to send until `due_us`; false when every slot is taken (it goes out now). */
static bool hold(int fd, const uint8_t *frame, size_t len, uint64_t due_us)
{
    if (f.count == FW_FAULT_HOLD_SLOTS || len > FRAME_MAX) {
        f.hold_overflow++;
        return false;
    }
    struct held_frame *h = &f.held[(f.head + f.count) & (FW_FAULT_HOLD_SLOTS - 1u)];
    h->fd = fd;
    h->len = (uint16_t)len;
    h->due_us = due_us;
    memcpy(h->bytes, frame, len);
    f.count++;
    f.frames_held++;
    return true;
}

bool fault_on_send(int fd, const uint8_t *frame, size_t len)
{
    spend_cpu_us(f.value[FAULT_TX_WORK_US]);
    if (fault_ppm_hit(&f.tx_drop_acc, f.value[FAULT_TX_DROP_PPM])) {
        f.dropped_tx++;
        return true;
    }
    const bool ack = fault_is_pure_tcp_ack(frame, len);
    if (ack && fault_ppm_hit(&f.ack_drop_acc, f.value[FAULT_ACK_DROP_PPM])) {
        f.acks_dropped++;
        return true;
    }
    const uint64_t now = fw_platform_time_us();
    uint64_t due = 0;
    if (f.value[FAULT_LATENCY_US] != 0) {
        due = now + f.value[FAULT_LATENCY_US];
    } else if (f.value[FAULT_TX_CLUMP_US] != 0) {
        if (f.clump_end_us == 0 || f.clump_end_us <= now) {
            f.clump_end_us = now + f.value[FAULT_TX_CLUMP_US];
        }
        due = f.clump_end_us;
    } else if (ack && f.value[FAULT_ACK_DELAY_US] != 0) {
        due = now + f.value[FAULT_ACK_DELAY_US];
        f.acks_held++;
    } else if (f.count > 0) {
        due = now; /* behind frames still held: after them, in order */
    }
    return due != 0 && hold(fd, frame, len, due);
}

bool fault_on_receive(struct netif *netif, const uint8_t *frame, size_t len)
{
    spend_cpu_us(f.value[FAULT_RX_WORK_US]);
    if (fault_ppm_hit(&f.rx_drop_acc, f.value[FAULT_RX_DROP_PPM])) {
        f.dropped_rx++;
        LINK_STATS_INC(link.recv); /* silent: the driver says it received the frame */
        return true;
    }
    if (fault_is_pure_tcp_ack(frame, len) && fault_ppm_hit(&f.rx_ack_drop_acc, f.value[FAULT_ACK_DROP_PPM])) {
        f.acks_dropped++;
        LINK_STATS_INC(link.recv);
        return true;
    }
    if (f.reorder_len == 0 && len <= FRAME_MAX && fault_ppm_hit(&f.rx_reorder_acc, f.value[FAULT_RX_REORDER_PPM])) {
        memcpy(f.reorder_bytes, frame, len);
        f.reorder_len = len;
        f.reorder_netif = netif;
        f.reorder_after = 0;
        f.reorder_since_us = fw_platform_time_us();
        f.reordered++;
        return true;
    }
    return false;
}

static void deliver_reordered(void)
{
    size_t len = f.reorder_len;
    f.reorder_len = 0;
    tapif_deliver(f.reorder_netif, f.reorder_bytes, len);
}

void fault_after_receive(void)
{
    if (f.reorder_len != 0 && ++f.reorder_after >= FW_FAULT_REORDER_DISTANCE) {
        deliver_reordered();
    }
}

static void test_finished(void)
{
    f.leak_pending += f.value[FAULT_LEAK_PER_TEST]; /* taken at the next poll: the test's last frame is freed by then */
}

static void take_pending_leaks(void)
{
    for (; f.leak_pending > 0 && f.leaked_count < FW_PBUF_POOL_SIZE; f.leak_pending--) {
        struct pbuf *p = pbuf_alloc(PBUF_RAW, FW_PBUF_POOL_BUFSIZE / 2, PBUF_POOL);
        if (p == NULL) {
            break;
        }
        f.leaked[f.leaked_count++] = p; /* the defect: never freed */
    }
    f.leak_pending = 0;
}

static void stall(uint64_t now_us)
{
    const uint32_t ms = f.value[FAULT_STALL_MS], every = f.value[FAULT_STALL_EVERY_MS];
    if (ms == 0 || every == 0) {
        return;
    }
    if (f.next_stall_us == 0) {
        f.next_stall_us = now_us + (uint64_t)every * 1000u;
        return;
    }
    if (now_us < f.next_stall_us) {
        return;
    }
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    f.stalls++;
    f.next_stall_us += (uint64_t)every * 1000u;
    if (f.next_stall_us <= fw_platform_time_us()) { /* a period shorter than the stall: the next from now */
        f.next_stall_us = fw_platform_time_us() + (uint64_t)every * 1000u;
    }
}

static void poll(uint64_t now_us)
{
    take_pending_leaks();
    stall(now_us);
    release_due(fw_platform_time_us());
    if (f.reorder_len != 0 && fw_platform_time_us() - f.reorder_since_us >= FW_FAULT_REORDER_MAX_US) {
        deliver_reordered(); /* fewer frames came after it */
    }
}

static uint64_t next_deadline_us(void)
{
    uint64_t next = UINT64_MAX;
    if (f.count > 0) {
        next = f.held[f.head].due_us;
    }
    if (f.reorder_len != 0 && f.reorder_since_us + FW_FAULT_REORDER_MAX_US < next) {
        next = f.reorder_since_us + FW_FAULT_REORDER_MAX_US;
    }
    if (f.leak_pending != 0) {
        next = 0;
    }
    if (f.value[FAULT_STALL_MS] != 0 && f.value[FAULT_STALL_EVERY_MS] != 0) {
        uint64_t stall_at = f.next_stall_us != 0 ? f.next_stall_us : 1;
        next = stall_at < next ? stall_at : next;
    }
    return next;
}

static uint32_t udp_rate_pct(void)
{
    return f.value[FAULT_UDP_RATE_PCT];
}

static bool guard_off(enum fw_guard guard)
{
    for (int i = 0; i < FAULT_COUNT; i++) {
        if (fault_guard(i) == (int)guard) {
            return f.value[i] != 0;
        }
    }
    return false;
}

static unsigned planted(void)
{
    unsigned n = 0;
    for (int i = 0; i < FAULT_COUNT; i++) {
        n += f.value[i] != 0;
    }
    return n;
}

static void reply(void)
{
    fw_printf("RESULT fault");
    for (int i = 0; i < FAULT_COUNT; i++) {
        fw_printf(" %s=%" PRIu32, fault_defs[i].name, f.value[i]);
    }
    fw_printf(" planted=%u dropped_tx=%" PRIu32 " dropped_rx=%" PRIu32 " reordered=%" PRIu32 " acks_held=%" PRIu32
              " acks_dropped=%" PRIu32 " frames_held=%" PRIu32 " hold_overflow=%" PRIu32 " stalls=%" PRIu32
              " leaked=%u\r\n",
              planted(), f.dropped_tx, f.dropped_rx, f.reordered, f.acks_held, f.acks_dropped, f.frames_held,
              f.hold_overflow, f.stalls, f.leaked_count);
}

static void reset_schedule(void)
{
    f.tx_drop_acc = f.rx_drop_acc = f.rx_reorder_acc = f.ack_drop_acc = f.rx_ack_drop_acc = 0;
    f.next_stall_us = 0;
}

static void cmd_fault(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "clear") == 0) {
        memset(f.value, 0, sizeof f.value);
        reset_schedule();
        release_due(UINT64_MAX);
        if (f.reorder_len != 0) {
            deliver_reordered();
        }
    } else if (argc == 3) {
        int id = fault_find(argv[1]);
        uint32_t v = 0;
        if (id < 0) {
            fw_err("fault", "unknown defect %s (fault shows them all)", argv[1]);
            return;
        }
        if (!fw_parse_u32(argv[2], 0, fault_defs[id].max, &v)) {
            fw_err("fault", "%s takes 0-%" PRIu32 " (%s)", argv[1], fault_defs[id].max, fault_defs[id].what);
            return;
        }
#ifndef FW_BRIDGE
        if (id == FAULT_FDB_NEVER_MOVES && v != 0) { /* planted here it would change nothing: refused, not pretended */
            fw_err("fault", "%s is the bridge build's (host-bridge): this build has no address table", argv[1]);
            return;
        }
#endif
        f.value[id] = v;
        reset_schedule();
    } else if (argc != 1) {
        fw_err("fault", "usage: fault [NAME VALUE | clear]");
        return;
    }
    reply();
}

static const struct fw_cmd fault_commands[] = {
    {"fault", "[NAME VALUE | clear]",
     "plant a defect on purpose (the suite's self-test: a slower, lossy or late DUT); no args: show", cmd_fault},
};

static const struct fw_module fault_module = {fault_commands, sizeof fault_commands / sizeof fault_commands[0], poll,
                                              next_deadline_us};

static const struct fw_fault_hooks hooks = {udp_rate_pct, test_finished, guard_off};

bool fault_inject_install(void)
{
    if (!fw_app_add_module(&fault_module)) {
        return false;
    }
    fw_app_set_fault_hooks(&hooks);
    return true;
}
