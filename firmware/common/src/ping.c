#include "ping.h"

#include "fw_inttypes.h"
#include <stdio.h>
#include <string.h>

#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "fw_muldiv.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "fw_test_slot.h"
#include "lwip/icmp.h"
#include "lwip/inet_chksum.h"
#include "lwip/ip4.h"
#include "lwip/prot/ip4.h"
#include "lwip/raw.h"
#include "rtt_stats.h"

#define CMD "ping"

bool ping_cmd_parse(int argc, char **argv, struct ping_config *cfg, char *err, unsigned err_size)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->count = FW_PING_DEFAULT_COUNT;
    cfg->interval_ms = FW_PING_DEFAULT_INTERVAL_MS;
    cfg->size = FW_PING_DEFAULT_SIZE;
    cfg->timeout_ms = FW_PING_DEFAULT_TIMEOUT_MS;
    bool have_target = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-a") == 0 || strcmp(a, "--abort") == 0) {
            cfg->abort = true;
            continue;
        }
        if (strcmp(a, "-q") == 0) {
            cfg->quiet = true;
            continue;
        }
        if (a[0] != '-') {
            if (have_target || !fw_parse_ipv4(a, &cfg->target)) {
                snprintf(err, err_size, "bad target %s (one IPv4 address)", a);
                return false;
            }
            have_target = true;
            continue;
        }
        if (i + 1 >= argc) {
            snprintf(err, err_size, "option %s needs a value", a);
            return false;
        }
        const char *v = argv[++i];
        bool ok;
        if (strcmp(a, "-c") == 0) {
            ok = fw_parse_u32(v, 1, FW_PING_MAX_COUNT, &cfg->count);
        } else if (strcmp(a, "-i") == 0) {
            ok = fw_parse_seconds_ms(v, 0, 60000, &cfg->interval_ms);
        } else if (strcmp(a, "-s") == 0) {
            ok = fw_parse_u32(v, 0, FW_PING_MAX_SIZE, &cfg->size);
        } else if (strcmp(a, "-W") == 0) {
            ok = fw_parse_seconds_ms(v, 1, 60000, &cfg->timeout_ms);
        } else {
            snprintf(err, err_size, "unknown option %s", a);
            return false;
        }
        if (!ok) {
            snprintf(err, err_size, "bad value %s for %s", v, a);
            return false;
        }
    }
    if (cfg->abort) {
        if (argc != 2) {
            snprintf(err, err_size, "--abort takes no other argument");
            return false;
        }
        return true;
    }
    if (!have_target) {
        snprintf(err, err_size, "need a target IPv4 address");
        return false;
    }
    return true;
}

struct ping_slot {
    uint16_t seq;
    bool pending;
    uint64_t sent_us;
};

static struct {
    bool active;
    struct ping_config cfg;
    const struct ping_printer *out;
    struct raw_pcb *pcb;
    ip_addr_t target;
    uint16_t seq;
    uint32_t sent;
    struct rtt_stats rtt; /* rtt.count: replies received */
    uint64_t first_send_us;
    uint64_t next_send_us;
    uint64_t last_send_us;
    bool last_answered;
    uint32_t rejected; /* replies with a wrong checksum or payload, never counted */
    struct ping_slot slots[FW_PING_SLOTS];
} pg;

static void ping_finish(const char *status)
{
    struct ping_summary sum = {
        .status = status,
        .target = lwip_ntohl(ip4_addr_get_u32(ip_2_ip4(&pg.target))),
        .size = pg.cfg.size,
        .sent = pg.sent,
        .received = pg.rtt.count,
        .min_us = pg.rtt.min_us,
        .mean_us = rtt_stats_mean_us(&pg.rtt),
        .max_us = pg.rtt.max_us,
        .mdev_us = rtt_stats_mdev_us(&pg.rtt),
        .elapsed_us = pg.sent ? fw_platform_time_us() - pg.first_send_us : 0,
        .last_answered = pg.last_answered,
        .rejected = pg.rejected,
    };
    if (pg.pcb != NULL) {
        raw_remove(pg.pcb);
        pg.pcb = NULL;
    }
    pg.active = false;
    fw_test_release("ping");
    if (pg.out->finish != NULL) {
        pg.out->finish(&sum);
    }
}

