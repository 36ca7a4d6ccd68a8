/*
 * gmac_model.c - the register model behind gmac_model.h. Its own register map and bit positions,
 * written from DS60001527 "Ethernet MAC (GMAC)" and "Chip Identifier (CHIPID)" (offsets and fields
 * as in Microchip's SAME70_DFP headers) and the KSZ8081RNA data sheet; it does not include the
 * board's same70.h, so a wrong address or bit there does not cancel out here.
 *
 * Behaviour modelled, and where it comes from:
 *  - Receive DMA (DS "Receive Buffer", RSR, RBQB): an internal queue pointer, not readable,
 *    starts at RBQB when RBQB is written while RXEN is 0 (writes while RXEN is 1 are ignored);
 *    a frame goes into the buffer(s) of the descriptors at the pointer whose ownership bit is 0,
 *    word 1 gets SOF/EOF and the length, then ownership is set; the pointer advances by one
 *    descriptor, or returns to RBQB after one with WRAP. RSR.REC, ISR.RCOMP, FR count frames.
 *  - Ring full (RSR.BNA, "buffer not available"): the frame is dropped, RRE counts it. The data
 *    sheet says the DMA re-reads the descriptor at each new frame; the Cadence MAC it is built on
 *    is documented to stop instead under load (Linux macb: "DMA can stop, this causes endless
 *    used buffer descriptor read interrupts but it can be cleared by re-enabling RX"; Zephyr's
 *    driver and Linux both restart the receiver on BNA). The model takes that worst case: after
 *    BNA the receive DMA stays stopped, every further frame is dropped with BNA again, until
 *    software clears RXEN (clearing RXEN empties the receive pipeline; the DS says it does not
 *    move the queue pointer, so software rewrites RBQB before setting RXEN again).
 *  - Receive overrun (RSR.RXOVR, ROE): the frame is lost and "the buffer is recovered": no
 *    descriptor is used; reception goes on.
 *  - Transmit (DS "Transmit Buffer", TSR): TSTART with TXEN set starts the transmitter at its
 *    queue pointer; a descriptor with USED set stops it (TSR.UBR); otherwise the frame (up to a
 *    descriptor with LAST) is sent, USED is set in its first descriptor, TSR.TXCOMP, FT count it.
 *    Clearing TXEN stops the transmitter and puts its pointer back at TBQB.
 *  - Transmit errors, injected by the test: retry limit (TSR.RLE, descriptor bit 29), AHB error
 *    (TSR.TFC + HRESP, descriptor bit 27), underrun (ISR.TUR and the TUR count only: the part's
 *    TSR has no underrun flag). Each stops the transmitter and puts its pointer back at TBQB,
 *    the frame is not sent and its first descriptor gets USED.
 *  - RSR and TSR flags are cleared by writing 1; ISR and the statistics registers are cleared by
 *    reading; statistics saturate at their field width (FCSE, ROE, TUR 10 bits, RRE 18 bits);
 *    NCR.CLRSTAT zeroes them.
 *  - MDIO (GMAC_MAN, NSR.IDLE): clause 22 frames complete at once (IDLE always 1); without
 *    NCR.MPE nothing happens (counted as a bad access); an address without a PHY reads 0xFFFF.
 *  - Priority queues: only as many as the part has (2 on rev. A, 5 on rev. B); writing a register
 *    of a queue the part lacks is a bad access.
 *  - KSZ8081RNA: BMCR reset (self-clearing after two reads, registers back to their defaults),
 *    auto-negotiation (MODEL_AN_US after a restart or a partner appearing; the best common mode
 *    of ANAR and the partner), BMSR link status latched low, ANLPAR, PHY Control 1 (0x1E)
 *    operation mode 1/2/5/6 = 10HD/100HD/10FD/100FD, 0 while negotiating; PHYID 0x0022:0x1561.
 */
