/* board.c - fw_platform.h for QEMU's mps2-an500: UART0 console, FPGAIO clock, reset. */
#include "fw_platform.h"
#include "lan9118.h"
#include "mps2_an500.h"

#define WAKE_TICK_HZ 1000u /* SysTick wakes the idle loop for lwIP's timers and the app's deadlines */
#define WAKE_IRQS ((1u << IRQ_UART0_RX) | (1u << IRQ_LAN9118))

void board_console_init(void)
{
    UART_BAUDDIV(UART0_BASE) = 16u;
    UART_CTRL(UART0_BASE) = UART_CTRL_TXEN | UART_CTRL_RXEN;
}

void board_idle_init(void)
{
    /* Interrupts stay masked (PRIMASK): nothing runs in handler mode, but a pending interrupt
     * still ends WFI. The loop acknowledges the sources and polls the devices itself. */
    __asm volatile("cpsid i" ::: "memory");
    UART_CTRL(UART0_BASE) |= UART_CTRL_RXIE;
    lan9118_wake_on_rx();
    SYST_RVR = SYSCLK_HZ / WAKE_TICK_HZ - 1u;
    SYST_CVR = 0u;
    SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
    NVIC_ISER0 = WAKE_IRQS;
}

void board_wait_for_event(void)
{
    __asm volatile("dsb\n\twfi" ::: "memory");
    /* acknowledge every source before the loop polls: an event after this pends again */
    UART_INTSTATUS(UART0_BASE) = UART_INT_RX;
    lan9118_clear_wake();
    SCB_ICSR = SCB_ICSR_PENDSTCLR;
    NVIC_ICPR0 = WAKE_IRQS;
}

int board_console_getc(void)
{
    if ((UART_STATE(UART0_BASE) & UART_STATE_RXFULL) == 0u) {
        return -1;
    }
    return (int)(UART_DATA(UART0_BASE) & 0xFFu);
}

void fw_platform_console_write(const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        while ((UART_STATE(UART0_BASE) & UART_STATE_TXFULL) != 0u) {
        }
        UART_DATA(UART0_BASE) = (uint8_t)data[i];
    }
}

uint64_t fw_platform_time_us(void)
{
    /* the 32-bit counter wraps every 171 s; the main loop reads it far more often than that */
    static uint32_t last;
    static uint64_t high;
    uint32_t now = FPGAIO_COUNTER;
    if (now < last) {
        high += 1ull << 32;
    }
    last = now;
    return (high | now) / (SYSCLK_HZ / 1000000u);
}

void fw_platform_restart(void)
{
    SCB_AIRCR = SCB_AIRCR_RESET;
    for (;;) {
    }
}

unsigned int fw_platform_random(void)
{
    static uint32_t x = 0x9E3779B9u;
    x ^= FPGAIO_COUNTER;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

const char *fw_platform_target(void)
{
    return "mps2-an500";
}

