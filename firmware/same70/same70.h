/*
 * same70.h - the registers of the ATSAME70Q21B (rev. B) and of its Cortex-M7 core that the board
 * layer uses, written by the project from the data sheets: Microchip DS60001527 "SAM E70/S70/V70/
 * V71 Family Data Sheet" (cited below by chapter title) and Arm's ARMv7-M Architecture Reference
 * Manual / Cortex-M7 Technical Reference Manual for the core's system registers. Only what the
 * board uses is here; every block names the chapter and register table it comes from.
 */
#ifndef SAME70_H
#define SAME70_H

#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* The GMAC and CHIPID registers are addresses, read and written through REG_READ/REG_WRITE: on
 * the target these are the same volatile accesses as REG32; a host test that defines
 * SAME70_REGISTER_MODEL compiles gmac.c, ksz8081.c and chipid.c against its register model
 * (firmware/tests/same70/), whose functions see every access. */
#if defined(SAME70_REGISTER_MODEL)
uint32_t same70_model_read(uint32_t addr);
void same70_model_write(uint32_t addr, uint32_t value);
#define REG_READ(addr) same70_model_read(addr)
#define REG_WRITE(addr, value) same70_model_write((addr), (value))
#else
#define REG_READ(addr) REG32(addr)
#define REG_WRITE(addr, value) ((void)(REG32(addr) = (value)))
#endif

/* ---- Clocks of this board (SAME70 Xplained user guide: 12 MHz crystal on XIN/XOUT) ---------- */
#define MAINCK_HZ 12000000u
#define PLLA_MUL 25u                    /* PLLA = 12 MHz x 25 / 1 = 300 MHz */
#define HCLK_HZ (MAINCK_HZ * PLLA_MUL)  /* processor clock: PRES = 1 */
#define MCK_HZ (HCLK_HZ / 2u)           /* master/peripheral clock: MDIV = 2 -> 150 MHz */

/* ---- Peripheral identifiers (DS60001527 "Peripherals", Peripheral Identifiers table) --------
 * The identifier is both the PMC clock-enable bit (PCER0 for 0..31, PCER1 for 32..63) and the
 * NVIC interrupt number. */
#define ID_PIOA 10u
#define ID_PIOB 11u
#define ID_PIOC 12u
#define ID_USART1 14u
#define ID_PIOD 16u
#define ID_GMAC 39u
#define ID_TRNG 57u
#define SAME70_IRQ_COUNT 74u /* peripheral interrupt lines of the rev. B parts (0..73) */

/* ---- Bus Matrix (DS60001527 "Bus Matrix (MATRIX)", register summary) ------------------------ */
#define MATRIX_BASE 0x40088000u
#define CCFG_SYSIO REG32(MATRIX_BASE + 0x114u) /* System I/O configuration */
#define CCFG_SYSIO_SYSIO4 (1u << 4)             /* 1: the pin is PB4, 0: it is JTAG TDI (reset) */

/* ---- Enhanced Embedded Flash Controller (DS60001527 "Enhanced Embedded Flash Controller
 *      (EEFC)", EEFC_FMR; wait states: "Electrical Characteristics", embedded flash wait states
 *      table: FWS = 6 up to 150 MHz at VDDIO 3.0-3.6 V) ------------------------------------------ */
#define EEFC_BASE 0x400E0C00u
#define EEFC_FMR REG32(EEFC_BASE + 0x00u)
#define EEFC_FMR_FWS_SHIFT 8u
#define EEFC_FMR_FWS_MASK (0xFu << EEFC_FMR_FWS_SHIFT)
#define EEFC_FMR_FWS(n) ((uint32_t)(n) << EEFC_FMR_FWS_SHIFT)
#define EEFC_FMR_CLOE (1u << 26) /* code loop optimization (on at reset) */

/* ---- Watchdogs (DS60001527 "Watchdog Timer (WDT)" WDT_MR; "Reinforced Safety Watchdog Timer
 *      (RSWDT)" RSWDT_MR). Both mode registers can be written once after reset. -------------- */
