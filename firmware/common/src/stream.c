#include "stream.h"

#include "fw_inttypes.h"
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "fw_config.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "fw_test_slot.h"
#include "lwip/pbuf.h"
#include "lwip/udp.h"
#include "stream_wire.h"

#define CMD "stream"

struct stream {
    bool used;
    bool tx;
    uint16_t id;
    ip_addr_t peer;
    uint16_t port;
    uint32_t size;
    uint32_t burst;
    uint64_t period_us;
    uint64_t gap_us;
    uint64_t threshold_us;
    struct udp_pcb *pcb;
    /* sender */
    uint32_t cur_burst;
    uint32_t index;
    uint64_t next_us;
    uint32_t seq;
    uint64_t sent;
    uint64_t send_errors;
    bool done;
    /* receiver: its accounting (kept apart, st_rx: its bitmaps would make a stream large) */
    struct stream_rx *rx;
};

static struct {
    struct stream s[FW_STREAM_MAX];
    bool running;
    uint64_t start_us;
    uint64_t stop_us;   /* no burst starts at or after this */
    uint64_t end_us;    /* report after the linger */
} st;

static struct stream_rx st_rx[FW_STREAM_MAX]; /* the receivers' accounting, st.s[i].rx = &st_rx[i] */

static struct stream *find(uint16_t id)
{
    for (unsigned i = 0; i < FW_STREAM_MAX; i++) {
        if (st.s[i].used && st.s[i].id == id) {
            return &st.s[i];
        }
    }
    return NULL;
}

static void release_pcbs(void)
{
    for (unsigned i = 0; i < FW_STREAM_MAX; i++) {
        if (st.s[i].pcb != NULL) {
            udp_remove(st.s[i].pcb);
            st.s[i].pcb = NULL;
        }
    }
}

static void print_losses(const struct stream *s, const struct stream_burst_loss *losses, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        fw_printf("STREAMLOSS id=%u burst=%" PRIu32 " lost=%" PRIu32 "\r\n", (unsigned)s->id, losses[i].burst,
                  losses[i].lost);
    }
}

static void rx_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)pcb;
    (void)addr;
    (void)port;
    struct stream *s = (struct stream *)arg;
    uint8_t head[STREAM_HDR_LEN];
    uint64_t now = fw_platform_time_us();
    uint16_t n = pbuf_copy_partial(p, head, sizeof head, 0);
    pbuf_free(p);
    struct stream_pkt pkt;
    if (!st.running || !stream_pkt_decode(head, n, &pkt) || pkt.id != s->id) {
        return;
    }
    struct stream_burst_loss losses[FW_STREAM_LOSS_LINES];
    print_losses(s, losses, stream_rx_account(s->rx, &pkt, now, losses, FW_STREAM_LOSS_LINES));
}

static bool parse_common(int argc, char **argv, int first, struct stream *s, char *err, unsigned size)
{
    /* first: index of SIZE; then BURST PERIOD_MS (GAP_US | THRESHOLD_MS) */
    uint32_t v;
    if (argc != first + 4) {
        snprintf(err, size, "wrong number of arguments (see help)");
        return false;
    }
    if (!fw_parse_u32(argv[first], FW_STREAM_MIN_SIZE, FW_STREAM_MAX_SIZE, &s->size)) {
        snprintf(err, size, "bad size %s (%u-%u)", argv[first], FW_STREAM_MIN_SIZE, FW_STREAM_MAX_SIZE);
        return false;
    }
    if (!fw_parse_u32(argv[first + 1], 1, FW_STREAM_MAX_BURST, &s->burst)) {
        snprintf(err, size, "bad burst %s (1-%u)", argv[first + 1], FW_STREAM_MAX_BURST);
        return false;
    }
    if (!fw_parse_u32(argv[first + 2], 1, 3600000, &v)) {
        snprintf(err, size, "bad period %s ms", argv[first + 2]);
        return false;
    }
    s->period_us = (uint64_t)v * 1000u;
    if (!fw_parse_u32(argv[first + 3], 0, 3600000000u, &v)) {
        snprintf(err, size, "bad value %s", argv[first + 3]);
        return false;
    }
    if (s->tx) {
        s->gap_us = v;
        if (s->gap_us * (s->burst - 1u) >= s->period_us) {
            snprintf(err, size, "burst of %" PRIu32 " with %" PRIu32 " us gaps does not fit the period", s->burst, v);
            return false;
        }
    } else {
        s->threshold_us = (uint64_t)v * 1000u;
    }
    return true;
}

