#include "fw_stats.h"

#include <string.h>

#include "fw_app.h"
#include "fw_inttypes.h"
#include "fw_out.h"
#include "fw_platform.h"
#include "lwip/memp.h"
#include "lwip/stats.h"
#ifdef FW_TCP_TRACK
#include "fw_tcp_track.h"
#endif
#ifdef FW_TCP_GUARD
#include "fw_tcp_guard.h"
#endif
#ifdef FW_ARP_GUARD
#include "fw_arp_guard.h"
#endif
#ifdef FW_TCP_TIME_WAIT
#include "lwip/priv/tcp_priv.h"
#endif

/*
 * The protocol counters need LWIP_STATS. The heap and pool parts exist only where lwIP manages
 * that memory itself: an lwIP on the C library's malloc (MEM_LIBC_MALLOC, e.g. ESP-IDF) has no
 * MEM_STATS, one with MEMP_MEM_MALLOC has no MEMP_STATS; `stats` then leaves those keys out.
 */
#if !LWIP_STATS || !LINK_STATS || !ETHARP_STATS || !IP_STATS || !ICMP_STATS || !UDP_STATS || !TCP_STATS
#error "fw_stats.c needs LWIP_STATS with LINK/ETHARP/IP/ICMP/UDP/TCP_STATS (ESP-IDF: CONFIG_LWIP_STATS=y)"
#endif

#if MEMP_STATS
/* Pool names from lwIP's own pool list (the X-macro lwIP provides for this purpose). */
static const char *const pool_names[MEMP_MAX] = {
#define LWIP_MEMPOOL(name, num, size, desc) #name,
#include "lwip/priv/memp_std.h"
};
#endif

struct proto_entry {
    const char *name;
    const struct stats_proto *s;
};

/* The line of one protocol's counters, without its end (a protocol may add its own). */
static void print_proto(const struct proto_entry *e)
{
    const struct stats_proto *s = e->s;
    fw_printf("%-6s xmit=%lu recv=%lu drop=%lu chkerr=%lu lenerr=%lu memerr=%lu rterr=%lu proterr=%lu"
              " opterr=%lu err=%lu",
              e->name, (unsigned long)s->xmit, (unsigned long)s->recv, (unsigned long)s->drop,
              (unsigned long)s->chkerr, (unsigned long)s->lenerr, (unsigned long)s->memerr,
              (unsigned long)s->rterr, (unsigned long)s->proterr, (unsigned long)s->opterr,
              (unsigned long)s->err);
}

#ifdef FW_TCP_TIME_WAIT
/* TCP PCBs in TIME_WAIT: the DUT's side of a connection it closed first waits out 2 * TCP_MSL (lwIP
 * keeps them in tcp_tw_pcbs, a list of their own, and takes the oldest back when the pool is short) */
static unsigned long tcp_time_wait(void)
{
    unsigned long n = 0;
    for (const struct tcp_pcb *pcb = tcp_tw_pcbs; pcb != NULL; pcb = pcb->next) {
        n++;
    }
    return n;
}
#endif

static void print_proto_kv(const struct proto_entry *e)
{
    const struct stats_proto *s = e->s;
    fw_printf(" %s_xmit=%lu %s_recv=%lu %s_drop=%lu %s_chkerr=%lu %s_memerr=%lu %s_err=%lu", e->name,
              (unsigned long)s->xmit, e->name, (unsigned long)s->recv, e->name, (unsigned long)s->drop, e->name,
              (unsigned long)s->chkerr, e->name, (unsigned long)s->memerr, e->name,
              (unsigned long)(s->err + s->lenerr + s->rterr + s->proterr + s->opterr));
}