#define WDT_MR REG32(0x400E1850u + 0x04u)
#define WDT_MR_WDDIS (1u << 15)
#define RSWDT_MR REG32(0x400E1900u + 0x04u)
#define RSWDT_MR_WDDIS (1u << 15)
#define RSWDT_MR_ALLONES (0xFFFu << 16) /* bits 16..27: "must always be written with 0xFFF" */

/* ---- Power Management Controller (DS60001527 "Power Management Controller (PMC)", register
 *      summary; the clock switching sequence is its "Programming Sequence" section) ------------- */
#define PMC_BASE 0x400E0600u
#define PMC_PCER0 REG32(PMC_BASE + 0x010u)
#define CKGR_MOR REG32(PMC_BASE + 0x020u)
#define CKGR_PLLAR REG32(PMC_BASE + 0x028u)
#define PMC_MCKR REG32(PMC_BASE + 0x030u)
#define PMC_SR REG32(PMC_BASE + 0x068u)
#define PMC_PCER1 REG32(PMC_BASE + 0x100u)

#define CKGR_MOR_MOSCXTEN (1u << 0)  /* main crystal oscillator enable */
#define CKGR_MOR_MOSCRCEN (1u << 3)  /* main RC oscillator enable (on at reset) */
#define CKGR_MOR_MOSCRCF_MASK (7u << 4) /* RC frequency (12 MHz at reset: kept) */
#define CKGR_MOR_MOSCXTST(n) ((uint32_t)(n) << 8) /* start-up time, in 8 slow clock cycles */
#define CKGR_MOR_KEY (0x37u << 16)  /* write key */
#define CKGR_MOR_MOSCSEL (1u << 24) /* 1: MAINCK is the crystal, 0: the RC */

#define CKGR_PLLAR_DIVA(n) ((uint32_t)(n) << 0)       /* 1: divider bypassed */
#define CKGR_PLLAR_PLLACOUNT(n) ((uint32_t)(n) << 8)  /* lock time, in slow clock cycles x 8 */
#define CKGR_PLLAR_MULA(n) ((uint32_t)(n) << 16)      /* PLLA = MAINCK x (MULA + 1) / DIVA */
#define CKGR_PLLAR_ONE (1u << 29)                     /* must be written 1 */

#define PMC_MCKR_CSS_MASK (3u << 0)
#define PMC_MCKR_CSS_MAIN (1u << 0)
#define PMC_MCKR_CSS_PLLA (2u << 0)
#define PMC_MCKR_PRES_MASK (7u << 4) /* processor clock prescaler: 0 = /1 */
#define PMC_MCKR_MDIV_MASK (3u << 8)
#define PMC_MCKR_MDIV_DIV2 (1u << 8) /* MCK = processor clock / 2 */

#define PMC_SR_MOSCXTS (1u << 0)   /* crystal stabilized */
#define PMC_SR_LOCKA (1u << 1)     /* PLLA locked */
#define PMC_SR_MCKRDY (1u << 3)    /* master clock ready */
#define PMC_SR_MOSCSELS (1u << 16) /* MAINCK source switch done */

/* ---- Parallel I/O Controllers (DS60001527 "Parallel Input/Output Controller (PIO)", register
 *      summary; peripheral function A/B/C/D = ABCDSR1:ABCDSR2 bits 00/10/01/11) ---------------- */