#include "gmac_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GMAC register offsets */
#define R_NCR 0x000u
#define R_NCFGR 0x004u
#define R_NSR 0x008u
#define R_UR 0x00Cu
#define R_DCFGR 0x010u
#define R_TSR 0x014u
#define R_RBQB 0x018u
#define R_TBQB 0x01Cu
#define R_RSR 0x020u
#define R_ISR 0x024u
#define R_IDR 0x02Cu
#define R_MAN 0x034u
#define R_HRB 0x080u
#define R_HRT 0x084u
#define R_SAB1 0x088u
#define R_SAT1 0x08Cu
#define R_FT 0x108u
#define R_TUR 0x134u
#define R_FR 0x158u
#define R_FCSE 0x190u
#define R_RRE 0x1A0u
#define R_ROE 0x1A4u
#define R_TBQBAPQ 0x440u
#define R_RBQBAPQ 0x480u
#define R_IDRPQ 0x620u

#define GMAC_BASE_ADDR 0x40050000u
#define CHIPID_BASE_ADDR 0x400E0940u
#define PMC_PCER1_ADDR (0x400E0600u + 0x100u)

#define NCR_RXEN (1u << 2)
#define NCR_TXEN (1u << 3)
#define NCR_MPE (1u << 4)
#define NCR_CLRSTAT (1u << 5)
#define NCR_TSTART (1u << 9)
#define NCR_SELF_CLEARING ((1u << 5) | (1u << 6) | (1u << 9) | (1u << 10))
#define NSR_IDLE (1u << 2)
#define TSR_UBR (1u << 0)
#define TSR_RLE (1u << 2)
#define TSR_TXGO (1u << 3)
#define TSR_TFC (1u << 4)
#define TSR_TXCOMP (1u << 5)
#define TSR_HRESP (1u << 8)
#define TSR_W1C 0x137u
#define RSR_BNA (1u << 0)
#define RSR_REC (1u << 1)
#define RSR_RXOVR (1u << 2)
#define RSR_W1C 0xFu
#define ISR_RCOMP (1u << 1)
#define ISR_RXUBR (1u << 2)
#define ISR_TXUBR (1u << 3)
#define ISR_TUR (1u << 4)
#define ISR_RLEX (1u << 5)
#define ISR_TFC (1u << 6)
#define ISR_TCOMP (1u << 7)
#define ISR_ROVR (1u << 10)
#define ISR_HRESP (1u << 11)
#define RX_OWN (1u << 0)
#define RX_WRAP (1u << 1)
#define RX_SOF (1u << 14)
#define RX_EOF (1u << 15)
#define TX_LAST (1u << 15)
#define TX_AHBERR (1u << 27)
#define TX_RLE (1u << 29)
#define TX_WRAP (1u << 30)
#define TX_USED (1u << 31)

/* PHY registers */
#define P_BMCR 0x00u
#define P_BMSR 0x01u
#define P_ID1 0x02u
#define P_ID2 0x03u
#define P_ANAR 0x04u
#define P_ANLPAR 0x05u
#define P_CTRL1 0x1Eu
#define P_CTRL2 0x1Fu
#define BMCR_RESET (1u << 15)
#define BMCR_AN_ENABLE (1u << 12)
#define BMCR_AN_RESTART (1u << 9)
#define BMCR_DEFAULT 0x3100u /* 100 Mbit/s, auto-negotiation enabled, full duplex */
#define BMSR_BASE 0x7809u    /* 100FD 100HD 10FD 10HD, AN ability, extended capabilities */
#define BMSR_LINK (1u << 2)
#define BMSR_AN_COMPLETE (1u << 5)
#define ANAR_DEFAULT 0x01E1u
#define ABILITIES 0x01E0u

struct gmac_model gm;
struct ksz8081_model phy;

struct desc {
    uint32_t w0;
    uint32_t w1;
};

static struct desc *desc_at(uint32_t addr)
{
    if (addr == 0u || (addr & 3u) != 0u) {
        fprintf(stderr, "gmac model: DMA at descriptor address 0x%08x\n", (unsigned)addr);
        abort();
    }
    return (struct desc *)(uintptr_t)addr;
}

static uint8_t *buffer_at(uint32_t w0)
{
    return (uint8_t *)(uintptr_t)(w0 & ~3u);
}

static void bad(uint32_t addr)
{
    gm.bad_accesses++;
    gm.last_bad_addr = addr;
}