/*
 * Whether an echo reply (p: the IP packet, hlen its header) is intact: its ICMP checksum verifies
 * over the whole ICMP message and its payload is exactly what ping_send wrote (cfg.size bytes
 * 0, 1, 2, ...). The raw PCB sees the packet before lwIP's ICMP layer, which checks nothing of an
 * echo reply anyway, so a corrupted or forged reply would otherwise count as an answer. Moves p's
 * payload past the IP header (the caller eats p).
 */
static bool reply_intact(struct pbuf *p, u16_t hlen)
{
    if (!fw_guard_on(FW_GUARD_PING_REPLIES)) { /* a planted defect (fw_fault_hooks.h): any reply counts */
        return true;
    }
    const uint32_t want = (uint32_t)sizeof(struct icmp_echo_hdr) + pg.cfg.size;
    if (p->tot_len != hlen + want || pbuf_remove_header(p, hlen) != 0 || inet_chksum_pbuf(p) != 0) {
        return false;
    }
    for (uint32_t i = 0; i < pg.cfg.size; i++) {
        if (pbuf_get_at(p, (u16_t)(sizeof(struct icmp_echo_hdr) + i)) != (uint8_t)i) {
            return false;
        }
    }
    return true;
}

static u8_t ping_recv(void *arg, struct raw_pcb *pcb, struct pbuf *p, const ip_addr_t *addr)
{
    (void)arg;
    (void)pcb;
    uint64_t now = fw_platform_time_us();
    struct ip_hdr iph;
    struct icmp_echo_hdr echo;
    if (!pg.active || pbuf_copy_partial(p, &iph, sizeof iph, 0) != sizeof iph) {
        return 0;
    }
    u16_t hlen = (u16_t)(IPH_HL(&iph) * 4u);
    if (pbuf_copy_partial(p, &echo, sizeof echo, hlen) != sizeof echo || echo.type != ICMP_ER ||
        echo.id != PP_HTONS(FW_PING_ID) || !ip_addr_cmp(addr, &pg.target)) {
        return 0; /* not ours: let lwIP handle it */
    }
    uint16_t seq = lwip_ntohs(echo.seqno);
    struct ping_slot *s = &pg.slots[seq % FW_PING_SLOTS];
    uint8_t ttl = (uint8_t)IPH_TTL(&iph);
    uint32_t bytes = (uint32_t)(p->tot_len - hlen);
    if (!reply_intact(p, hlen)) {
        pg.rejected++; /* ours by id and address, but not what we sent: never an answer */
    } else if (s->pending && s->seq == seq) {
        s->pending = false;
        uint64_t rtt = now - s->sent_us;
        rtt_stats_add(&pg.rtt, rtt);
        if (seq == pg.seq && pg.sent == pg.cfg.count) {
            pg.last_answered = true;
        }
        if (!pg.cfg.quiet && pg.out->reply != NULL) {
            pg.out->reply(bytes, lwip_ntohl(ip4_addr_get_u32(ip_2_ip4(addr))), seq, ttl, rtt);
        }
        if (pg.cfg.interval_ms == 0) {
            pg.next_send_us = now; /* flood style: next request right away */
        }
    }
    pbuf_free(p);
    return 1;
}

static void report_timeout(uint16_t seq)
{
    if (!pg.cfg.quiet && pg.out->timeout != NULL) {
        pg.out->timeout(lwip_ntohl(ip4_addr_get_u32(ip_2_ip4(&pg.target))), seq);
    }
}