#define PIOA_BASE 0x400E0E00u
#define PIOB_BASE 0x400E1000u
#define PIOC_BASE 0x400E1200u
#define PIOD_BASE 0x400E1400u
#define PIO_PER(b) REG32((b) + 0x00u)     /* PIO enable: the PIO drives the pin */
#define PIO_PDR(b) REG32((b) + 0x04u)     /* PIO disable: the selected peripheral drives it */
#define PIO_OER(b) REG32((b) + 0x10u)     /* output enable */
#define PIO_SODR(b) REG32((b) + 0x30u)    /* set output data */
#define PIO_CODR(b) REG32((b) + 0x34u)    /* clear output data */
#define PIO_PUDR(b) REG32((b) + 0x60u)    /* pull-up disable */
#define PIO_PUER(b) REG32((b) + 0x64u)    /* pull-up enable */
#define PIO_ABCDSR1(b) REG32((b) + 0x70u) /* peripheral select 1 */
#define PIO_ABCDSR2(b) REG32((b) + 0x74u) /* peripheral select 2 */

/* ---- USART (DS60001527 "Universal Synchronous Asynchronous Receiver Transceiver (USART)",
 *      register summary; asynchronous baud rate = MCK / (16 x (CD + FP / 8)) with OVER = 0) ----- */
#define USART1_BASE 0x40028000u
#define US_CR(b) REG32((b) + 0x00u)
#define US_MR(b) REG32((b) + 0x04u)
#define US_IER(b) REG32((b) + 0x08u)
#define US_IDR(b) REG32((b) + 0x0Cu)
#define US_IMR(b) REG32((b) + 0x10u)
#define US_CSR(b) REG32((b) + 0x14u)
#define US_RHR(b) REG32((b) + 0x18u)
#define US_THR(b) REG32((b) + 0x1Cu)
#define US_BRGR(b) REG32((b) + 0x20u)

#define US_CR_RSTRX (1u << 2)
#define US_CR_RSTTX (1u << 3)
#define US_CR_RXEN (1u << 4)
#define US_CR_RXDIS (1u << 5)
#define US_CR_TXEN (1u << 6)
#define US_CR_TXDIS (1u << 7)
#define US_CR_RSTSTA (1u << 8)
#define US_MR_MODE_NORMAL (0u << 0)  /* USART_MODE */
#define US_MR_USCLKS_MCK (0u << 4)   /* clock: the peripheral clock (MCK) */
#define US_MR_CHRL_8 (3u << 6)       /* 8 data bits */
#define US_MR_PAR_NONE (4u << 9)
#define US_MR_NBSTOP_1 (0u << 12)
#define US_MR_CHMODE_NORMAL (0u << 14)
#define US_BRGR_CD(n) ((uint32_t)(n) << 0)
#define US_BRGR_FP(n) ((uint32_t)(n) << 16)
#define US_CSR_RXRDY (1u << 0) /* also the IER/IDR/IMR bit */
#define US_CSR_TXRDY (1u << 1)
#define US_CSR_OVRE (1u << 5)
#define US_CSR_FRAME (1u << 6)
#define US_CSR_PARE (1u << 7)
#define US_CSR_TXEMPTY (1u << 9)

/* ---- True Random Number Generator (DS60001527 "True Random Number Generator (TRNG)") ------- */
#define TRNG_BASE 0x40070000u
#define TRNG_CR REG32(TRNG_BASE + 0x00u)
#define TRNG_ISR REG32(TRNG_BASE + 0x1Cu)
#define TRNG_ODATA REG32(TRNG_BASE + 0x50u)
#define TRNG_CR_ENABLE (1u << 0)
#define TRNG_CR_KEY (0x524E47u << 8) /* "RNG" */
#define TRNG_ISR_DATRDY (1u << 0)

/* ---- Chip identifier (DS60001527 "Chip Identifier (CHIPID)"; SAME70_DFP chipid.h). Register
 *      ADDRESSES: use REG_READ. Decoded in chipid.c. ----------------------------------------------- */
#define CHIPID_CIDR (0x400E0940u + 0x00u)
#define CHIPID_EXID (0x400E0940u + 0x04u)

/* ---- Ethernet MAC (DS60001527 "Ethernet MAC (GMAC)", register summary and "DMA Block"
 *      buffer descriptor tables). Register ADDRESSES: use REG_READ/REG_WRITE. --------------------- */
