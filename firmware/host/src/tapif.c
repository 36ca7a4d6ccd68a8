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
        uint64_t wait_us;
        while ((wait_us = tapif_air_wait_us(t)) > 0) {
            struct timespec ts = {(time_t)(wait_us / 1000000u), (long)(wait_us % 1000000u) * 1000L};
            nanosleep(&ts, NULL);
        }
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

int tapif_poll(struct netif *netif, int max_frames)
{
    struct tapif *t = (struct tapif *)netif->state;
    uint8_t frame[FRAME_MAX];
    int count = 0;
    while (count < max_frames && tapif_air_wait_us(t) == 0) {
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
        if (t->side_input != NULL && t->side_input(frame, (size_t)n)) {
            continue;
        }
#ifdef FW_PLANTED_DEFECT /* the host-planted build only: a defect reachable from the wire (planted_defect.h) */
        (void)fw_planted_defect_inspect(frame, (size_t)n);
#endif
        if (fault_on_receive(netif, frame, (size_t)n)) { /* a planted defect took it (fault_inject.h) */
            continue;
        }
        tapif_deliver(netif, frame, (size_t)n);
        fault_after_receive();
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