static void ping_send(uint64_t now)
{
    u16_t len = (u16_t)(sizeof(struct icmp_echo_hdr) + pg.cfg.size);
    struct pbuf *p = pbuf_alloc(PBUF_IP, len, PBUF_RAM);
    pg.seq++;
    struct ping_slot *s = &pg.slots[pg.seq % FW_PING_SLOTS];
    if (s->pending) {
        report_timeout(s->seq);
    }
    s->seq = pg.seq;
    s->sent_us = now;
    s->pending = true;
    if (pg.sent == 0) {
        pg.first_send_us = now;
    }
    pg.sent++;
    pg.last_send_us = now;
    if (p == NULL) {
        return; /* counted as sent and lost: the stack is out of memory */
    }
    struct icmp_echo_hdr *echo = (struct icmp_echo_hdr *)p->payload;
    ICMPH_TYPE_SET(echo, ICMP_ECHO);
    ICMPH_CODE_SET(echo, 0);
    echo->id = PP_HTONS(FW_PING_ID);
    echo->seqno = lwip_htons(pg.seq);
    echo->chksum = 0;
    uint8_t *data = (uint8_t *)p->payload + sizeof *echo;
    for (uint32_t i = 0; i < pg.cfg.size; i++) {
        data[i] = (uint8_t)i;
    }
    echo->chksum = inet_chksum(echo, len);
    raw_sendto(pg.pcb, p, &pg.target);
    pbuf_free(p);
}

bool ping_start(const struct ping_config *cfg, const struct ping_printer *out, char *err, unsigned err_size)
{
    if (!fw_test_claim(NULL, "ping", "ping")) {
        snprintf(err, err_size, "a test is running");
        return false;
    }
    memset(&pg, 0, sizeof pg);
    pg.cfg = *cfg;
    pg.out = out;
    ip_addr_set_ip4_u32(&pg.target, lwip_htonl(cfg->target));
    pg.pcb = raw_new(IP_PROTO_ICMP);
    if (pg.pcb == NULL) {
        snprintf(err, err_size, "out of RAW PCBs");
        fw_test_release("ping");
        return false;
    }
    raw_recv(pg.pcb, ping_recv, NULL);
    raw_bind(pg.pcb, IP_ADDR_ANY);
    pg.active = true;
    if (out->start != NULL) {
        out->start(cfg);
    }
    pg.next_send_us = fw_platform_time_us();
    return true;
}

bool ping_abort(void)
{
    if (!pg.active) {
        return false;
    }
    ping_finish("aborted");
    return true;
}

/* ---- The project's `ping` command ------------------------------------------------------------ */

static void fw_ping_start(const struct ping_config *cfg)
{
    char t[IP4ADDR_STRLEN_MAX];
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(cfg->target));
    ip4addr_ntoa_r(&a, t, sizeof t);
    fw_printf("PING %s: %" PRIu32 " data bytes\r\n", t, cfg->size);
}

static void fw_ping_reply(uint32_t bytes, uint32_t from, uint16_t seq, uint8_t ttl, uint64_t rtt_us)
{
    char a[IP4ADDR_STRLEN_MAX];
    char ms[24];
    ip4_addr_t addr;
    ip4_addr_set_u32(&addr, lwip_htonl(from));
    ip4addr_ntoa_r(&addr, a, sizeof a);
    fw_printf("%" PRIu32 " bytes from %s: icmp_seq=%u ttl=%u time=%s ms\r\n", bytes, a, (unsigned)seq, (unsigned)ttl,
              fw_fmt_ms(ms, sizeof ms, rtt_us));
}

static void fw_ping_timeout(uint32_t target, uint16_t seq)
{
    (void)target;
    fw_printf("Request timeout for icmp_seq=%u\r\n", (unsigned)seq);
}