#define GMAC_BASE 0x40050000u
#define GMAC_NCR (GMAC_BASE + 0x000u)   /* network control */
#define GMAC_NCFGR (GMAC_BASE + 0x004u) /* network configuration */
#define GMAC_NSR (GMAC_BASE + 0x008u)   /* network status */
#define GMAC_UR (GMAC_BASE + 0x00Cu)    /* user register (MII/RMII) */
#define GMAC_DCFGR (GMAC_BASE + 0x010u) /* DMA configuration */
#define GMAC_TSR (GMAC_BASE + 0x014u)   /* transmit status (write 1 to clear) */
#define GMAC_RBQB (GMAC_BASE + 0x018u)  /* receive buffer queue base (queue 0) */
#define GMAC_TBQB (GMAC_BASE + 0x01Cu)  /* transmit buffer queue base (queue 0) */
#define GMAC_RSR (GMAC_BASE + 0x020u)   /* receive status (write 1 to clear) */
#define GMAC_ISR (GMAC_BASE + 0x024u)   /* interrupt status (clear on read) */
#define GMAC_IDR (GMAC_BASE + 0x02Cu)   /* interrupt disable */
#define GMAC_MAN (GMAC_BASE + 0x034u)   /* PHY maintenance (MDIO) */
#define GMAC_HRB (GMAC_BASE + 0x080u)   /* hash register bottom */
#define GMAC_HRT (GMAC_BASE + 0x084u)   /* hash register top */
#define GMAC_SAB1 (GMAC_BASE + 0x088u)  /* specific address 1 bottom: MAC bytes 0..3 */
#define GMAC_SAT1 (GMAC_BASE + 0x08Cu)  /* specific address 1 top: MAC bytes 4..5 */
#define GMAC_FCSE (GMAC_BASE + 0x190u)  /* statistics: frame check sequence errors */
#define GMAC_RRE (GMAC_BASE + 0x1A0u)   /* statistics: receive resource errors */
#define GMAC_ROE (GMAC_BASE + 0x1A4u)   /* statistics: receive overruns */
#define GMAC_TUR (GMAC_BASE + 0x134u)   /* statistics: transmit underruns */
/* priority queues 1..5 on rev. B parts, 1..2 on rev. A (SAME70_DFP same70b/ vs same70/
 * component/gmac.h: GMAC_TBQBAPQ[5] vs [2]): base addresses and interrupt disable */
#define GMAC_PRIORITY_QUEUES_MAX 5u
#define GMAC_TBQBAPQ(q) (GMAC_BASE + 0x440u + 4u * ((q) - 1u))
#define GMAC_RBQBAPQ(q) (GMAC_BASE + 0x480u + 4u * ((q) - 1u))
#define GMAC_IDRPQ(q) (GMAC_BASE + 0x620u + 4u * ((q) - 1u))

#define GMAC_NCR_RXEN (1u << 2)
#define GMAC_NCR_TXEN (1u << 3)
#define GMAC_NCR_MPE (1u << 4)     /* management port (MDIO) enable */
#define GMAC_NCR_CLRSTAT (1u << 5) /* clear the statistics registers */
#define GMAC_NCR_TSTART (1u << 9)  /* start transmission */

#define GMAC_NCFGR_SPD (1u << 0)   /* 1: 100 Mbit/s */
#define GMAC_NCFGR_FD (1u << 1)    /* 1: full duplex */
#define GMAC_NCFGR_MAXFS (1u << 8) /* accept frames up to 1536 bytes */
#define GMAC_NCFGR_RFCS (1u << 17) /* remove the FCS before writing to memory */
#define GMAC_NCFGR_CLK_SHIFT 18u   /* MDC = MCK / divider; MDC must stay at or below 2.5 MHz */
#define GMAC_NCFGR_CLK_MCK_64 (4u << GMAC_NCFGR_CLK_SHIFT) /* for MCK up to 160 MHz */
#define GMAC_NCFGR_DBW_32 (0u << 21) /* data bus width: 0 (the data sheet's only valid value) */

