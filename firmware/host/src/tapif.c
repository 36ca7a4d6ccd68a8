#define _GNU_SOURCE
#include "tapif.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "air_queue.h"
#include "fault_inject.h"
#include "fw_config.h"
#include "fw_netif.h"
#include "fw_platform.h"
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "netif/ethernet.h"
#ifdef FW_PLANTED_DEFECT
#include "planted_defect.h"
#endif

#define FRAME_MAX 1518

int tapif_open(struct tapif *t)
{
    struct ifreq ifr;
    const char *ifname = t->ifname;
    t->fd = -1;
    if (strlen(ifname) >= IFNAMSIZ) {
        fprintf(stderr, "tap name too long: %s\n", ifname);
        return -1;
    }
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "cannot open /dev/net/tun: %s\n", strerror(errno));
        return -1;
    }
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    memcpy(ifr.ifr_name, ifname, strlen(ifname));
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        fprintf(stderr, "cannot attach to tap %s: %s\n", ifname, strerror(errno));
        close(fd);
        return -1;
    }
    t->fd = fd;
    return fd;
}

/* The tap's frames into the AP's queue (air_queue.h); no call into the stack. */
static void tapif_air_drain(struct tapif *t, int max_frames)
{
    uint8_t frame[FRAME_MAX];
    for (int count = 0; count < max_frames; count++) {
        ssize_t n = read(t->fd, frame, sizeof frame);
        if (n <= 0) {
            break;
        }
        t->rx++;
        if (!air_queue_put(frame, (size_t)n, t->air->management(frame, (size_t)n))) {
            t->rx_drop++;
            LINK_STATS_INC(link.drop); /* the AP's queue towards the station was full */
        }
    }
}

/* Before the station's own frame: waits for the air, and when the AP has a management frame
 * waiting and the station sent last, lets it take the air first (air_queue.h). That frame is kept
 * for the stack (air_queue_hold_carried). */
static void tapif_air_take_turns(struct tapif *t)
{
    uint8_t frame[FRAME_MAX];
    for (;;) {
        uint64_t wait_us;
        while ((wait_us = tapif_air_wait_us(t)) > 0) {
            struct timespec ts = {(time_t)(wait_us / 1000000u), (long)(wait_us % 1000000u) * 1000L};
            nanosleep(&ts, NULL);
        }
        if (t->air->management == NULL) {
            return; /* no AP's frames cross this tap (a simulated AP): the station's air alone */
        }
        tapif_air_drain(t, FW_AIR_QUEUE_CARRIED_FRAMES);
        if (!t->air_ap_turn || air_queue_management_depth() == 0 || !air_queue_carried_room()) {
            return;
        }
        t->air_ap_turn = false;
        size_t n = air_queue_take(frame, sizeof frame);
        if (t->air->carry(n, false)) {
            (void)air_queue_hold_carried(frame, n); /* room checked above */
        } else {
            t->rx_drop++;
            LINK_STATS_INC(link.drop); /* lost on the air after the last retry */
        }
    }
}

static err_t tapif_output(struct netif *netif, struct pbuf *p)
{
    struct tapif *t = (struct tapif *)netif->state;
    uint8_t frame[FRAME_MAX];
    if (p->tot_len > sizeof frame) {
        t->tx_drop++;
        LINK_STATS_INC(link.lenerr);
        return ERR_BUF;
    }
    u16_t len = pbuf_copy_partial(p, frame, p->tot_len, 0);
    if (t->air != NULL && !netif_is_link_up(netif)) { /* not associated: the radio sends nothing */
        t->tx_drop++;
        LINK_STATS_INC(link.drop);
        return ERR_OK;
    }
    if (t->air != NULL) { /* the air is half duplex: wait until it is free, as the radio does */
        tapif_air_take_turns(t);
        t->air_ap_turn = true;
        if (!t->air->carry(len, true)) {
            t->tx_drop++;
            LINK_STATS_INC(link.drop); /* lost on the air after the last retry */
            return ERR_OK;
        }
    }
    if (fault_on_send(t->fd, frame, len)) { /* a planted defect took it (fault_inject.h): "sent" */
        t->tx++;
        LINK_STATS_INC(link.xmit);
        return ERR_OK;
    }
    ssize_t n = write(t->fd, frame, len);
    if (n != (ssize_t)len) {
        t->tx_drop++;
        LINK_STATS_INC(link.drop); /* the kernel queue refused the frame, as a full MAC ring would */
        return ERR_OK;
    }
    t->tx++;
    LINK_STATS_INC(link.xmit);
    return ERR_OK;
}

