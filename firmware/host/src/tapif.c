#define _GNU_SOURCE
#include "tapif.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fw_config.h"
#include "fw_netif.h"
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "netif/ethernet.h"

#define FRAME_MAX 1518

static int tap_fd = -1;

int tapif_open(const char *ifname)
{
    struct ifreq ifr;
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
    tap_fd = fd;
    return fd;
}

static err_t tapif_output(struct netif *netif, struct pbuf *p)
{
    (void)netif;
    uint8_t frame[FRAME_MAX];
    if (p->tot_len > sizeof frame) {
        LINK_STATS_INC(link.lenerr);
        return ERR_BUF;
    }
    u16_t len = pbuf_copy_partial(p, frame, p->tot_len, 0);
    ssize_t n = write(tap_fd, frame, len);
    if (n != (ssize_t)len) {
        LINK_STATS_INC(link.drop); /* the kernel queue refused the frame, as a full MAC ring would */
        return ERR_OK;
    }
    LINK_STATS_INC(link.xmit);
    return ERR_OK;
}

err_t tapif_init(struct netif *netif)
{
    const struct tapif_config *cfg = (const struct tapif_config *)netif->state;
    fw_netif_ethernet_setup(netif, 't', 'p', tapif_output, cfg->mac);
    return ERR_OK;
}

int tapif_poll(struct netif *netif, int max_frames)
{
    uint8_t frame[FRAME_MAX];
    int count = 0;
    while (count < max_frames) {
        ssize_t n = read(tap_fd, frame, sizeof frame);
        if (n <= 0) {
            break;
        }
        count++;
        if (!netif_is_link_up(netif)) { /* e.g. a Wi-Fi station that has not associated: hears nothing */
            LINK_STATS_INC(link.drop);
            continue;
        }
        struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)n, PBUF_POOL);
        if (p == NULL) {
            LINK_STATS_INC(link.memerr);
            LINK_STATS_INC(link.drop);
            continue;
        }
        pbuf_take(p, frame, (u16_t)n);
        LINK_STATS_INC(link.recv);
        if (netif->input(p, netif) != ERR_OK) {
            pbuf_free(p);
        }
    }
    return count;
}