static void count(uint32_t *counter, uint32_t max)
{
    if (*counter < max) {
        (*counter)++;
    }
}

static uint32_t take(uint32_t *reg)
{
    uint32_t v = *reg;
    *reg = 0;
    return v;
}

/* ---- PHY --------------------------------------------------------------------------------------- */

static void phy_defaults(void)
{
    phy.bmcr = BMCR_DEFAULT;
    phy.anar = ANAR_DEFAULT;
    phy.phyctrl2 = 0;
    phy.an_complete = false;
    phy.an_done_at = gm.now_us + MODEL_AN_US;
    phy.link_fell = true;
}

static uint16_t phy_common(void)
{
    return (uint16_t)(phy.anar & phy.partner_abilities & ABILITIES);
}

static bool phy_link_up(void)
{
    return phy.partner && phy.an_complete && (phy.bmcr & BMCR_AN_ENABLE) != 0u && phy_common() != 0u;
}

static void phy_restart_an(void)
{
    if (phy_link_up()) {
        phy.link_fell = true;
    }
    phy.an_complete = false;
    phy.an_done_at = gm.now_us + MODEL_AN_US;
}

static uint16_t phy_mode(void)
{
    uint16_t c = phy_common();
    if (!phy_link_up()) {
        return 0;
    }
    return (c & MODEL_100FD) ? 6u : (c & MODEL_100HD) ? 2u : (c & MODEL_10FD) ? 5u : 1u;
}

static uint16_t phy_read(unsigned reg)
{
    switch (reg) {
    case P_BMCR:
        if (phy.reset_reads > 0u) {
            phy.reset_reads--;
            return (uint16_t)(phy.bmcr | BMCR_RESET);
        }
        return phy.bmcr;
    case P_BMSR: {
        uint16_t v = BMSR_BASE;
        if (phy_link_up() && !phy.link_fell) {
            v |= BMSR_LINK;
        }
        phy.link_fell = false;
        if (phy.an_complete) {
            v |= BMSR_AN_COMPLETE;
        }
        return v;
    }
    case P_ID1:
        return 0x0022u;
    case P_ID2:
        return 0x1561u;
    case P_ANAR:
        return phy.anar;
    case P_ANLPAR:
        return phy.an_complete && phy.partner ? (uint16_t)(phy.partner_abilities | 0x0001u) : 0u;
    case P_CTRL1:
        return phy_mode();
    case P_CTRL2:
        return phy.phyctrl2;
    default:
        return 0;
    }
}

static void phy_write(unsigned reg, uint16_t v)
{
    switch (reg) {
    case P_BMCR:
        if ((v & BMCR_RESET) != 0u) {
            phy.resets++;
            phy_defaults();
            phy.reset_reads = 2;
            return;
        }
        phy.bmcr = (uint16_t)(v & ~BMCR_AN_RESTART);
        if ((v & BMCR_AN_RESTART) != 0u) {
            phy_restart_an();
        }
        break;
    case P_ANAR:
        phy.anar = v;
        break;
    case P_CTRL2:
        phy.phyctrl2 = v;
        break;
    default:
        break;
    }
}

void model_phy_partner(bool connected, uint16_t abilities)
{
    if (!connected) {
        if (phy_link_up()) {
            phy.link_fell = true;
        }
        phy.partner = false;
        phy.an_complete = false;
        return;
    }
    phy.partner = true;
    phy.partner_abilities = abilities;
    phy_restart_an();
}

static void man_write(uint32_t v)
{
    if ((gm.ncr & NCR_MPE) == 0u) {
        bad(GMAC_BASE_ADDR + R_MAN);
        return;
    }
    uint32_t op = (v >> 28) & 3u;
    uint32_t phya = (v >> 23) & 0x1Fu;
    uint32_t rega = (v >> 18) & 0x1Fu;
    if ((v & (1u << 30)) == 0u || ((v >> 16) & 3u) != 2u || (v & (1u << 31)) != 0u) {
        bad(GMAC_BASE_ADDR + R_MAN); /* not a clause 22 frame */
        gm.man = v;
        return;
    }
    if (op == 2u) { /* read */
        uint16_t data = phya == MODEL_PHY_ADDR ? phy_read(rega) : 0xFFFFu;
        gm.man = (v & 0xFFFF0000u) | data;
    } else if (op == 1u) { /* write */
        if (phya == MODEL_PHY_ADDR) {
            phy_write(rega, (uint16_t)(v & 0xFFFFu));
        }
        gm.man = v;
    } else {
        bad(GMAC_BASE_ADDR + R_MAN);
    }
}

