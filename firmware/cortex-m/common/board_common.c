/* board_common.c - the C runtime set-up, the board netif and lwIP's diagnostics (arch/cc.h),
 * shared by the Cortex-M7 boards. */
#include "board_common.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fw_app.h"
#include "fw_arp_guard.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "link_delay.h"
#include "lwip/def.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

extern uint32_t __data_load;
extern uint32_t __data_start;
extern uint32_t __data_end;
extern uint32_t __bss_start;
extern uint32_t __bss_end;

static const uint8_t board_mac[6] = FW_BOARD_MAC;

void board_init_memory(void)
{
    memcpy(&__data_start, &__data_load, (size_t)((char *)&__data_end - (char *)&__data_start));
    memset(&__bss_start, 0, (size_t)((char *)&__bss_end - (char *)&__bss_start));
}

static void addr(ip4_addr_t *a, const char *text)
{
    uint32_t v = 0;
    (void)fw_parse_ipv4(text, &v);
    ip4_addr_set_u32(a, lwip_htonl(v));
}

bool board_netif_start(struct netif *netif, netif_init_fn init)
{
    ip4_addr_t ip, mask, gw;
    addr(&ip, FW_BOARD_IP);
    addr(&mask, FW_BOARD_NETMASK);
    addr(&gw, FW_BOARD_GW);
    if (netif_add(netif, &ip, &mask, &gw, (void *)board_mac, init, ethernet_input) == NULL) {
        return false;
    }
    netif_set_default(netif);
    netif_set_up(netif);
    /* unsolicited ARP never re-points the ARP entries (fw_arp_guard.h); the delay line delays frames into it */
    return fw_arp_guard_attach(netif) && link_delay_install(netif);
}

/* the main loop's iterations that found nothing to do, and its sleeps (fw_platform_busy_us) */
static uint64_t idle_us;

void board_loop_idle(uint64_t since_us)
{
    idle_us += fw_platform_time_us() - since_us;
}

bool board_work_due(void)
{
    return fw_app_poll_delay_us() == 0 || sys_timeouts_sleeptime() == 0;
}

uint64_t fw_platform_busy_us(void)
{
    return fw_platform_time_us() - idle_us;
}

size_t board_console_pump(void)
{
    char buf[64];
    size_t n = 0;
    int c;
    while (n < sizeof buf && (c = board_console_getc()) >= 0) {
        buf[n++] = (char)c;
    }
    if (n > 0) {
        fw_app_console_input(buf, n);
    }
    return n;
}

void board_diag(const char *fmt, ...)
{
    char buf[160];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) {
        fw_platform_console_write(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    }
}

void board_fatal(const char *msg, const char *file, int line)
{
    board_diag("\r\nFATAL lwIP assertion \"%s\" at %s:%d\r\n", msg, file, line);
    fw_platform_restart();
    for (;;) {
    }
}
