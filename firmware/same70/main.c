/* main.c - the test firmware on the SAME70 Xplained (GMAC + KSZ8081, EDBG console): one polling loop. */
#include "board.h"
#include "board_common.h"
#include "chipid.h"
#include "fw_app.h"
#include "fw_platform.h"
#include "gmac.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"
#include "serial_xfer.h"

#define LINK_CHECK_US 500000u
#define BOOT_LINK_WAIT_US 4000000u /* auto-negotiation takes ~2-3 s; BOOT then finds the link up */

/* Waits (bounded) for the first link so tests can start at BOOT; diagnostics before the banner. */
static void boot_link(struct netif *netif)
{
    uint16_t id2 = 0;
    int phy = gmac_phy_address(&id2);
    if (phy < 0) {
        board_diag("same70-xplained: no Ethernet PHY answers on MDIO: network unavailable, console only\r\n");
        return;
    }
    struct ksz8081_link link = {false, false, false};
    uint64_t start = fw_platform_time_us();
    while (!gmac_link_check(netif, &link) && fw_platform_time_us() - start < BOOT_LINK_WAIT_US) {
        board_delay_us(100000u);
    }
    if (link.up) {
        board_diag("same70-xplained: PHY 0x0022:0x%04x at MDIO address %d: link up, %s Mbit/s %s duplex\r\n",
                   (unsigned)id2, phy, link.speed_100 ? "100" : "10", link.full_duplex ? "full" : "half");
    } else {
        board_diag("same70-xplained: PHY 0x0022:0x%04x at MDIO address %d: no link yet (checked every 500 ms)\r\n",
                   (unsigned)id2, phy);
    }
}

int main(void)
{
    static struct netif netif;
    board_init();
    if (board_clock_problem() != NULL) {
        board_diag("same70-xplained: %s\r\n", board_clock_problem());
    }
    struct same70_part part;
    same70_part_read(&part);
    if (!part.supported) {
        board_diag("FATAL same70-xplained: image needs an ATSAME70 with 384 KB SRAM, rev A or B; chip %s rev %c "
                   "cidr=0x%08lx exid=0x%08lx: halted\r\n",
                   part.name, part.revision, (unsigned long)part.cidr, (unsigned long)part.exid);
        for (;;) {
        }
    }
    lwip_init();
    if (!board_netif_start(&netif, gmac_netif_init)) {
        board_diag("\r\nFATAL GMAC netif could not be added\r\n");
        for (;;) {
        }
    }
    boot_link(&netif);
    /* the part before the application's banner (a line of its own: BOOT's fields are unchanged) */
    char described[96];
    (void)same70_part_describe(&part, described, sizeof described);
    board_diag("board same70-xplained %s\r\n", described);
    serial_xfer_set_baud_port(&board_baud_port);
    fw_app_init(&netif);
    uint64_t next_link_check = fw_platform_time_us() + LINK_CHECK_US;
    for (;;) {
        uint64_t start = fw_platform_time_us();
        bool due = board_work_due();
        size_t n = board_console_pump();
        int frames = gmac_poll(&netif, 8);
        sys_check_timeouts();
        fw_app_poll();
        uint64_t now = fw_platform_time_us();
        if (now >= next_link_check) {
            gmac_link_check(&netif, NULL);
            next_link_check = now + LINK_CHECK_US;
        }
        if (n == 0 && frames == 0 && !due) {
            board_loop_idle(start);
        }
    }
}
