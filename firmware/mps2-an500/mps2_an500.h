/*
 * mps2_an500.h - the parts of Arm's MPS2+ AN500 (Cortex-M7) image the firmware uses, as QEMU's
 * `mps2-an500` machine models them (addresses from the AN500 application note and QEMU's board).
 */
#ifndef MPS2_AN500_H
#define MPS2_AN500_H

#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* CMSDK APB UART0 */
#define UART0_BASE 0x40004000u
#define UART_DATA(b) REG32((b) + 0x00u)
#define UART_STATE(b) REG32((b) + 0x04u)
#define UART_CTRL(b) REG32((b) + 0x08u)
#define UART_INTSTATUS(b) REG32((b) + 0x0Cu) /* read: pending; write 1: clear */
#define UART_BAUDDIV(b) REG32((b) + 0x10u)
#define UART_STATE_TXFULL (1u << 0)
#define UART_STATE_RXFULL (1u << 1)
#define UART_CTRL_TXEN (1u << 0)
#define UART_CTRL_RXEN (1u << 1)
#define UART_CTRL_RXIE (1u << 3)
#define UART_INT_RX (1u << 1)

/* FPGA IO: a free-running counter at the 25 MHz system clock */
#define FPGAIO_BASE 0x40028000u
#define FPGAIO_COUNTER REG32(FPGAIO_BASE + 0x18u)
#define SYSCLK_HZ 25000000u

/* SMSC LAN9118 Ethernet controller */
#define LAN9118_BASE 0xA0000000u

/* Interrupt lines of the AN500 image used as wake-up sources (never taken: PRIMASK stays set) */
#define IRQ_UART0_RX 0u
#define IRQ_LAN9118 13u

/* Cortex-M7 core: NVIC, SysTick, system control block */
#define NVIC_ISER0 REG32(0xE000E100u)
#define NVIC_ICPR0 REG32(0xE000E280u)
#define SYST_CSR REG32(0xE000E010u)
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* the processor clock */
#define SCB_ICSR REG32(0xE000ED04u)
#define SCB_ICSR_PENDSTCLR (1u << 25)
#define SCB_AIRCR REG32(0xE000ED0Cu)
#define SCB_AIRCR_RESET (0x05FA0000u | (1u << 2))

#endif /* MPS2_AN500_H */
