/*
 * board.c - the SAME70 Xplained's platform: clocks (300 MHz core, 150 MHz MCK from the 12 MHz
 * crystal), MPU + caches, SysTick time base, TRNG, the EDBG virtual COM port console (USART1),
 * reset, fault reports, the Ethernet pins, and fw_platform.h.
 *
 * Console: the SAME70 USART has a one-byte receive holding register and no FIFO, so unlike the
 * mps2 UART it is interrupt driven: the USART1 interrupt moves received bytes into a ring the main
 * loop reads (a command typed while a test keeps the loop busy for more than one character time,
 * 87 us at 115200 Bd, is not lost), and drains a transmit ring (console output does not stall
 * the network loop for milliseconds). Nothing else uses interrupts.
 */
#include <stdbool.h>
#include <stdio.h>

#include "board.h"
#include "fw_config.h"
#include "fw_platform.h"
#include "same70.h"
#include "serial_xfer.h"

#define CONSOLE_BAUD 115200u
#define CONSOLE_BAUD_MIN 1200u
#define CONSOLE_BAUD_MAX 3000000u /* the EDBG's virtual COM port is the limit, not the USART */
#define CONSOLE_BAUD_ERR_PPM 20000u /* a rate the divider misses by more than 2 % is refused */
#define CLOCK_SPIN_LIMIT 2000000u /* > 0.5 s at the 12 MHz reset clock */
#define FLASH_WAIT_STATES 6u      /* 7 cycles: up to 150 MHz at VDDIO 3.3 V */
#define CRYSTAL_STARTUP 62u       /* x 8 slow clock cycles = 15.5 ms */

#if (FW_USART_RX_RING & (FW_USART_RX_RING - 1)) != 0 || (FW_USART_TX_RING & (FW_USART_TX_RING - 1)) != 0
#error "the console rings' sizes must be powers of two"
#endif

static uint32_t hclk_hz = MAINCK_HZ; /* what the clocks really run at (see clock_init) */
static uint32_t mck_hz = MAINCK_HZ;
static const char *clock_problem;

/* ---- Clocks (DS60001527 "Power Management Controller", programming sequence) ----------------- */

static bool pmc_wait(uint32_t flag)
{
    for (uint32_t i = 0; i < CLOCK_SPIN_LIMIT; i++) {
        if ((PMC_SR & flag) != 0u) {
            return true;
        }
    }
    return false;
}

static void clock_init(void)
{
    /* Flash wait states for the final MCK before any clock goes up. */
    EEFC_FMR = (EEFC_FMR & ~EEFC_FMR_FWS_MASK) | EEFC_FMR_FWS(FLASH_WAIT_STATES);

    /* MCK back on MAINCK if a debugger left it elsewhere: source first, then the dividers. */
    if ((PMC_MCKR & PMC_MCKR_CSS_MASK) != PMC_MCKR_CSS_MAIN) {
        PMC_MCKR = (PMC_MCKR & ~PMC_MCKR_CSS_MASK) | PMC_MCKR_CSS_MAIN;
        (void)pmc_wait(PMC_SR_MCKRDY);
    }

    /* Main crystal oscillator (12 MHz on the Xplained): enable with its start-up time, wait for
     * MOSCXTS, then switch MAINCK to it and wait for MOSCSELS. The RC stays on; if the crystal
     * does not start the board runs from the 12 MHz RC (less accurate, same frequency). */
    uint32_t rcf = CKGR_MOR & CKGR_MOR_MOSCRCF_MASK;
    uint32_t mor = CKGR_MOR_KEY | rcf | CKGR_MOR_MOSCXTST(CRYSTAL_STARTUP) | CKGR_MOR_MOSCRCEN;
    CKGR_MOR = mor | CKGR_MOR_MOSCXTEN | (CKGR_MOR & CKGR_MOR_MOSCSEL);
    bool crystal = pmc_wait(PMC_SR_MOSCXTS);
    if (crystal) {
        CKGR_MOR = mor | CKGR_MOR_MOSCXTEN | CKGR_MOR_MOSCSEL;
        crystal = pmc_wait(PMC_SR_MOSCSELS);
    }
    if (!crystal) {
        CKGR_MOR = mor; /* MAINCK = RC, crystal off */
        (void)pmc_wait(PMC_SR_MOSCSELS);
        clock_problem = "the 12 MHz crystal did not start: clocks from the 12 MHz RC";
    }

    /* PLLA = 12 MHz x (24 + 1) / 1 = 300 MHz (MCK is on MAINCK, so PLLA may change). */
    CKGR_PLLAR = CKGR_PLLAR_ONE | CKGR_PLLAR_MULA(PLLA_MUL - 1u) | CKGR_PLLAR_PLLACOUNT(0x3Fu) |
                 CKGR_PLLAR_DIVA(1u);
    if (!pmc_wait(PMC_SR_LOCKA)) {
        clock_problem = "PLLA did not lock: core and MCK at 12 MHz";
        return;
    }

    /* Switching to a PLL: prescaler and divider first (PRES = 1, MDIV = 2) while still on
     * MAINCK, then the source. */
    PMC_MCKR = (PMC_MCKR & ~(PMC_MCKR_PRES_MASK | PMC_MCKR_MDIV_MASK)) | PMC_MCKR_MDIV_DIV2;
    (void)pmc_wait(PMC_SR_MCKRDY);
    PMC_MCKR = (PMC_MCKR & ~PMC_MCKR_CSS_MASK) | PMC_MCKR_CSS_PLLA;
    (void)pmc_wait(PMC_SR_MCKRDY);
    hclk_hz = HCLK_HZ;
    mck_hz = MCK_HZ;
}

