#include "test_platform.h"

#include <string.h>

#include "fw_netif.h"
#include "fw_platform.h"
#include "lwip/ip4_addr.h"
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