#define GMAC_NSR_IDLE (1u << 2) /* PHY management logic idle */

#define GMAC_UR_MII (1u << 0) /* UR.RMII: 1 selects MII, 0 selects RMII */

#define GMAC_DCFGR_FBLDO_INCR4 (4u << 0) /* AHB bursts of up to 4 beats */
#define GMAC_DCFGR_RXBMS_FULL (3u << 8)  /* full 4 KB receive packet buffer */
#define GMAC_DCFGR_TXPBMS (1u << 10)     /* full 4 KB transmit packet buffer */
#define GMAC_DCFGR_DRBS(bytes) ((uint32_t)((bytes) / 64u) << 16) /* RX buffer size, 64-byte units */

#define GMAC_TSR_UBR (1u << 0)
#define GMAC_TSR_COL (1u << 1)
#define GMAC_TSR_RLE (1u << 2)  /* retry limit exceeded */
#define GMAC_TSR_TXGO (1u << 3) /* transmit active */
#define GMAC_TSR_TFC (1u << 4)  /* frame corrupted: AHB error */
#define GMAC_TSR_TXCOMP (1u << 5)
#define GMAC_TSR_HRESP (1u << 8)
#define GMAC_ISR_TUR (1u << 4) /* transmit underrun (GMAC_ISR, cleared on read) */
#define GMAC_TSR_ALL (GMAC_TSR_UBR | GMAC_TSR_COL | GMAC_TSR_RLE | GMAC_TSR_TFC | GMAC_TSR_TXCOMP | GMAC_TSR_HRESP)

#define GMAC_RSR_BNA (1u << 0)   /* buffer not available */
#define GMAC_RSR_REC (1u << 1)   /* frame received */
#define GMAC_RSR_RXOVR (1u << 2) /* receive overrun */
#define GMAC_RSR_HNO (1u << 3)   /* HRESP not OK */
#define GMAC_RSR_ALL (GMAC_RSR_BNA | GMAC_RSR_REC | GMAC_RSR_RXOVR | GMAC_RSR_HNO)

/* MAN: clause 22 frame = CLTTO | OP | PHYA | REGA | WTN (10b) | DATA; WZO (bit 31) stays 0 */
#define GMAC_MAN_DATA(v) ((uint32_t)(v) & 0xFFFFu)
#define GMAC_MAN_WTN (2u << 16)
#define GMAC_MAN_REGA(r) (((uint32_t)(r) & 0x1Fu) << 18)
#define GMAC_MAN_PHYA(a) (((uint32_t)(a) & 0x1Fu) << 23)
#define GMAC_MAN_OP_WRITE (1u << 28)
#define GMAC_MAN_OP_READ (2u << 28)
#define GMAC_MAN_CLTTO (1u << 30) /* clause 22 */

/* Receive buffer descriptor: word 0 = buffer address [31:2] | WRAP | OWNERSHIP, word 1 = status */
#define GMAC_RXW0_OWN (1u << 0)  /* 1: the GMAC wrote a frame here, software owns the buffer */
#define GMAC_RXW0_WRAP (1u << 1) /* last descriptor of the list */
#define GMAC_RXW0_ADDR_MASK 0xFFFFFFFCu
#define GMAC_RXW1_LEN_MASK 0x1FFFu /* frame length (valid with EOF; FCS removed with RFCS) */
#define GMAC_RXW1_SOF (1u << 14)
#define GMAC_RXW1_EOF (1u << 15)
/* Transmit buffer descriptor: word 0 = buffer address, word 1 = length | flags */
#define GMAC_TXW1_LEN_MASK 0x3FFFu
#define GMAC_TXW1_LAST (1u << 15)     /* last buffer of the frame */
#define GMAC_TXW1_LCOL (1u << 26)     /* late collision */
#define GMAC_TXW1_AHBERR (1u << 27)   /* frame corrupted: AHB error */
#define GMAC_TXW1_RLE (1u << 29)      /* retry limit exceeded */
#define GMAC_TXW1_WRAP (1u << 30)     /* last descriptor of the list */
#define GMAC_TXW1_USED (1u << 31)     /* 1: software owns it (set by the GMAC after sending) */
#define GMAC_TXW1_ERRORS (GMAC_TXW1_LCOL | GMAC_TXW1_AHBERR | GMAC_TXW1_RLE)

