/* What the four iperf engines share: the run's bookkeeping, bandwidth pacing, TCP close. */
#include "iperf_engine.h"

#include <string.h>

#include "fw_fault_hooks.h"
#include "fw_muldiv.h"
#include "fw_platform.h"
#include "lwip/tcp.h"
#ifdef FW_TCP_GUARD
#include "fw_tcp_guard.h"
#endif

void iperf_run_begin(struct iperf_run *run, const struct iperf_config *cfg, iperf_event_fn on_event, void *ctx)
{
    memset(run, 0, sizeof *run);
    run->cfg = *cfg;
    run->on_event = on_event;
    run->ctx = ctx;
    ip_addr_set_ip4_u32(&run->result.peer, lwip_htonl(cfg->peer_ip));
    run->result.peer_port = cfg->port;
}

void iperf_run_event(struct iperf_run *run, enum iperf_event event)
{
    run->on_event(run->ctx, event, &run->result);
}

void iperf_run_started(struct iperf_run *run, uint64_t now_us)
{
    run->result.start_us = now_us;
    run->result.end_us = 0;
    run->result.counting = true;
    iperf_run_event(run, IPERF_EVENT_STARTED);
}

void iperf_run_finish(struct iperf_run *run, const char *status)
{
    if (run->result.end_us == 0) {
        run->result.end_us = fw_platform_time_us();
    }
    run->result.counting = false;
    run->result.status = status;
    iperf_run_event(run, IPERF_EVENT_FINISHED);
    const struct fw_fault_hooks *hooks = fw_app_fault_hooks();
    if (hooks != NULL && hooks->test_finished != NULL) { /* a planted defect (fault_inject.h) */
        hooks->test_finished();
    }
}

uint64_t iperf_paced_allowance(const struct iperf_run *run, uint64_t sent, uint64_t now_us)
{
    if (run->cfg.bandwidth == 0) {
        return UINT64_MAX;
    }
    if (now_us <= run->result.start_us) {
        return 0;
    }
    /* bytes = elapsed us * bit/s / 8e6, exact and without overflow however long the run */
    uint64_t allowed = fw_muldiv_u64(now_us - run->result.start_us, run->cfg.bandwidth, 8000000u);
    return allowed > sent ? allowed - sent : 0;
}

uint64_t iperf_paced_next_us(const struct iperf_run *run, uint64_t sent)
{
    if (run->cfg.bandwidth == 0) {
        return UINT64_MAX;
    }
    /* us = bytes * 8e6 / bit/s: exact and without overflow (a day at 100 Gbit/s is 1.08e15 bytes,
     * 8.6e21 once scaled); the time a byte is due never decreases as more are sent */
    uint64_t offset = fw_muldiv_u64(sent, 8000000u, run->cfg.bandwidth);
    uint64_t next = offset > UINT64_MAX - run->result.start_us ? UINT64_MAX : run->result.start_us + offset;
    return next < 1 ? 1 : next;
}

void iperf_tcp_close(struct tcp_pcb **pcb, struct tcp_pcb **closing)
{
    if (*pcb == NULL) {
        return;
    }
    if ((*pcb)->state == LISTEN) {
        tcp_close(*pcb); /* never fails for a listening PCB */
        *pcb = NULL;
        return;
    }
    tcp_arg(*pcb, NULL);
    tcp_recv(*pcb, NULL);
    tcp_sent(*pcb, NULL);
    tcp_err(*pcb, NULL);
    tcp_poll(*pcb, NULL, 0);
    if (tcp_close(*pcb) != ERR_OK) {
        *closing = *pcb; /* out of memory for the FIN: retried from the engine's poll */
    }
    *pcb = NULL;
}

void iperf_tcp_retry_close(struct tcp_pcb **closing)
{
    if (*closing != NULL && tcp_close(*closing) == ERR_OK) {
        *closing = NULL;
    }
}

void iperf_tcp_abort(struct tcp_pcb **pcb)
{
    if (*pcb != NULL) {
        tcp_err(*pcb, NULL);
        tcp_abort(*pcb);
        *pcb = NULL;
    }
}

struct tcp_pcb *iperf_tcp_new(void)
{
    struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
#ifdef FW_TCP_GUARD
    if (pcb == NULL && fw_tcp_guard_make_room()) {
        pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    }
#endif
    return pcb;
}

static const struct iperf_engine *const all_engines[] = {&iperf_tcp_client, &iperf_tcp_server, &iperf_udp_client,
                                                         &iperf_udp_server};

void iperf_engines_poll(uint64_t now_us)
{
    for (size_t i = 0; i < sizeof all_engines / sizeof all_engines[0]; i++) {
        all_engines[i]->poll(now_us);
    }
}

uint64_t iperf_engines_next_deadline_us(void)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < sizeof all_engines / sizeof all_engines[0]; i++) {
        uint64_t t = all_engines[i]->next_deadline_us();
        next = t < next ? t : next;
    }
    return next;
}
