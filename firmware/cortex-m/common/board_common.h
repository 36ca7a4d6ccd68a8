/* board_common.h - what every Cortex-M7 board of this firmware shares: the C runtime set-up, the
 * netif with the board's built-in address, and lwIP's diagnostics on the console. */
#ifndef BOARD_COMMON_H
#define BOARD_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lwip/netif.h"

/** Copies .data from flash and zeroes .bss (linker symbols __data_* and __bss_*). */
void board_init_memory(void);

/** Adds and brings up the board's Ethernet netif with FW_BOARD_IP/NETMASK/GW and FW_BOARD_MAC,
 * the ARP guard (fw_arp_guard.h) and the link delay line in front of its input; false when the
 * driver's init function fails. */
bool board_netif_start(struct netif *netif, netif_init_fn init);

/** The board's console: the next received byte, or -1 when none is waiting (board.c). */
int board_console_getc(void);

/** The CPU's load as the main loop sees it: an iteration that received nothing and had no
 * application or lwIP work due calls board_loop_idle(its start) at its end, sleep included;
 * fw_platform_busy_us is the rest of the time since boot. */
bool board_work_due(void);
void board_loop_idle(uint64_t since_us);

/** Hands every waiting console byte (up to one chunk) to the application; returns how many. */
size_t board_console_pump(void);

#endif /* BOARD_COMMON_H */
