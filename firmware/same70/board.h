/* board.h - what the SAME70 Xplained board layer (board.c) offers the board's other files. */
#ifndef BOARD_H
#define BOARD_H

#include <stdbool.h>
#include <stdint.h>

/** Clocks (300 MHz core, 150 MHz MCK), MPU + caches, SysTick, TRNG and the console USART. */
void board_init(void);

/** NULL, or what went wrong with the clocks (crystal not started: RC; PLLA not locked: 12 MHz). */
const char *board_clock_problem(void);

/** A received console byte, or -1 when none is waiting. */
int board_console_getc(void);

struct serial_baud_port;

/** The console USART's baud rate, for `serial baud` (serial_xfer_set_baud_port). */
extern const struct serial_baud_port board_baud_port;

/** printf to the console (a whole line, "\r\n" included); used for diagnostics and by lwIP. */
void board_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Prints, drains the console and resets the chip (lwIP assertions). */
void board_fatal(const char *msg, const char *file, int line) __attribute__((noreturn));

/** Busy-waits (SysTick based). */
void board_delay_us(uint32_t us);

/** Ethernet wiring: RMII pins on PIOD (peripheral A) and the KSZ8081's reset line, pulsed. */
void board_eth_pins_init(void);

/* exception handlers the vector table (startup.c) points at */
void SysTick_Handler(void);
void USART1_Handler(void);

/* the non-cacheable region for DMA (linker.ld) */
extern uint8_t __nocache_start[];
extern uint8_t __nocache_end[];

#endif /* BOARD_H */
