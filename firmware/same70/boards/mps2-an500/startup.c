/* startup.c - vector table and reset handler for the Cortex-M7 (no vendor code). */
#include <stdint.h>
#include <string.h>

extern uint32_t __stack_top;
extern uint32_t __data_load;
extern uint32_t __data_start;
extern uint32_t __data_end;
extern uint32_t __bss_start;
extern uint32_t __bss_end;

int main(void);
void Reset_Handler(void);
void Fault_Handler(void);

void Reset_Handler(void)
{
    memcpy(&__data_start, &__data_load, (size_t)((char *)&__data_end - (char *)&__data_start));
    memset(&__bss_start, 0, (size_t)((char *)&__bss_end - (char *)&__bss_start));
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
