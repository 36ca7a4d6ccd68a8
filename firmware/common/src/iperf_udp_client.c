/* iperf UDP client: sends -l sized datagrams (paced by -b, else as fast as buffers allow) for -t
 * seconds or -n bytes, then sends FINs until the server answers with its report. */
#include "iperf_engine.h"

#include <string.h>

#include "fw_config.h"
#include "fw_fault_hooks.h"
#include "fw_platform.h"
#include "lwip/pbuf.h"
#include "lwip/udp.h"

enum state {
    ST_IDLE,
    ST_RUNNING,
    ST_FIN_WAIT, /* FIN sent, waiting for the server report */
};

static struct {
    struct iperf_run run;
    enum state state;
    struct udp_pcb *upcb;
    uint64_t deadline_us; /* end of sending (time mode); 0 = none */
    int64_t seq;          /* last data datagram's sequence number */
    uint32_t fin_tries;
    uint64_t fin_next_us;
} uc;

static void finish(const char *status)
{
    if (uc.upcb != NULL) {
        udp_remove(uc.upcb);
        uc.upcb = NULL;
    }
    uc.state = ST_IDLE;
    iperf_run_finish(&uc.run, status);
}

static bool send_datagram(int64_t seq, uint64_t now)
{
    struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)uc.run.cfg.len, PBUF_RAM);
    if (p == NULL) {
        uc.run.result.send_errors++;
        return false;
    }
    memset(p->payload, 0, p->len);
    iperf_udp_hdr_encode((uint8_t *)p->payload, seq, now);
    err_t err = udp_send(uc.upcb, p);
    pbuf_free(p);
    if (err != ERR_OK) {
        uc.run.result.send_errors++;
        return false;
    }
    return true;
}

static void on_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)arg;
    (void)pcb;
    (void)addr;
    (void)port;
    uint8_t buf[IPERF_SERVER_REPLY_LEN + IPERF_SERVER_REPORT_EXT_LEN + IPERF_SERVER_REPORT_EXT2_LEN];
    uint16_t n = pbuf_copy_partial(p, buf, sizeof buf, 0);
    pbuf_free(p);
    if (uc.state == ST_FIN_WAIT && iperf_server_reply_decode(buf, n, &uc.run.result.report)) {
        uc.run.result.have_report = true;
        finish("ok");
    }
}

static void send_fin(uint64_t now)
{
    send_datagram(-(uc.seq + 1), now);
    uc.fin_tries++;
    uc.fin_next_us = now + FW_IPERF_UDP_FIN_WAIT_MS * 1000u;
}

static void send_due(uint64_t now)
{
    struct iperf_result *r = &uc.run.result;
    for (unsigned n = 0; n < FW_IPERF_UDP_BURST_MAX; n++) {
        bool done = uc.run.cfg.amount ? r->bytes >= uc.run.cfg.amount : now >= uc.deadline_us;
        if (done) {
            r->end_us = now;
            r->counting = false;
            uc.state = ST_FIN_WAIT;
            send_fin(now);
            return;
        }
        if (iperf_paced_allowance(&uc.run, r->bytes, now) == 0) {
            return;
        }
        if (!send_datagram(uc.seq + 1, now)) {
            return; /* out of buffers: try again on the next poll */
        }
        uc.seq++;
        r->datagrams++;
        r->bytes += uc.run.cfg.len;
    }
}

static enum iperf_start_error start(const struct iperf_config *cfg, iperf_event_fn on_event, void *ctx)
{
    iperf_run_begin(&uc.run, cfg, on_event, ctx);
    const struct fw_fault_hooks *hooks = fw_app_fault_hooks();
    uint32_t pct = hooks != NULL && hooks->udp_rate_pct != NULL ? hooks->udp_rate_pct() : 0;
    if (pct > 0 && pct < 100) { /* a planted defect (fault_inject.h): a sender short of its rate */
        uc.run.cfg.bandwidth = uc.run.cfg.bandwidth / 100u * pct;
    }
    uc.deadline_us = 0;
    uc.seq = 0;
    uc.fin_tries = 0;
    uc.fin_next_us = 0;
    uc.upcb = udp_new_ip_type(IPADDR_TYPE_V4);
    if (uc.upcb == NULL) {
        return IPERF_START_NO_UDP_PCB;
    }
    uc.upcb->tos = cfg->tos;
    if (udp_connect(uc.upcb, &uc.run.result.peer, uc.run.result.peer_port) != ERR_OK) {
        udp_remove(uc.upcb);
        uc.upcb = NULL;
        return IPERF_START_CONNECT_FAILED;
    }
    udp_recv(uc.upcb, on_recv, NULL);
    uint64_t now = fw_platform_time_us();
    uc.state = ST_RUNNING;
    if (cfg->duration_ms) {
        uc.deadline_us = now + (uint64_t)cfg->duration_ms * 1000u;
    }
    iperf_run_started(&uc.run, now);
    return IPERF_START_OK;
}

static void poll_test(uint64_t now)
{
    if (uc.state == ST_RUNNING) {
        send_due(now);
    } else if (uc.state == ST_FIN_WAIT && now >= uc.fin_next_us) {
        if (uc.fin_tries >= FW_IPERF_UDP_FIN_RETRIES) {
            finish("ok"); /* server_report=0 tells the missing report */
        } else {
            send_fin(now);
        }
    }
}

static uint64_t next_deadline_us(void)
{
    uint64_t next = UINT64_MAX;
    if (uc.state == ST_RUNNING) {
        next = iperf_earlier(next, uc.deadline_us);
        /* without a bandwidth limit: as fast as possible, poll again at once */
        next = uc.run.cfg.bandwidth != 0 ? iperf_earlier(next, iperf_paced_next_us(&uc.run, uc.run.result.bytes)) : 1;
    } else if (uc.state == ST_FIN_WAIT) {
        next = iperf_earlier(next, uc.fin_next_us);
    }
    return next;
}

static void abort_test(void)
{
    finish("aborted");
}

static const struct iperf_result *progress(void)
{
    return &uc.run.result;
}

const struct iperf_engine iperf_udp_client = {start, poll_test, next_deadline_us, abort_test, progress};