/* ---- Transmit ------------------------------------------------------------------------------- */

static uint32_t tx_next(uint32_t addr)
{
    return (desc_at(addr)->w1 & TX_WRAP) != 0u ? gm.tbqb : addr + 8u;
}

static void tx_stop_error(void)
{
    gm.txgo = false;
    gm.tx_ptr = gm.tbqb;
}

static void tx_run(void)
{
    while (gm.txgo && !gm.tx_hold) {
        struct desc *first = desc_at(gm.tx_ptr);
        if ((first->w1 & TX_USED) != 0u) {
            gm.tsr |= TSR_UBR;
            gm.isr |= ISR_TXUBR;
            gm.txgo = false;
            return;
        }
        /* the frame: descriptors up to LAST */
        struct model_frame f;
        f.len = 0;
        uint32_t a = gm.tx_ptr;
        bool ok = true;
        for (unsigned n = 0;; n++) {
            struct desc *d = desc_at(a);
            uint32_t len = d->w1 & 0x3FFFu;
            if (n > 0u && (d->w1 & TX_USED) != 0u) {
                ok = false; /* used bit in the middle of a frame: counted as an underrun */
                break;
            }
            if (f.len + len > MODEL_FRAME_MAX || n > 64u) {
                fprintf(stderr, "gmac model: transmit frame longer than %u bytes\n", MODEL_FRAME_MAX);
                abort();
            }
            memcpy(f.data + f.len, buffer_at(d->w0), len);
            f.len = (uint16_t)(f.len + len);
            bool last = (d->w1 & TX_LAST) != 0u;
            a = tx_next(a);
            if (last) {
                break;
            }
        }
        enum model_tx_error e = ok ? gm.tx_fail_next : MODEL_TX_UNDERRUN;
        gm.tx_fail_next = MODEL_TX_OK;
        switch (e) {
        case MODEL_TX_OK:
            if (gm.tx_count < MODEL_TX_FRAMES) {
                gm.tx[gm.tx_count] = f;
            }
            gm.tx_count++;
            first->w1 |= TX_USED;
            gm.tsr |= TSR_TXCOMP;
            gm.isr |= ISR_TCOMP;
            count(&gm.st_ft, 0xFFFFFFFFu);
            gm.tx_ptr = a;
            break;
        case MODEL_TX_RETRY_LIMIT:
            first->w1 |= TX_USED | TX_RLE;
            gm.tsr |= TSR_RLE;
            gm.isr |= ISR_RLEX;
            tx_stop_error();
            break;
        case MODEL_TX_AHB_ERROR:
            first->w1 |= TX_USED | TX_AHBERR;
            gm.tsr |= TSR_TFC | TSR_HRESP;
            gm.isr |= ISR_TFC | ISR_HRESP;
            tx_stop_error();
            break;
        case MODEL_TX_UNDERRUN:
            first->w1 |= TX_USED;
            gm.isr |= ISR_TUR;
            count(&gm.st_tur, 0x3FFu);
            tx_stop_error();
            break;
        }
    }
}

/* ---- Receive -------------------------------------------------------------------------------- */

static uint32_t rx_buffer_size(void)
{
    uint32_t drbs = (gm.dcfgr >> 16) & 0xFFu;
    if (drbs == 0u) {
        fprintf(stderr, "gmac model: receive with DCFGR.DRBS = 0\n");
        abort();
    }
    return drbs * 64u;
}

static uint32_t rx_next(uint32_t addr)
{
    return (desc_at(addr)->w0 & RX_WRAP) != 0u ? gm.rbqb : addr + 8u;
}

