#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fw_app.h"
#include "fw_platform.h"
#include "fw_netif.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"
#include "wifi_cmd.h"
#include "wifi_sim.h"

static struct netif netif;
static size_t output_bytes;
static int initialised;

uint64_t fw_platform_time_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void fw_platform_console_write(const char *data, size_t len)
{
    (void)data;
    output_bytes += len;
}

void fw_platform_restart(void)
{
    /* a restart re-runs the banner, as a reboot would */
    fw_app_init(&netif);
}

unsigned int fw_platform_random(void)
{
    return 4; /* chosen by fair dice roll: fuzzing wants determinism */
}

uint64_t fw_platform_busy_us(void)
{
    return FW_PLATFORM_BUSY_UNKNOWN;
}

const char *fw_platform_target(void)
{
    return "fuzz";
}

static err_t discard_output(struct netif *n, struct pbuf *p)
{
    (void)n;
    (void)p;
    return ERR_OK;
}

static err_t harness_netif_init(struct netif *n)
{
    static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x22};
    fw_netif_ethernet_setup(n, 'f', 'z', discard_output, mac);
    return ERR_OK;
}

void harness_init(void)
{
    if (initialised) {
        return;
    }
    initialised = 1;
    lwip_init();
    ip4_addr_t ip;
    ip4_addr_t mask;
    ip4_addr_t gw;
    IP4_ADDR(&ip, 10, 77, 0, 2);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    netif_add(&netif, &ip, &mask, &gw, NULL, harness_netif_init, ethernet_input);
    netif_set_default(&netif);
    netif_set_up(&netif);
    if (!fw_app_add_commands(wifi_sim_commands, WIFI_SIM_COMMAND_COUNT) || !wifi_sim_init(&netif, "fuzz ap", "fuzz passphrase")) {
        abort();
    }
    netif_set_link_up(&netif); /* the rest of the application as without Wi-Fi; joins and drops change it */
    fw_app_init(&netif);
}

void harness_feed(const char *data, size_t len)
{
    static const char reset[] = "\r\niperf -a\r\nping -a\r\n";
    fw_app_console_input(data, len);
    sys_check_timeouts();
    fw_app_poll();
    wifi_sim_poll();
    wifi_cmd_service();
    fw_app_poll();
    fw_app_console_input(reset, sizeof reset - 1);
    wifi_cmd_service();
}

size_t harness_output_bytes(void)
{
    return output_bytes;
}
