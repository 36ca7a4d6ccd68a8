/* main.c - the test firmware on QEMU's mps2-an500 (Cortex-M7, LAN9118): one polling loop that
 * waits for an interrupt (WFI) when there is nothing to do. */
#include "board_common.h"
#include "fw_app.h"
#include "fw_platform.h"
#include "lan9118.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#define IDLE_MIN_US 1000u /* sleep only when the app's next deadline is at least one wake tick away */

void board_console_init(void);
void board_idle_init(void);
void board_wait_for_event(void);
void board_diag(const char *fmt, ...);

int main(void)
{
    static struct netif netif;
    board_console_init();
    lwip_init();
    if (!board_netif_start(&netif, lan9118_netif_init)) {
        board_diag("\r\nFATAL LAN9118 not found or not ready\r\n");
        for (;;) {
        }
    }
    fw_app_init(&netif);
    board_idle_init();
    for (;;) {
        uint64_t start = fw_platform_time_us();
        bool due = board_work_due();
        size_t n = board_console_pump();
        int frames = lan9118_poll(&netif, 8);
        sys_check_timeouts();
        fw_app_poll();
        /* sleep only with no test running: waking takes QEMU long enough for a burst of frames
         * to overflow the LAN9118's RX FIFO, and a board under test spins like a real one */
        if (n == 0 && frames == 0 && !fw_test_running() && fw_app_poll_delay_us() >= IDLE_MIN_US) {
            board_wait_for_event();
        }
        if (n == 0 && frames == 0 && !due) {
            board_loop_idle(start);
        }
    }
}