const char *board_clock_problem(void)
{
    return clock_problem;
}

/* ---- MPU and caches (ARMv7-M ARM "Protected Memory System Architecture"; Cortex-M7 TRM
 *      "L1 caches": invalidate before enabling) --------------------------------------------------- */

/* Region 0: the linker's .nocache (GMAC descriptors and buffers) as normal, non-cacheable,
 * shareable, execute-never memory; everything else keeps the default map (PRIVDEFENA). Returns
 * false (and leaves the MPU off) when the region is not a power of two aligned to its size. */
static bool mpu_init(void)
{
    uint32_t base = (uint32_t)(uintptr_t)__nocache_start;
    uint32_t size = (uint32_t)(__nocache_end - __nocache_start);
    if (size < 32u || (size & (size - 1u)) != 0u || (base & (size - 1u)) != 0u) {
        return false;
    }
    cpu_dsb();
    cpu_isb();
    MPU_CTRL = 0;
    MPU_RNR = 0;
    MPU_RBAR = base;
    MPU_RASR = MPU_RASR_XN | MPU_RASR_AP_FULL | MPU_RASR_TEX(1u) | MPU_RASR_S |
               MPU_RASR_SIZE((uint32_t)__builtin_ctz(size)) | MPU_RASR_ENABLE;
    MPU_CTRL = MPU_CTRL_PRIVDEFENA | MPU_CTRL_ENABLE;
    cpu_dsb();
    cpu_isb();
    return true;
}

static void icache_enable(void)
{
    cpu_dsb();
    cpu_isb();
    SCB_ICIALLU = 0;
    cpu_dsb();
    cpu_isb();
    SCB_CCR |= SCB_CCR_IC;
    cpu_dsb();
    cpu_isb();
}

static void dcache_enable(void)
{
    SCB_CSSELR = 0; /* level 1 data cache */
    cpu_dsb();
    uint32_t ccsidr = SCB_CCSIDR;
    uint32_t sets = ((ccsidr >> 13) & 0x7FFFu) + 1u;
    uint32_t ways = ((ccsidr >> 3) & 0x3FFu) + 1u;
    uint32_t set_shift = (ccsidr & 7u) + 4u; /* log2(line bytes) */
    uint32_t way_shift = ways > 1u ? (uint32_t)__builtin_clz(ways - 1u) : 0u;
    for (uint32_t set = 0; set < sets; set++) {
        for (uint32_t way = 0; way < ways; way++) {
            SCB_DCISW = (way << way_shift) | (set << set_shift);
        }
    }
    cpu_dsb();
    SCB_CCR |= SCB_CCR_DC;
    cpu_dsb();
    cpu_isb();
}

/* ---- SysTick: 1 kHz from the core clock; time_us = ms count + the counter's progress ---------- */

static volatile uint64_t ms_ticks;
static uint32_t systick_reload;

void SysTick_Handler(void)
{
    ms_ticks = ms_ticks + 1u;
}

static void systick_init(void)
{
    systick_reload = hclk_hz / 1000u - 1u;
    SYST_RVR = systick_reload;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
}