static void fw_ping_finish(const struct ping_summary *sum)
{
    char t[IP4ADDR_STRLEN_MAX];
    char pct[24];
    char mn[24];
    char av[24];
    char mx[24];
    char md[24];
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(sum->target));
    ip4addr_ntoa_r(&a, t, sizeof t);
    uint32_t lost = sum->received < sum->sent ? sum->sent - sum->received : 0;
    uint64_t ppm = fw_ppm(lost, sum->sent);
    fw_printf("RESULT ping status=%s target=%s size=%" PRIu32 " sent=%" PRIu32 " received=%" PRIu32
              " loss_pct=%s min_ms=%s avg_ms=%s max_ms=%s mdev_ms=%s rejected=%" PRIu32 "\r\n",
              sum->status, t, sum->size, sum->sent, sum->received, fw_fmt_ppm_pct(pct, sizeof pct, ppm),
              fw_fmt_ms(mn, sizeof mn, sum->min_us), fw_fmt_ms(av, sizeof av, sum->mean_us),
              fw_fmt_ms(mx, sizeof mx, sum->max_us), fw_fmt_ms(md, sizeof md, sum->mdev_us), sum->rejected);
}

static const struct ping_printer fw_ping_printer = {fw_ping_start, fw_ping_reply, fw_ping_timeout, fw_ping_finish};

static void ping_command(int argc, char **argv)
{
    struct ping_config cfg;
    char err[96];
    if (!ping_cmd_parse(argc, argv, &cfg, err, sizeof err)) {
        fw_err(CMD, "%s", err);
        return;
    }
    if (cfg.abort) {
        ping_abort();
        fw_printf("RESULT ping action=abort\r\n");
        return;
    }
    if (!fw_test_claim(CMD, "ping", "ping")) {
        return;
    }
    fw_test_release("ping"); /* claimed again by ping_start: the check above printed the protocol's ERR */
    if (!ping_start(&cfg, &fw_ping_printer, err, sizeof err)) {
        fw_err(CMD, "%s", err);
    }
}

static bool all_answered(void)
{
    for (unsigned i = 0; i < FW_PING_SLOTS; i++) {
        if (pg.slots[i].pending) {
            return false;
        }
    }
    return true;
}

static void ping_poll(uint64_t now)
{
    if (!pg.active) {
        return;
    }
    if (pg.sent < pg.cfg.count) {
        bool flood = pg.cfg.interval_ms == 0;
        bool prev_done = pg.sent == 0 || all_answered() || now - pg.last_send_us >= (uint64_t)pg.cfg.timeout_ms * 1000u;
        if (now >= pg.next_send_us && (!flood || prev_done)) {
            ping_send(now);
            pg.next_send_us = flood ? UINT64_MAX : pg.next_send_us + (uint64_t)pg.cfg.interval_ms * 1000u;
            if (flood) {
                pg.next_send_us = now + (uint64_t)pg.cfg.timeout_ms * 1000u;
            }
        }
        return;
    }
    if (all_answered() || now - pg.last_send_us >= (uint64_t)pg.cfg.timeout_ms * 1000u) {
        for (unsigned i = 0; i < FW_PING_SLOTS; i++) {
            if (pg.slots[i].pending) {
                report_timeout(pg.slots[i].seq);
            }
        }
        ping_finish("ok");
    }
}

static uint64_t ping_next_deadline_us(void)
{
    if (!pg.active) {
        return UINT64_MAX;
    }
    if (pg.sent < pg.cfg.count) {
        return pg.next_send_us;
    }
    return pg.last_send_us + (uint64_t)pg.cfg.timeout_ms * 1000u;
}

static const struct fw_cmd ping_cmds[] = {
    {"ping", "IP [-c count] [-i s] [-s size] [-W s] [-q] | -a", "ICMP echo; -i 0 sends on each reply, -q prints only the result",
     ping_command},
};

const struct fw_module ping_module = {ping_cmds, sizeof ping_cmds / sizeof ping_cmds[0], ping_poll, ping_next_deadline_us};

const struct fw_module ping_engine = {NULL, 0, ping_poll, ping_next_deadline_us};
