/*
 * startup.c - ATSAME70Q21B vector table (at the flash base, 0x00400000) and reset handler; no
 * vendor code. Reset: watchdogs off first (the WDT runs at reset and its mode register is
 * write-once), VTOR, .data copied from flash, .bss zeroed, then main(). The FPU stays off (the
 * image is built for the soft-float ABI).
 */
#include <stdint.h>

#include "board.h"
#include "board_common.h"
#include "same70.h"

extern uint32_t __stack_top;

int main(void);
void Reset_Handler(void);
void Fault_Handler(void);
void Default_Handler(void);
void fault_report(const uint32_t *frame);

typedef void (*vector_fn)(void);

/* Cortex-M7 system exceptions, then the SAME70 peripheral interrupts 0..73 (interrupt number =
 * peripheral identifier, DS60001527 "Peripheral Identifiers"). Only USART1 (14) is enabled. */
#define D Default_Handler
#define D5 D, D, D, D, D
#define D10 D5, D5
__attribute__((section(".vectors"), used)) const vector_fn vectors[16u + SAME70_IRQ_COUNT] = {
    (vector_fn)&__stack_top, /* initial main stack pointer: the top of SRAM */
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0, 0, 0, 0,    /* reserved */
    Fault_Handler, /* SVCall */
    Fault_Handler, /* DebugMonitor */
    0,             /* reserved */
    Fault_Handler, /* PendSV */
    SysTick_Handler,
    /* IRQ 0..13 */ D10, D, D, D, D,
    /* IRQ 14: USART1 (the console) */ USART1_Handler,
    /* IRQ 15..73 */ D10, D10, D10, D10, D10, D5, D, D, D, D,
};
#undef D
#undef D5
#undef D10

void Reset_Handler(void)
{
    WDT_MR = WDT_MR_WDDIS;
    /* off at reset already; written so it stays off. Bits 16..27 "must always be written with
     * 0xFFF" (DS60001527 RSWDT_MR, SAME70_DFP rswdt.h ALLONES): written as the data sheet says,
     * although ASF and Harmony write WDDIS alone (the register is write-once and the field has
     * no other documented meaning, so the documented value is the one to commit to). */
    RSWDT_MR = RSWDT_MR_WDDIS | RSWDT_MR_ALLONES;
    SCB_VTOR = (uint32_t)(uintptr_t)vectors;
    cpu_dsb();
    cpu_isb();
    board_init_memory();
    main();
    for (;;) {
    }
}

/* Faults: the exception frame (on the main stack: there is no process stack) goes to
 * fault_report (board.c), which prints it and halts for a debugger. */
__attribute__((naked)) void Fault_Handler(void)
{
    __asm__ volatile("mrs r0, msp\n"
                     "b fault_report\n");
}

/* A peripheral interrupt nobody enabled: reported like a fault. */
void Default_Handler(void) __attribute__((alias("Fault_Handler")));