static void cmd_add(int argc, char **argv)
{
    char err[96];
    struct stream tmp;
    memset(&tmp, 0, sizeof tmp);
    uint32_t id;
    uint32_t port;
    if (argc < 4 || (strcmp(argv[2], "tx") != 0 && strcmp(argv[2], "rx") != 0)) {
        fw_err(CMD, "usage: stream add tx|rx ID ...");
        return;
    }
    tmp.tx = argv[2][0] == 't';
    if (!fw_parse_u32(argv[3], 1, 65535, &id)) {
        fw_err(CMD, "bad stream id %s", argv[3]);
        return;
    }
    tmp.id = (uint16_t)id;
    int next = 4;
    if (tmp.tx) {
        uint32_t ip;
        if (argc < 6 || !fw_parse_ipv4(argv[4], &ip)) {
            fw_err(CMD, "bad destination address");
            return;
        }
        ip_addr_set_ip4_u32(&tmp.peer, lwip_htonl(ip));
        next = 5;
    }
    if (argc <= next || !fw_parse_u32(argv[next], 1, 65535, &port)) {
        fw_err(CMD, "bad port");
        return;
    }
    tmp.port = (uint16_t)port;
    if (!parse_common(argc, argv, next + 1, &tmp, err, sizeof err)) {
        fw_err(CMD, "%s", err);
        return;
    }
    if (st.running) {
        fw_err(CMD, "busy: streams are running");
        return;
    }
    if (find(tmp.id) != NULL) {
        fw_err(CMD, "stream %u exists (stream clear first)", (unsigned)tmp.id);
        return;
    }
    for (unsigned i = 0; i < FW_STREAM_MAX; i++) {
        if (!st.s[i].used) {
            tmp.used = true;
            st.s[i] = tmp;
            fw_printf("RESULT stream action=add id=%u dir=%s\r\n", (unsigned)tmp.id, tmp.tx ? "tx" : "rx");
            return;
        }
    }
    fw_err(CMD, "too many streams (max %u)", (unsigned)FW_STREAM_MAX);
}

static void finish(const char *status)
{
    unsigned n = 0;
    for (unsigned i = 0; i < FW_STREAM_MAX; i++) {
        struct stream *s = &st.s[i];
        if (!s->used) {
            continue;
        }
        n++;
        if (s->tx) {
            fw_printf("STREAM id=%u dir=tx sent=%" PRIu64 " bursts=%" PRIu32 " send_errors=%" PRIu64 "\r\n",
                      (unsigned)s->id, s->sent, s->cur_burst, s->send_errors);
        } else {
            struct stream_rx *rx = s->rx;
            struct stream_burst_loss losses[FW_STREAM_LOSS_LINES];
            print_losses(s, losses, stream_rx_close(rx, losses, FW_STREAM_LOSS_LINES));
            fw_printf("STREAM id=%u dir=rx received=%" PRIu64 " outoforder=%" PRIu64 " late=%" PRIu64
                      " last_burst=%" PRIu32 " lost=%" PRIu64 " lossy_bursts=%" PRIu64 " losses_capped=%" PRIu64
                      " duplicates=%" PRIu64 " stale=%" PRIu64 " invalid=%" PRIu64 "\r\n",
                      (unsigned)s->id, rx->received, rx->outoforder, rx->late, rx->cur_burst, rx->lost,
                      rx->lossy_bursts, rx->losses_capped, rx->duplicates, rx->stale, rx->invalid);
        }
    }
    release_pcbs();
    st.running = false;
    fw_test_release("stream");
    fw_printf("RESULT stream status=%s streams=%u duration_us=%" PRIu64 "\r\n", status, n,
              fw_platform_time_us() - st.start_us);
}