static enum model_rx_result rx_no_buffer(void)
{
    gm.rsr |= RSR_BNA;
    gm.isr |= ISR_RXUBR;
    count(&gm.st_rre, 0x3FFFFu);
    gm.rx_stalled = true;
    return MODEL_RX_NO_BUFFER;
}

enum model_rx_result model_rx_frame(const uint8_t *data, size_t len)
{
    if ((gm.ncr & NCR_RXEN) == 0u || !phy_link_up()) {
        return MODEL_RX_OFF;
    }
    if (gm.overrun_next) {
        gm.overrun_next = false;
        gm.rsr |= RSR_RXOVR;
        gm.isr |= ISR_ROVR;
        count(&gm.st_roe, 0x3FFu);
        return MODEL_RX_OVERRUN;
    }
    if (gm.rx_stalled) {
        return rx_no_buffer();
    }
    uint32_t bs = rx_buffer_size();
    uint32_t n = (uint32_t)((len + bs - 1u) / bs);
    uint32_t a = gm.rx_ptr;
    for (uint32_t i = 0; i < n; i++, a = rx_next(a)) {
        if ((desc_at(a)->w0 & RX_OWN) != 0u) {
            return rx_no_buffer();
        }
    }
    size_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct desc *d = desc_at(gm.rx_ptr);
        size_t chunk = len - off < bs ? len - off : bs;
        memcpy(buffer_at(d->w0), data + off, chunk);
        off += chunk;
        d->w1 = (i == 0u ? RX_SOF : 0u) | (i == n - 1u ? RX_EOF | ((uint32_t)len & 0x1FFFu) : 0u);
        d->w0 |= RX_OWN;
        gm.rx_ptr = rx_next(gm.rx_ptr);
    }
    gm.rsr |= RSR_REC;
    gm.isr |= ISR_RCOMP;
    count(&gm.st_fr, 0xFFFFFFFFu);
    return MODEL_RX_STORED;
}

void model_rx_bad_fcs(void)
{
    if ((gm.ncr & NCR_RXEN) != 0u && phy_link_up()) {
        count(&gm.st_fcse, 0x3FFu);
    }
}

/* ---- Registers ------------------------------------------------------------------------------ */

static void ncr_write(uint32_t v)
{
    uint32_t old = gm.ncr;
    gm.ncr = v & ~NCR_SELF_CLEARING;
    if ((v & NCR_CLRSTAT) != 0u) {
        gm.st_ft = gm.st_fr = gm.st_tur = gm.st_fcse = gm.st_rre = gm.st_roe = 0;
    }
    if ((old & NCR_RXEN) != 0u && (v & NCR_RXEN) == 0u) {
        gm.rx_stalled = false; /* receive pipeline cleared; the queue pointer stays */
    }
    if ((old & NCR_TXEN) != 0u && (v & NCR_TXEN) == 0u) {
        gm.txgo = false;
        gm.tx_ptr = gm.tbqb;
    }
    if ((v & NCR_TSTART) != 0u && (v & NCR_TXEN) != 0u) {
        gm.txgo = true;
    }
    tx_run();
}

static bool pq_reg(uint32_t off, uint32_t base, uint32_t *q)
{
    if (off >= base && off < base + 4u * 5u) {
        *q = (off - base) / 4u + 1u;
        return true;
    }
    return false;
}

uint32_t same70_model_read(uint32_t addr)
{
    if (addr == CHIPID_BASE_ADDR) {
        return gm.cidr;
    }
    if (addr == CHIPID_BASE_ADDR + 4u) {
        return gm.exid;
    }
    if (addr < GMAC_BASE_ADDR || addr >= GMAC_BASE_ADDR + 0x4000u) {
        bad(addr);
        return 0;
    }
    uint32_t off = addr - GMAC_BASE_ADDR;
    uint32_t q;
    switch (off) {
    case R_NCR:
        return gm.ncr;
    case R_NCFGR:
        return gm.ncfgr;
    case R_NSR:
        return NSR_IDLE;
    case R_UR:
        return gm.ur;
    case R_DCFGR:
        return gm.dcfgr;
    case R_TSR:
        return gm.tsr | (gm.txgo ? TSR_TXGO : 0u);
    case R_RBQB:
        return gm.rx_ptr;
    case R_TBQB:
        return gm.tx_ptr;
    case R_RSR:
        return gm.rsr;
    case R_ISR:
        return take(&gm.isr);
    case R_MAN:
        return gm.man;
    case R_FT:
        return take(&gm.st_ft);
    case R_TUR:
        return take(&gm.st_tur);
    case R_FR:
        return take(&gm.st_fr);
    case R_FCSE:
        return take(&gm.st_fcse);
    case R_RRE:
        return take(&gm.st_rre);
    case R_ROE:
        return take(&gm.st_roe);
    default:
        if (pq_reg(off, R_TBQBAPQ, &q) && q <= gm.pq_count) {
            return gm.pq_tbq[q - 1u];
        }
        if (pq_reg(off, R_RBQBAPQ, &q) && q <= gm.pq_count) {
            return gm.pq_rbq[q - 1u];
        }
        bad(addr);
        return 0;
    }
}

