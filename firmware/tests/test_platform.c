#include "test_platform.h"

#include <string.h>

#include "fw_netif.h"
#include "fw_platform.h"
#include "lwip/inet_chksum.h"
#include "lwip/ip4_addr.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

char test_output[65536];
size_t test_output_len;
uint64_t test_now_us = 1000000u;

uint64_t fw_platform_time_us(void)
{
    return test_now_us;
}

void fw_platform_console_write(const char *data, size_t len)
{
    if (test_output_len + len < sizeof test_output) {
        memcpy(test_output + test_output_len, data, len);
        test_output_len += len;
        test_output[test_output_len] = '\0';
    }
}

void fw_platform_restart(void)
{
}

unsigned int fw_platform_random(void)
{
    return 7;
}

uint64_t test_busy_us = FW_PLATFORM_BUSY_UNKNOWN;

uint64_t fw_platform_busy_us(void)
{
    return test_busy_us;
}

const char *fw_platform_target(void)
{
    return "test";
}

void test_output_reset(void)
{
    test_output_len = 0;
    test_output[0] = '\0';
}

static err_t discard_output(struct netif *n, struct pbuf *p)
{
    (void)n;
    (void)p;
    return ERR_OK;
}

static err_t test_netif_init(struct netif *n)
{
    static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x33};
    fw_netif_ethernet_setup(n, 't', 't', discard_output, mac);
    return ERR_OK;
}

void test_netif_add(struct netif *netif, uint32_t ip, uint32_t netmask)
{
    ip4_addr_t a, m, gw;
    ip4_addr_set_u32(&a, lwip_htonl(ip));
    ip4_addr_set_u32(&m, lwip_htonl(netmask));
    ip4_addr_set_zero(&gw);
    netif_add(netif, &a, &m, &gw, NULL, test_netif_init, ethernet_input);
    netif_set_up(netif);
}

void test_put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

void test_put32(uint8_t *b, uint32_t v)
{
    test_put16(b, (uint16_t)(v >> 16));
    test_put16(b + 2, (uint16_t)v);
}

int test_inject_ipv4(struct netif *netif, uint32_t src, uint32_t dst, uint8_t proto, uint16_t id, uint16_t frag,
                      const uint8_t *payload, uint16_t len)
{
    uint16_t frame_len = (uint16_t)(14u + 20u + len);
    struct pbuf *p = pbuf_alloc(PBUF_RAW, frame_len, PBUF_POOL);
    if (p == NULL || p->len != frame_len) {
        if (p != NULL) {
            pbuf_free(p);
        }
        return 0;
    }
    uint8_t *f = (uint8_t *)p->payload;
    memset(f, 0, frame_len);
    memcpy(f, netif->hwaddr, 6);
    static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x11};
    memcpy(f + 6, peer_mac, 6);
    test_put16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    test_put16(ip + 2, (uint16_t)(20u + len));
    test_put16(ip + 4, id);
    test_put16(ip + 6, frag);
    ip[8] = 64;
    ip[9] = proto;
    test_put32(ip + 12, src);
    test_put32(ip + 16, dst);
    uint16_t sum = inet_chksum(ip, 20);
    memcpy(ip + 10, &sum, 2); /* inet_chksum's result is in network order already */
    memcpy(ip + 20, payload, len);
    if (netif->input(p, netif) != ERR_OK) {
        pbuf_free(p);
    }
    return 1;
}