static void cmd_start(int argc, char **argv)
{
    uint32_t ms;
    uint32_t delay_ms = 0;
    if ((argc != 3 && argc != 4) || !fw_parse_seconds_ms(argv[2], 100, 86400000u, &ms)) {
        fw_err(CMD, "usage: stream start SECONDS (0.1-86400) [DELAY_MS (0-%u)]", (unsigned)FW_STREAM_MAX_START_DELAY_MS);
        return;
    }
    /* DELAY_MS: the receivers listen at once, the senders begin this much later (two DUTs started
     * one after the other through their consoles each listen before either sends) */
    if (argc == 4 && !fw_parse_u32(argv[3], 0, FW_STREAM_MAX_START_DELAY_MS, &delay_ms)) {
        fw_err(CMD, "bad start delay %s ms (0-%u)", argv[3], (unsigned)FW_STREAM_MAX_START_DELAY_MS);
        return;
    }
    unsigned n = 0;
    for (unsigned i = 0; i < FW_STREAM_MAX; i++) {
        n += st.s[i].used ? 1u : 0u;
    }
    if (n == 0) {
        fw_err(CMD, "no streams configured (stream add ...)");
        return;
    }
    if (!fw_test_claim(CMD, "stream", "stream")) {
        return;
    }
    uint64_t now = fw_platform_time_us() + (uint64_t)delay_ms * 1000u; /* the senders' first burst */
    for (unsigned i = 0; i < FW_STREAM_MAX; i++) {
        struct stream *s = &st.s[i];
        if (!s->used) {
            continue;
        }
        s->pcb = udp_new_ip_type(IPADDR_TYPE_V4);
        err_t err = s->pcb == NULL ? ERR_MEM : ERR_OK;
        if (err == ERR_OK && s->tx) {
            err = udp_connect(s->pcb, &s->peer, s->port);
        } else if (err == ERR_OK) {
            err = udp_bind(s->pcb, IP_ANY_TYPE, s->port);
            udp_recv(s->pcb, rx_recv, s);
        }
        if (err != ERR_OK) {
            release_pcbs();
            fw_test_release("stream");
            fw_err(CMD, "cannot open UDP port %u for stream %u", (unsigned)s->port, (unsigned)s->id);
            return;
        }
        s->cur_burst = 0;
        s->index = 0;
        s->seq = 0;
        s->sent = 0;
        s->send_errors = 0;
        s->done = false;
        s->next_us = now;
        s->rx = &st_rx[i];
        stream_rx_init(s->rx, s->id, s->burst, s->period_us, s->threshold_us);
    }
    st.running = true;
    st.start_us = now;
    st.stop_us = now + (uint64_t)ms * 1000u;
    st.end_us = st.stop_us + FW_STREAM_LINGER_MS * 1000u;
    fw_printf("stream: %u streams running for %" PRIu32 " ms, sending in %" PRIu32 " ms\r\n", n, ms, delay_ms);
}

static void stream_command(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "add") == 0) {
        cmd_add(argc, argv);
    } else if (argc == 2 && strcmp(argv[1], "clear") == 0) {
        if (st.running) {
            fw_err(CMD, "busy: streams are running (stream -a first)");
            return;
        }
        memset(&st, 0, sizeof st);
        fw_printf("RESULT stream action=clear\r\n");
    } else if (argc >= 2 && strcmp(argv[1], "start") == 0) {
        cmd_start(argc, argv);
    } else if (argc == 2 && (strcmp(argv[1], "-a") == 0 || strcmp(argv[1], "--abort") == 0)) {
        if (st.running) {
            finish("aborted");
        }
        fw_printf("RESULT stream action=abort\r\n");
    } else {
        fw_err(CMD, "usage: stream add|start|clear|-a (see help)");
    }
}

static void send_one(struct stream *s, uint64_t now)
{
    struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)s->size, PBUF_RAM);
    if (p == NULL) {
        s->send_errors++;
        return;
    }
    memset(p->payload, 0, p->len);
    struct stream_pkt pkt = {s->id, (uint16_t)s->index, s->cur_burst, s->seq, now};
    stream_pkt_encode((uint8_t *)p->payload, &pkt);
    if (udp_send(s->pcb, p) == ERR_OK) {
        s->sent++;
    } else {
        s->send_errors++;
    }
    pbuf_free(p);
    s->seq++;
}

static void stream_poll(uint64_t now)
{
    if (!st.running) {
        return;
    }
    for (unsigned i = 0; i < FW_STREAM_MAX; i++) {
        struct stream *s = &st.s[i];
        while (s->used && s->tx && !s->done && now >= s->next_us) {
            uint64_t burst_start = st.start_us + (uint64_t)s->cur_burst * s->period_us;
            if (s->index == 0 && burst_start >= st.stop_us) {
                s->done = true;
                break;
            }
            send_one(s, now);
            s->index++;
            if (s->index == s->burst) {
                s->index = 0;
                s->cur_burst++;
                s->next_us = st.start_us + (uint64_t)s->cur_burst * s->period_us;
            } else {
                s->next_us = burst_start + (uint64_t)s->index * s->gap_us;
            }
        }
    }
    if (now >= st.end_us) {
        finish("ok");
    }
}

static uint64_t stream_next_deadline_us(void)
{
    if (!st.running) {
        return UINT64_MAX;
    }
    uint64_t next = st.end_us;
    for (unsigned i = 0; i < FW_STREAM_MAX; i++) {
        const struct stream *s = &st.s[i];
        if (s->used && s->tx && !s->done && s->next_us < next) {
            next = s->next_us;
        }
    }
    return next;
}

static const struct fw_cmd stream_cmds[] = {
    {"stream", "add tx ID IP PORT SIZE BURST PERIOD_MS GAP_US | add rx ID PORT SIZE BURST PERIOD_MS THRESHOLD_MS | start S [DELAY_MS] | clear | -a",
     "bursty multi-stream UDP: configure streams, run them, report per-stream counts and lost bursts", stream_command},
};

const struct fw_module stream_module = {stream_cmds, sizeof stream_cmds / sizeof stream_cmds[0], stream_poll, stream_next_deadline_us};