void fw_stats_print(void)
{
    const struct proto_entry protos[] = {
        {"link", &lwip_stats.link}, {"etharp", &lwip_stats.etharp}, {"ip", &lwip_stats.ip},
        {"icmp", &lwip_stats.icmp}, {"udp", &lwip_stats.udp},       {"tcp", &lwip_stats.tcp},
#if IPFRAG_STATS
        {"ipfrag", &lwip_stats.ip_frag}, /* IPv4 reassembly: fragments received, dropped (last: the older keys first) */
#endif
    };
    const size_t nprotos = sizeof protos / sizeof protos[0];
    for (size_t i = 0; i < nprotos; i++) {
        print_proto(&protos[i]);
#ifdef FW_ARP_GUARD
        if (protos[i].s == &lwip_stats.etharp) {
            fw_printf(" ignored=%lu unresolved_answers=%lu", (unsigned long)fw_arp_guard_ignored(),
                      (unsigned long)fw_arp_guard_unresolved_answers());
        }
#endif
        fw_printf("\r\n");
    }
#if MEM_STATS
    const struct stats_mem *h = &lwip_stats.mem;
    fw_printf("heap   avail=%lu used=%lu max=%lu err=%lu\r\n", (unsigned long)h->avail, (unsigned long)h->used,
              (unsigned long)h->max, (unsigned long)h->err);
#endif
#if MEMP_STATS
    for (int i = 0; i < MEMP_MAX; i++) {
        const struct stats_mem *m = lwip_stats.memp[i];
        fw_printf("pool   %-16s avail=%lu used=%lu max=%lu err=%lu\r\n", pool_names[i], (unsigned long)m->avail,
                  (unsigned long)m->used, (unsigned long)m->max, (unsigned long)m->err);
    }
#endif
    const uint64_t busy = fw_platform_busy_us(), uptime = fw_platform_time_us();
    if (busy != FW_PLATFORM_BUSY_UNKNOWN) {
        fw_printf("cpu    busy=%" PRIu64 " us of uptime=%" PRIu64 " us\r\n", busy, uptime);
    }
#ifdef FW_TCP_TRACK
    const struct fw_tcp_track_counts tcp = fw_tcp_track_counts();
    fw_printf("tcpseg retrans=%lu ooseq=%lu rx_dup=%lu tx_segs=%lu rx_segs=%lu\r\n", (unsigned long)tcp.retrans,
              (unsigned long)tcp.ooseq, (unsigned long)tcp.rx_dup, (unsigned long)tcp.tx_segs,
              (unsigned long)tcp.rx_segs);
#endif
#ifdef FW_TCP_GUARD
    const struct fw_tcp_guard_counts guard = fw_tcp_guard_counts();
    fw_printf("tcpsyn half_open_evicted=%lu half_open_reaped=%lu known_readmitted=%lu unresolved_dropped=%lu\r\n",
              (unsigned long)guard.evicted, (unsigned long)guard.reaped, (unsigned long)guard.known_readmitted,
              (unsigned long)guard.unresolved_dropped);
    fw_printf("tcpack unsent_dropped=%lu\r\n", (unsigned long)guard.acks_unsent);
#endif
#ifdef FW_TCP_TIME_WAIT
    const unsigned long time_wait = tcp_time_wait();
    fw_printf("tcppcb time_wait=%lu\r\n", time_wait);
#endif
    const struct fw_app_report *port = fw_app_report();
    if (port != NULL && port->stats_text != NULL) {
        port->stats_text();
    }
    fw_printf("RESULT stats");
    for (size_t i = 0; i < nprotos; i++) {
        print_proto_kv(&protos[i]);
    }
#if MEM_STATS
    fw_printf(" heap_avail=%lu heap_used=%lu heap_max=%lu heap_err=%lu", (unsigned long)h->avail,
              (unsigned long)h->used, (unsigned long)h->max, (unsigned long)h->err);
#endif
#if MEMP_STATS
    for (int i = 0; i < MEMP_MAX; i++) {
        const struct stats_mem *m = lwip_stats.memp[i];
        fw_printf(" pool_%s_avail=%lu pool_%s_used=%lu pool_%s_max=%lu pool_%s_err=%lu", pool_names[i],
                  (unsigned long)m->avail, pool_names[i], (unsigned long)m->used, pool_names[i],
                  (unsigned long)m->max, pool_names[i], (unsigned long)m->err);
    }
#endif
    if (busy != FW_PLATFORM_BUSY_UNKNOWN) {
        fw_printf(" cpu_busy_us=%" PRIu64 " uptime_us=%" PRIu64, busy, uptime);
    }
#ifdef FW_TCP_TRACK
    fw_printf(" tcp_retrans=%lu tcp_ooseq=%lu tcp_rx_dup=%lu tcp_tx_segs=%lu tcp_rx_segs=%lu", (unsigned long)tcp.retrans,
              (unsigned long)tcp.ooseq, (unsigned long)tcp.rx_dup, (unsigned long)tcp.tx_segs, (unsigned long)tcp.rx_segs);
#endif
#ifdef FW_TCP_GUARD
    fw_printf(" tcp_half_open_evicted=%lu tcp_half_open_reaped=%lu tcp_syn_unresolved_dropped=%lu"
              " tcp_syn_known_readmitted=%lu tcp_acks_unsent_dropped=%lu",
              (unsigned long)guard.evicted, (unsigned long)guard.reaped, (unsigned long)guard.unresolved_dropped,
              (unsigned long)guard.known_readmitted, (unsigned long)guard.acks_unsent);
#endif
#ifdef FW_TCP_TIME_WAIT
    fw_printf(" tcp_time_wait=%lu", time_wait);
#endif
#ifdef FW_ARP_GUARD
    fw_printf(" etharp_ignored=%lu etharp_unresolved_answers=%lu", (unsigned long)fw_arp_guard_ignored(),
              (unsigned long)fw_arp_guard_unresolved_answers());
#endif
    if (port != NULL && port->stats_fields != NULL) {
        port->stats_fields();
    }
    fw_printf("\r\n");
}

void fw_stats_mark(void)
{
#if MEM_STATS
    lwip_stats.mem.max = lwip_stats.mem.used;
#endif
#if MEMP_STATS
    for (int i = 0; i < MEMP_MAX; i++) {
        lwip_stats.memp[i]->max = lwip_stats.memp[i]->used;
    }
#endif
}

void fw_stats_reset(void)
{
#ifdef FW_TCP_TRACK
    fw_tcp_track_reset();
#endif
#ifdef FW_TCP_GUARD
    fw_tcp_guard_reset();
#endif
#ifdef FW_ARP_GUARD
    fw_arp_guard_reset();
#endif
    const struct fw_app_report *port = fw_app_report();
    if (port != NULL && port->stats_reset != NULL) {
        port->stats_reset();
    }
    memset(&lwip_stats.link, 0, sizeof lwip_stats.link);
    memset(&lwip_stats.etharp, 0, sizeof lwip_stats.etharp);
    memset(&lwip_stats.ip, 0, sizeof lwip_stats.ip);
    memset(&lwip_stats.icmp, 0, sizeof lwip_stats.icmp);
    memset(&lwip_stats.udp, 0, sizeof lwip_stats.udp);
    memset(&lwip_stats.tcp, 0, sizeof lwip_stats.tcp);
#if IPFRAG_STATS
    memset(&lwip_stats.ip_frag, 0, sizeof lwip_stats.ip_frag);
#endif
#if MEM_STATS
    lwip_stats.mem.max = lwip_stats.mem.used;
    lwip_stats.mem.err = 0;
#endif
#if MEMP_STATS
    for (int i = 0; i < MEMP_MAX; i++) {
        lwip_stats.memp[i]->max = lwip_stats.memp[i]->used;
        lwip_stats.memp[i]->err = 0;
    }
#endif
}
