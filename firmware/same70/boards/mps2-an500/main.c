/* main.c - the test firmware on QEMU's mps2-an500 (Cortex-M7, LAN9118): one polling loop that
 * waits for an interrupt (WFI) when there is nothing to do. */
#include "fw_app.h"
#include "fw_parse.h"
#include "lan9118.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#define IDLE_MIN_US 1000u /* sleep only when the app's next deadline is at least one wake tick away */

void board_console_init(void);
int board_console_getc(void);
void board_idle_init(void);
void board_wait_for_event(void);
void board_diag(const char *fmt, ...);

static const uint8_t mac[6] = FW_BOARD_MAC;

static void addr(ip4_addr_t *a, const char *text)
{
    uint32_t v = 0;
    (void)fw_parse_ipv4(text, &v);
    ip4_addr_set_u32(a, lwip_htonl(v));
}

int main(void)
{
    static struct netif netif;
    ip4_addr_t ip, mask, gw;
    board_console_init();
    lwip_init();
    addr(&ip, FW_BOARD_IP);
    addr(&mask, FW_BOARD_NETMASK);
    addr(&gw, FW_BOARD_GW);
    if (netif_add(&netif, &ip, &mask, &gw, (void *)mac, lan9118_netif_init, ethernet_input) == NULL) {
        board_diag("\r\nFATAL LAN9118 not found or not ready\r\n");
        for (;;) {
        }
    }
    netif_set_default(&netif);
    netif_set_up(&netif);
    fw_app_init(&netif);
    board_idle_init();
    for (;;) {
        char buf[64];
        size_t n = 0;
        int c;
        while (n < sizeof buf && (c = board_console_getc()) >= 0) {
            buf[n++] = (char)c;
        }
        if (n > 0) {
            fw_app_console_input(buf, n);
        }
        int frames = lan9118_poll(&netif, 8);
        sys_check_timeouts();
        fw_app_poll();
        /* sleep only with no test running: waking takes QEMU long enough for a burst of frames
         * to overflow the LAN9118's RX FIFO, and a board under test spins like a real one */
        if (n == 0 && frames == 0 && !fw_test_running() && fw_app_poll_delay_us() >= IDLE_MIN_US) {
            board_wait_for_event();
        }
    }
}