uint64_t fw_platform_time_us(void)
{
    static uint64_t last;
    uint64_t ms;
    uint64_t again;
    uint32_t val;
    uint32_t pending;
    do { /* a tick between the reads (or a torn 64-bit read) shows as a changed count */
        ms = ms_ticks;
        val = SYST_CVR;
        pending = SCB_ICSR & SCB_ICSR_PENDSTSET;
        again = ms_ticks;
    } while (ms != again);
    if (pending != 0u && val > systick_reload / 2u) {
        ms++; /* the counter wrapped after `ms` was read and the handler has not run yet */
    }
    uint64_t us = ms * 1000u + (systick_reload - val) / (hclk_hz / 1000000u);
    if (us < last) {
        us = last; /* monotonic whatever happens */
    }
    last = us;
    return us;
}

void board_delay_us(uint32_t us)
{
    uint64_t end = fw_platform_time_us() + us;
    while (fw_platform_time_us() < end) {
    }
}

/* ---- TRNG ------------------------------------------------------------------------------------- */

static void trng_init(void)
{
    PMC_PCER1 = 1u << (ID_TRNG - 32u);
    TRNG_CR = TRNG_CR_KEY | TRNG_CR_ENABLE;
}

unsigned int fw_platform_random(void)
{
    static uint32_t x = 0x9E3779B9u;
    if ((TRNG_ISR & TRNG_ISR_DATRDY) != 0u) {
        x ^= TRNG_ODATA;
    }
    x ^= SYST_CVR;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* ---- Console: USART1 = the EDBG virtual COM port (SAME70 Xplained user guide): TXD1 on PB4
 *      (peripheral D; PB4 is JTAG TDI until CCFG_SYSIO.SYSIO4 frees it), RXD1 on PA21
 *      (peripheral A); 115200 8N1 from MCK ------------------------------------------------------ */

#define PB4 (1u << 4)
#define PA21 (1u << 21)

static volatile uint8_t rx_ring[FW_USART_RX_RING];
static volatile uint32_t rx_head; /* written by the interrupt */
static volatile uint32_t rx_tail; /* written by the main loop */
static volatile uint8_t tx_ring[FW_USART_TX_RING];
static volatile uint32_t tx_head; /* written by the main loop */
static volatile uint32_t tx_tail; /* written by the interrupt */
static volatile uint32_t rx_lost; /* ring full, overrun, framing or parity errors */
static bool console_up;
static uint32_t console_baud = CONSOLE_BAUD;

/* baud = MCK / (16 x (CD + FP/8)): 8 x CD + FP = MCK / (2 x baud), rounded (150 MHz: 651 = CD 81,
 * FP 3 -> 115207 Bd); 0 when CD would be 0 (above MCK / 16) */
static uint32_t console_div8(uint32_t baud)
{
    uint32_t div8 = (mck_hz + baud) / (2u * baud);
    return (div8 >> 3) == 0u || (div8 >> 3) > 0xFFFFu ? 0u : div8;
}

static void console_init(void)
{
    PMC_PCER0 = (1u << ID_PIOA) | (1u << ID_PIOB) | (1u << ID_USART1);
    CCFG_SYSIO |= CCFG_SYSIO_SYSIO4; /* PB4 instead of TDI (SWD stays) */
    PIO_ABCDSR1(PIOB_BASE) |= PB4; /* D = 1:1 */
    PIO_ABCDSR2(PIOB_BASE) |= PB4;
    PIO_PDR(PIOB_BASE) = PB4;
    PIO_ABCDSR1(PIOA_BASE) &= ~PA21; /* A = 0:0 */
    PIO_ABCDSR2(PIOA_BASE) &= ~PA21;
    PIO_PUER(PIOA_BASE) = PA21; /* idle high while the EDBG is not driving it */
    PIO_PDR(PIOA_BASE) = PA21;

    US_IDR(USART1_BASE) = 0xFFFFFFFFu;
    US_CR(USART1_BASE) = US_CR_RSTRX | US_CR_RSTTX | US_CR_RXDIS | US_CR_TXDIS | US_CR_RSTSTA;
    US_MR(USART1_BASE) = US_MR_MODE_NORMAL | US_MR_USCLKS_MCK | US_MR_CHRL_8 | US_MR_PAR_NONE |
                         US_MR_NBSTOP_1 | US_MR_CHMODE_NORMAL;
    uint32_t div8 = console_div8(console_baud);
    US_BRGR(USART1_BASE) = US_BRGR_CD(div8 >> 3) | US_BRGR_FP(div8 & 7u);
    US_CR(USART1_BASE) = US_CR_RXEN | US_CR_TXEN;
    US_IER(USART1_BASE) = US_CSR_RXRDY;
    NVIC_ISER(ID_USART1 / 32u) = 1u << (ID_USART1 % 32u);
    console_up = true;
}

void USART1_Handler(void)
{
    uint32_t csr = US_CSR(USART1_BASE);
    if ((csr & US_CSR_RXRDY) != 0u) {
        uint8_t c = (uint8_t)US_RHR(USART1_BASE);
        uint32_t head = rx_head;
        if (head - rx_tail < FW_USART_RX_RING) {
            rx_ring[head % FW_USART_RX_RING] = c;
            cpu_dmb();
            rx_head = head + 1u;
        } else {
            rx_lost = rx_lost + 1u;
        }
    }
    if ((csr & (US_CSR_OVRE | US_CSR_FRAME | US_CSR_PARE)) != 0u) {
        US_CR(USART1_BASE) = US_CR_RSTSTA;
        rx_lost = rx_lost + 1u;
    }
    if ((csr & US_CSR_TXRDY) != 0u && (US_IMR(USART1_BASE) & US_CSR_TXRDY) != 0u) {
        uint32_t tail = tx_tail;
        if (tail != tx_head) {
            US_THR(USART1_BASE) = tx_ring[tail % FW_USART_TX_RING];
            tx_tail = tail + 1u;
        } else {
            US_IDR(USART1_BASE) = US_CSR_TXRDY;
        }
    }
}

int board_console_getc(void)
{
    uint32_t tail = rx_tail;
    if (tail == rx_head) {
        return -1;
    }
    cpu_dmb();
    int c = rx_ring[tail % FW_USART_RX_RING];
    rx_tail = tail + 1u;
    return c;
}

void fw_platform_console_write(const char *data, size_t len)
{
    if (!console_up) {
        return;
    }
    for (size_t i = 0; i < len; i++) {
        uint32_t head = tx_head;
        if (head - tx_tail >= FW_USART_TX_RING) {
            /* full: wait for the interrupt to drain it (a full ring is ~0.35 s of output); a
             * USART that stopped loses the rest rather than hanging the firmware */
            US_IER(USART1_BASE) = US_CSR_TXRDY;
            uint64_t start = fw_platform_time_us();
            while (head - tx_tail >= FW_USART_TX_RING) {
                if (fw_platform_time_us() - start > 500000u) {
                    return;
                }
            }
        }
        tx_ring[head % FW_USART_TX_RING] = (uint8_t)data[i];
        cpu_dmb();
        tx_head = head + 1u;
    }
    US_IER(USART1_BASE) = US_CSR_TXRDY;
}

/* Waits (bounded) until everything written so far has left the USART. */
static void console_drain(void)
{
    if (!console_up) {
        return;
    }
    uint64_t start = fw_platform_time_us();
    while ((tx_tail != tx_head || (US_CSR(USART1_BASE) & US_CSR_TXEMPTY) == 0u) &&
           fw_platform_time_us() - start < 1000000u) {
    }
}

/* The console's baud rate for `serial baud` (serial_xfer.h): the EDBG's virtual COM port follows the
 * rate the PC sets on it, so the PC and this USART change together. */
static uint32_t baud_get(void)
{
    return console_baud;
}

static bool baud_check(uint32_t baud, char *err, unsigned err_size)
{
    uint32_t div8 = console_div8(baud);
    if (div8 == 0u) {
        snprintf(err, err_size, "the USART's divider cannot make it from MCK %lu Hz", (unsigned long)mck_hz);
        return false;
    }
    uint32_t made = mck_hz / (2u * div8);
    uint32_t off = made > baud ? made - baud : baud - made;
    if ((uint64_t)off * 1000000u > (uint64_t)baud * CONSOLE_BAUD_ERR_PPM) {
        snprintf(err, err_size, "the USART would run at %lu Bd (more than 2 %% off)", (unsigned long)made);
        return false;
    }
    return true;
}

static void baud_set(uint32_t baud)
{
    console_drain(); /* the line announcing the change leaves at the old rate */
    console_baud = baud;
    US_BRGR(USART1_BASE) = US_BRGR_CD(console_div8(baud) >> 3) | US_BRGR_FP(console_div8(baud) & 7u);
    US_CR(USART1_BASE) = US_CR_RSTSTA; /* a byte cut by the switch is not an error of the new rate */
}

const struct serial_baud_port board_baud_port = {baud_get, baud_check, baud_set, CONSOLE_BAUD_MIN, CONSOLE_BAUD_MAX};

/* For fault handlers: straight to the transmitter, the interrupt cannot run. */
static void console_putc_polled(char c)
{
    for (uint32_t i = 0; i < 1000000u && (US_CSR(USART1_BASE) & US_CSR_TXRDY) == 0u; i++) {
    }
    US_THR(USART1_BASE) = (uint8_t)c;
}

static void console_puts_polled(const char *s)
{
    while (*s != '\0') {
        console_putc_polled(*s++);
    }
}

static void console_hex_polled(const char *name, uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    console_puts_polled(name);
    console_puts_polled("=0x");
    for (int shift = 28; shift >= 0; shift -= 4) {
        console_putc_polled(digits[(v >> shift) & 0xFu]);
    }
}

/* ---- board.h / fw_platform.h ------------------------------------------------------------------ */

void board_init(void)
{
    clock_init();
    if (mpu_init()) {
        dcache_enable(); /* only with the DMA region non-cacheable */
    }
    icache_enable();
    systick_init();
    trng_init();
    console_init();
}

void board_eth_pins_init(void)
{
    /* RMII on PIOD, peripheral A (DS60001527 "Package and Pinout" I/O multiplexing; SAME70
     * Xplained user guide "Ethernet"): PD0 GREFCK, PD1 GTXEN, PD2 GTX0, PD3 GTX1, PD4 GRXDV,
     * PD5 GRX0, PD6 GRX1, PD7 GRXER, PD8 GMDC, PD9 GMDIO. */
    const uint32_t rmii = 0x3FFu;
    const uint32_t phy_reset = 1u << 10; /* PC10: the KSZ8081's RESET_N (active low) */
    PMC_PCER0 = (1u << ID_PIOC) | (1u << ID_PIOD);
    PMC_PCER1 = 1u << (ID_GMAC - 32u);
    /* The PIO pull-ups (on at reset) off first: the KSZ8081RNA latches its strap options (PHY
     * address, ISO, ...) from pins it shares with the RMII receive side (CRS_DV, RXD0/1, RXER)
     * when RESET_N rises, and the straps must see the board's resistors only. */
    PIO_PUDR(PIOD_BASE) = rmii;
    PIO_ABCDSR1(PIOD_BASE) &= ~rmii;
    PIO_ABCDSR2(PIOD_BASE) &= ~rmii;
    PIO_PDR(PIOD_BASE) = rmii;
    /* a reset pulse (the KSZ8081 wants >= 500 us low; its straps latch on the rising edge) */
    PIO_CODR(PIOC_BASE) = phy_reset;
    PIO_OER(PIOC_BASE) = phy_reset;
    PIO_PER(PIOC_BASE) = phy_reset;
    board_delay_us(10000u);
    PIO_SODR(PIOC_BASE) = phy_reset;
    board_delay_us(10000u); /* reset to first MDIO access, and its 50 MHz RMII clock settles */
}

void fw_platform_restart(void)
{
    console_drain();
    cpu_dsb();
    SCB_AIRCR = SCB_AIRCR_SYSRESETREQ;
    cpu_dsb();
    for (;;) {
    }
}

const char *fw_platform_target(void)
{
    return "same70-xplained";
}

/* Called by startup.c's Fault_Handler with the exception frame (r0-r3, r12, lr, pc, xPSR):
 * prints where it happened and halts for a debugger (the HIL bench re-flashes a dead board). */
void fault_report(const uint32_t *frame);
void fault_report(const uint32_t *frame)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    console_puts_polled("\r\nFATAL fault: ");
    console_hex_polled("exception", ipsr & 0x1FFu);
    console_hex_polled(" pc", frame[6]);
    console_hex_polled(" lr", frame[5]);
    console_hex_polled(" cfsr", SCB_CFSR);
    console_hex_polled(" hfsr", SCB_HFSR);
    console_hex_polled(" bfar", SCB_BFAR);
    console_hex_polled(" mmfar", SCB_MMFAR);
    console_puts_polled("\r\n");
    for (;;) {
    }
}