void same70_model_write(uint32_t addr, uint32_t v)
{
    if (addr == PMC_PCER1_ADDR) {
        gm.pmc |= v;
        return;
    }
    if (addr < GMAC_BASE_ADDR || addr >= GMAC_BASE_ADDR + 0x4000u) {
        bad(addr);
        return;
    }
    uint32_t off = addr - GMAC_BASE_ADDR;
    uint32_t q;
    switch (off) {
    case R_NCR:
        ncr_write(v);
        return;
    case R_NCFGR:
        gm.ncfgr = v;
        return;
    case R_UR:
        gm.ur = v;
        return;
    case R_DCFGR:
        gm.dcfgr = v;
        return;
    case R_TSR:
        gm.tsr &= ~(v & TSR_W1C);
        return;
    case R_RBQB:
        if ((gm.ncr & NCR_RXEN) != 0u) {
            gm.ignored_writes++;
        } else {
            gm.rbqb = gm.rx_ptr = v & ~3u;
        }
        return;
    case R_TBQB:
        if ((gm.ncr & NCR_TXEN) != 0u && gm.txgo) {
            gm.ignored_writes++;
        } else {
            gm.tbqb = gm.tx_ptr = v & ~3u;
        }
        return;
    case R_RSR:
        gm.rsr &= ~(v & RSR_W1C);
        return;
    case R_IDR:
        gm.idr |= v;
        return;
    case R_MAN:
        man_write(v);
        return;
    case R_HRB:
        gm.hrb = v;
        return;
    case R_HRT:
        gm.hrt = v;
        return;
    case R_SAB1:
        gm.sab1 = v;
        return;
    case R_SAT1:
        gm.sat1 = v;
        return;
    default:
        break;
    }
    uint32_t *regs = NULL;
    if (pq_reg(off, R_TBQBAPQ, &q)) {
        regs = gm.pq_tbq;
    } else if (pq_reg(off, R_RBQBAPQ, &q)) {
        regs = gm.pq_rbq;
    } else if (pq_reg(off, R_IDRPQ, &q)) {
        regs = gm.pq_idr;
    }
    if (regs == NULL || q > gm.pq_count) {
        bad(addr);
        return;
    }
    regs[q - 1u] = v;
    gm.pq_written |= 1u << q;
}

/* ---- Time and reset ------------------------------------------------------------------------- */

void model_advance(uint64_t us)
{
    gm.now_us += us;
    if (phy.partner && !phy.an_complete && (phy.bmcr & BMCR_AN_ENABLE) != 0u && gm.now_us >= phy.an_done_at) {
        phy.an_complete = true;
    }
    tx_run();
}

void model_reset(uint32_t cidr, uint32_t exid)
{
    uint64_t now = gm.now_us;
    memset(&gm, 0, sizeof gm);
    memset(&phy, 0, sizeof phy);
    gm.now_us = now;
    gm.cidr = cidr;
    gm.exid = exid;
    gm.pq_count = (cidr & 0x1Fu) == 0u ? 2u : 5u;
    phy_defaults();
    static const int probe;
    if ((uintptr_t)&probe > 0xFFFFFFFFu) {
        fprintf(stderr, "gmac model: static data above 4 GB: link the test without PIE\n");
        abort();
    }
}
