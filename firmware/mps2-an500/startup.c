/* startup.c - vector table and reset handler for the Cortex-M7 (no vendor code). */
#include <stdint.h>

#include "board_common.h"

extern uint32_t __stack_top;

int main(void);
void Reset_Handler(void);
void Fault_Handler(void);

void Reset_Handler(void)
{
    board_init_memory();
    main();
    for (;;) {
    }
}

void Fault_Handler(void)
{
    for (;;) {
    }
}

/* Initial stack pointer, then the 15 system exception vectors; no peripheral interrupt is used. */
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler,
};