/* ==== Cortex-M7 core (ARMv7-M ARM "System Control Space"; Cortex-M7 TRM for the cache
 *      maintenance and identification registers) ===================================================== */
#define SYST_CSR REG32(0xE000E010u) /* SysTick control and status */
#define SYST_RVR REG32(0xE000E014u) /* reload value (24 bits) */
#define SYST_CVR REG32(0xE000E018u) /* current value (counts down) */
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* 1: the processor clock */

#define NVIC_ISER(n) REG32(0xE000E100u + 4u * (n)) /* interrupt set-enable */

#define SCB_ICSR REG32(0xE000ED04u)
#define SCB_ICSR_PENDSTSET (1u << 26) /* SysTick exception pending */
#define SCB_VTOR REG32(0xE000ED08u)
#define SCB_AIRCR REG32(0xE000ED0Cu)
#define SCB_AIRCR_SYSRESETREQ (0x05FA0000u | (1u << 2))
#define SCB_CCR REG32(0xE000ED14u)
#define SCB_CCR_DC (1u << 16) /* data cache enable */
#define SCB_CCR_IC (1u << 17) /* instruction cache enable */
#define SCB_CFSR REG32(0xE000ED28u)
#define SCB_HFSR REG32(0xE000ED2Cu)
#define SCB_MMFAR REG32(0xE000ED34u)
#define SCB_BFAR REG32(0xE000ED38u)
#define SCB_CCSIDR REG32(0xE000ED80u) /* cache size identification (of the level CSSELR selects) */
#define SCB_CSSELR REG32(0xE000ED84u) /* 0: level 1 data cache */
#define SCB_ICIALLU REG32(0xE000EF50u) /* invalidate the whole instruction cache */
#define SCB_DCISW REG32(0xE000EF60u)   /* invalidate a data cache line by set/way */

#define MPU_CTRL REG32(0xE000ED94u)
#define MPU_RNR REG32(0xE000ED98u)
#define MPU_RBAR REG32(0xE000ED9Cu)
#define MPU_RASR REG32(0xE000EDA0u)
#define MPU_CTRL_ENABLE (1u << 0)
#define MPU_CTRL_PRIVDEFENA (1u << 2) /* the default memory map for addresses no region covers */
#define MPU_RASR_ENABLE (1u << 0)
#define MPU_RASR_SIZE(log2_bytes) ((uint32_t)((log2_bytes) - 1u) << 1) /* 2^(SIZE+1) bytes */
#define MPU_RASR_S (1u << 18)                  /* shareable */
#define MPU_RASR_TEX(n) ((uint32_t)(n) << 19)  /* TEX=001, C=0, B=0: normal, non-cacheable */
#define MPU_RASR_AP_FULL (3u << 24)            /* read/write, privileged and unprivileged */
#define MPU_RASR_XN (1u << 28)                 /* execute never */

#if defined(SAME70_REGISTER_MODEL)
/* host tests: the model runs in the same thread, a compiler barrier keeps the store order */
static inline void cpu_dsb(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void cpu_isb(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void cpu_dmb(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
#else
static inline void cpu_dsb(void)
{
    __asm__ volatile("dsb 0xF" ::: "memory");
}

static inline void cpu_isb(void)
{
    __asm__ volatile("isb 0xF" ::: "memory");
}

static inline void cpu_dmb(void)
{
    __asm__ volatile("dmb 0xF" ::: "memory");
}
#endif

#endif /* SAME70_H */