err_t tapif_init(struct netif *netif)
{
    const struct tapif *t = (const struct tapif *)netif->state;
    fw_netif_ethernet_setup(netif, 't', 'p', tapif_output, t->mac);
    return ERR_OK;
}

void tapif_deliver(struct netif *netif, const uint8_t *frame, size_t len)
{
    struct tapif *t = (struct tapif *)netif->state;
    if (!netif_is_link_up(netif)) { /* e.g. a Wi-Fi station that has not associated: hears nothing */
        t->rx_drop++;
        LINK_STATS_INC(link.drop);
        return;
    }
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
    if (p == NULL) {
        t->rx_drop++;
        LINK_STATS_INC(link.memerr);
        LINK_STATS_INC(link.drop);
        return;
    }
    pbuf_take(p, frame, (u16_t)len);
    LINK_STATS_INC(link.recv);
    if (netif->input(p, netif) != ERR_OK) {
        pbuf_free(p);
    }
}

/* A frame read from the tap (and, with an air, carried by it) into the management side or the stack. */
static void tapif_receive(struct netif *netif, const uint8_t *frame, size_t n)
{
    struct tapif *t = (struct tapif *)netif->state;
    if (t->side_input != NULL && t->side_input(frame, n)) {
        return;
    }
#ifdef FW_PLANTED_DEFECT /* the host-planted build only: a defect reachable from the wire (planted_defect.h) */
    (void)fw_planted_defect_inspect(frame, n);
#endif
    if (fault_on_receive(netif, frame, n)) { /* a planted defect took it (fault_inject.h) */
        return;
    }
    tapif_deliver(netif, frame, n);
    fault_after_receive();
}

/* With an air: the AP's queued frames, management first, each as the air comes free (air_queue.h). */
static int tapif_air_service(struct netif *netif)
{
    struct tapif *t = (struct tapif *)netif->state;
    uint8_t frame[FRAME_MAX];
    int count = 0;
    size_t n;
    while (tapif_air_wait_us(t) == 0 && (n = air_queue_take(frame, sizeof frame)) > 0) {
        count++;
        t->air_ap_turn = false;
        if (!t->air->carry(n, false)) {
            t->rx_drop++;
            LINK_STATS_INC(link.drop); /* lost on the air after the last retry */
            continue;
        }
        tapif_receive(netif, frame, n);
    }
    return count;
}

int tapif_poll(struct netif *netif, int max_frames)
{
    struct tapif *t = (struct tapif *)netif->state;
    uint8_t frame[FRAME_MAX];
    int count = 0;
    if (t->air != NULL && t->air->management != NULL) { /* the AP on the link: its queue (air_queue.h) */
        size_t n;
        while ((n = air_queue_take_carried(frame, sizeof frame)) > 0) { /* carried while it sent */
            tapif_receive(netif, frame, n);
        }
        if (tapif_air_wait_us(t) > 0) {
            return 0; /* the tap is read when the air is free */
        }
        uint32_t before = t->rx;
        tapif_air_drain(t, max_frames);
        tapif_air_service(netif);
        return (int)(t->rx - before);
    }
    while (count < max_frames && tapif_air_wait_us(t) == 0) { /* with an air: one frame each time it is free */
        ssize_t n = read(t->fd, frame, sizeof frame);
        if (n <= 0) {
            break;
        }
        count++;
        t->rx++;
        if (t->air != NULL && !t->air->carry((size_t)n, false)) {
            t->rx_drop++;
            LINK_STATS_INC(link.drop); /* lost on the air after the last retry */
            continue;
        }
        tapif_receive(netif, frame, (size_t)n);
    }
    return count;
}

void tapif_write_frame(struct tapif *t, const uint8_t *frame, size_t len)
{
    if (write(t->fd, frame, len) == (ssize_t)len) {
        t->tx++;
    } else {
        t->tx_drop++;
    }
}

bool tapif_air_carried(const struct tapif *t)
{
    return t->air != NULL && t->air->management != NULL && air_queue_carried_depth() > 0;
}

uint64_t tapif_air_wait_us(const struct tapif *t)
{
    if (t->air == NULL) {
        return 0;
    }
    uint64_t free_at = t->air->free_at_us();
    uint64_t now = fw_platform_time_us();
    return free_at > now ? free_at - now : 0;
}

void tapif_reset_counters(struct tapif *t)
{
    t->rx = 0;
    t->tx = 0;
    t->rx_drop = 0;
    t->tx_drop = 0;
}
