/*
 * gmac.c - the SAME70's GMAC (DS60001527 "Ethernet MAC (GMAC)") as a polled lwIP netif.
 *
 * RMII to the KSZ8081 (ksz8081.c, over this file's MDIO). Descriptor rings and frame buffers live
 * in the linker's .nocache region, which board.c makes normal non-cacheable memory with the MPU,
 * so the CPU and the DMA see the same bytes without cache maintenance; barriers order the
 * descriptor hand-overs. One FW_GMAC_BUF_SIZE buffer per descriptor holds a whole frame
 * (NCFGR.MAXFS: at most 1536 bytes, FCS removed), though multi-buffer frames are assembled too.
 *
 * Receive: the GMAC fills the buffer of the next descriptor it owns (word 0 bit 0 = 0), then sets
 * the ownership bit; the driver walks from its ring index while the bit is set, copies SOF..EOF
 * into a PBUF_POOL pbuf for netif->input and hands the descriptors back.
 * Transmit: the frame is copied into the next free buffer, its descriptor gets length + LAST with
 * USED clear, then TSTART; the GMAC sets USED again once the frame is sent.
 * Queue 0 only: the priority queues the part has (1..5 on rev. B, 1..2 on rev. A: CHIPID, see
 * chipid.c) point at dummy descriptors (TX: used, RX: software owned), so they never fetch
 * garbage; registers of queues the part lacks are never written. No GMAC interrupt is used.
 *
 * Receive errors: after "buffer not available" (RSR.BNA: the ring was full) or a receive overrun
 * (RSR.RXOVR) the receiver is restarted as known-good drivers do (Zephyr's eth_sam_gmac.c
 * rx_error_handler; Linux macb re-enables RX on RXUBR because the DMA can stop under load):
 * RXEN off, the complete frames still in the ring are delivered, every descriptor goes back to
 * the GMAC, the queue base is rewritten (RBQB can be written only while RXEN is 0; the driver
 * does not rely on clearing RXEN to move the DMA's internal pointer) and RXEN goes on again. The
 * driver does not rely on where the DMA resumes after BNA either. Transmit errors (retry limit,
 * AHB error, underrun) restart the transmitter on an empty ring.
 */
#include "gmac.h"

#include <string.h>

#include "board.h"
#include "chipid.h"
#include "fw_config.h"
#include "fw_netif.h"
#include "fw_platform.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "same70.h"

#if !defined(FW_GMAC_RX_DESCS) || !defined(FW_GMAC_TX_DESCS) || !defined(FW_GMAC_BUF_SIZE)
#error "fw_config.h gives the GMAC ring sizes for this board"
#endif
#if FW_GMAC_BUF_SIZE % 64 != 0 || FW_GMAC_BUF_SIZE < 1536 || FW_GMAC_BUF_SIZE > 255 * 64
#error "FW_GMAC_BUF_SIZE: a multiple of 64 (DCFGR.DRBS) that holds a 1536-byte frame"
#endif

#define MDIO_TIMEOUT_US 2000u   /* one frame is 64 MDC cycles: ~27 us at 2.34 MHz */
#define TX_WAIT_US 20000u       /* a full transmit ring drains in < 2 ms at 100 Mbit/s, 15 at 10 */
#define NCFGR_BASE (GMAC_NCFGR_CLK_MCK_64 | GMAC_NCFGR_DBW_32 | GMAC_NCFGR_MAXFS | GMAC_NCFGR_RFCS)

struct gmac_desc {
    volatile uint32_t w0; /* buffer address (+ RX: WRAP, OWN) */
    volatile uint32_t w1; /* RX: status; TX: length and flags (+ WRAP, USED) */
};

#define NOCACHE __attribute__((section(".nocache"), aligned(32)))
static struct gmac_desc rx_desc[FW_GMAC_RX_DESCS] NOCACHE;
static struct gmac_desc tx_desc[FW_GMAC_TX_DESCS] NOCACHE;
static struct gmac_desc rx_dummy[GMAC_PRIORITY_QUEUES_MAX] NOCACHE;
static struct gmac_desc tx_dummy[GMAC_PRIORITY_QUEUES_MAX] NOCACHE;
static uint8_t rx_buf[FW_GMAC_RX_DESCS][FW_GMAC_BUF_SIZE] NOCACHE;
static uint8_t tx_buf[FW_GMAC_TX_DESCS][FW_GMAC_BUF_SIZE] NOCACHE;

static uint32_t rx_next; /* the next descriptor the GMAC fills */
static uint32_t tx_head; /* the next descriptor to fill */
static uint32_t tx_tail; /* the oldest descriptor not yet sent */
static uint32_t tx_busy; /* descriptors handed to the GMAC, not yet back */
static uint32_t ncr;     /* GMAC_NCR as last written (TSTART is added to it) */
static uint32_t priority_queues; /* the part's GMAC priority queues (CHIPID) */
static int phy_addr = -1;
static uint16_t phy_id2;
static struct ksz8081_link link_state;

static uint32_t addr_of(const volatile void *p)
{
    return (uint32_t)(uintptr_t)p;
}

/* ---- MDIO (GMAC_MAN; needs NCR.MPE) ----------------------------------------------------------- */

static bool mdio_wait_idle(void)
{
    uint64_t start = fw_platform_time_us();
    while ((REG_READ(GMAC_NSR) & GMAC_NSR_IDLE) == 0u) {
        if (fw_platform_time_us() - start > MDIO_TIMEOUT_US) {
            return false;
        }
    }
    return true;
}

bool gmac_mdio_read(unsigned phy, unsigned reg, uint16_t *value)
{
    if (!mdio_wait_idle()) {
        return false;
    }
    REG_WRITE(GMAC_MAN, GMAC_MAN_CLTTO | GMAC_MAN_OP_READ | GMAC_MAN_PHYA(phy) | GMAC_MAN_REGA(reg) | GMAC_MAN_WTN);
    if (!mdio_wait_idle()) {
        return false;
    }
    *value = (uint16_t)GMAC_MAN_DATA(REG_READ(GMAC_MAN));
    return true;
}

bool gmac_mdio_write(unsigned phy, unsigned reg, uint16_t value)
{
    if (!mdio_wait_idle()) {
        return false;
    }
    REG_WRITE(GMAC_MAN, GMAC_MAN_CLTTO | GMAC_MAN_OP_WRITE | GMAC_MAN_PHYA(phy) | GMAC_MAN_REGA(reg) |
                            GMAC_MAN_WTN | GMAC_MAN_DATA(value));
    return mdio_wait_idle();
}

/* ---- Rings -------------------------------------------------------------------------------------- */

static void tx_ring_init(void)
{
    for (uint32_t i = 0; i < FW_GMAC_TX_DESCS; i++) {
        tx_desc[i].w0 = addr_of(tx_buf[i]);
        tx_desc[i].w1 = GMAC_TXW1_USED | (i == FW_GMAC_TX_DESCS - 1u ? GMAC_TXW1_WRAP : 0u);
    }
    tx_head = 0;
    tx_tail = 0;
    tx_busy = 0;
    cpu_dsb();
    REG_WRITE(GMAC_TBQB, addr_of(tx_desc));
}

static void rx_ring_init(void)
{
    for (uint32_t i = 0; i < FW_GMAC_RX_DESCS; i++) {
        rx_desc[i].w1 = 0;
        rx_desc[i].w0 = (addr_of(rx_buf[i]) & GMAC_RXW0_ADDR_MASK) |
                        (i == FW_GMAC_RX_DESCS - 1u ? GMAC_RXW0_WRAP : 0u);
    }
    rx_next = 0;
    cpu_dsb();
    REG_WRITE(GMAC_RBQB, addr_of(rx_desc));
}

/* Both rings from scratch; only while the receiver and the transmitter are disabled. */
static void rings_init(void)
{
    rx_ring_init();
    tx_ring_init();
    for (uint32_t q = 1; q <= priority_queues; q++) {
        tx_dummy[q - 1u].w0 = 0;
        tx_dummy[q - 1u].w1 = GMAC_TXW1_USED | GMAC_TXW1_WRAP;
        rx_dummy[q - 1u].w1 = 0;
        rx_dummy[q - 1u].w0 = GMAC_RXW0_OWN | GMAC_RXW0_WRAP;
    }
    cpu_dsb();
    for (uint32_t q = 1; q <= priority_queues; q++) {
        REG_WRITE(GMAC_TBQBAPQ(q), addr_of(&tx_dummy[q - 1u]));
        REG_WRITE(GMAC_RBQBAPQ(q), addr_of(&rx_dummy[q - 1u]));
    }
}

static void ncr_write(uint32_t value)
{
    ncr = value;
    REG_WRITE(GMAC_NCR, value);
}

/* ---- Transmit ------------------------------------------------------------------------------------ */

static void tx_reclaim(void)
{
    while (tx_busy > 0u) {
        uint32_t w1 = tx_desc[tx_tail].w1;
        if ((w1 & GMAC_TXW1_USED) == 0u) {
            break;
        }
        if ((w1 & GMAC_TXW1_ERRORS) != 0u) {
            LINK_STATS_INC(link.err);
        }
        tx_tail = (tx_tail + 1u) % FW_GMAC_TX_DESCS;
        tx_busy--;
    }
}

/* Transmit errors that stop the transmitter (retry limit, AHB error, underrun) restart it on an
 * empty ring (clearing TXEN puts the GMAC's transmit pointer back at the queue base);
 * a TSTART that came while the GMAC was just stopping is repeated. */
static void tx_service(void)
{
    tx_reclaim();
    uint32_t tsr = REG_READ(GMAC_TSR);
    /* an underrun shows in ISR.TUR only (TSR has no underrun flag on this part); ISR is
     * cleared by reading and nothing else uses it (no GMAC interrupt) */
    bool underrun = (REG_READ(GMAC_ISR) & GMAC_ISR_TUR) != 0u;
    if (underrun || (tsr & (GMAC_TSR_RLE | GMAC_TSR_TFC | GMAC_TSR_HRESP)) != 0u) {
        REG_WRITE(GMAC_TSR, tsr);
        ncr_write(ncr & ~GMAC_NCR_TXEN);
        for (; tx_busy > 0u; tx_busy--) {
            LINK_STATS_INC(link.drop);
        }
        tx_ring_init();
        ncr_write(ncr | GMAC_NCR_TXEN);
        LINK_STATS_INC(link.err);
        return;
    }
    if ((tsr & (GMAC_TSR_UBR | GMAC_TSR_COL | GMAC_TSR_TXCOMP)) != 0u) {
        REG_WRITE(GMAC_TSR, tsr & (GMAC_TSR_UBR | GMAC_TSR_COL | GMAC_TSR_TXCOMP));
    }
    if (tx_busy > 0u && (tsr & GMAC_TSR_TXGO) == 0u) {
        REG_WRITE(GMAC_NCR, ncr | GMAC_NCR_TSTART);
    }
}

static err_t gmac_output(struct netif *netif, struct pbuf *p)
{
    (void)netif;
    uint32_t len = p->tot_len;
    if (len > FW_GMAC_BUF_SIZE) {
        LINK_STATS_INC(link.lenerr);
        return ERR_BUF;
    }
    tx_reclaim();
    if (tx_busy == FW_GMAC_TX_DESCS) {
        uint64_t start = fw_platform_time_us();
        while (tx_busy == FW_GMAC_TX_DESCS) {
            tx_service();
            if (fw_platform_time_us() - start > TX_WAIT_US) {
                LINK_STATS_INC(link.drop); /* the ring did not drain: drop, as a full ring would */
                return ERR_OK;
            }
        }
    }
    uint32_t i = tx_head;
    pbuf_copy_partial(p, tx_buf[i], (u16_t)len, 0);
    cpu_dmb(); /* the frame's bytes before the descriptor that hands them over */
    tx_desc[i].w1 = (len & GMAC_TXW1_LEN_MASK) | GMAC_TXW1_LAST | (i == FW_GMAC_TX_DESCS - 1u ? GMAC_TXW1_WRAP : 0u);
    cpu_dsb(); /* the descriptor in memory before TSTART */
    REG_WRITE(GMAC_NCR, ncr | GMAC_NCR_TSTART);
    tx_head = (i + 1u) % FW_GMAC_TX_DESCS;
    tx_busy++;
    LINK_STATS_INC(link.xmit);
    return ERR_OK;
}

/* ---- Receive ------------------------------------------------------------------------------------- */

static uint32_t rx_step(uint32_t i)
{
    return (i + 1u) % FW_GMAC_RX_DESCS;
}

/* Gives n descriptors from `first` back to the GMAC. */
static void rx_release(uint32_t first, uint32_t n)
{
    cpu_dmb(); /* every read of the buffers before the GMAC may write them again */
    for (uint32_t i = first; n > 0u; n--, i = rx_step(i)) {
        rx_desc[i].w1 = 0;
        cpu_dmb(); /* the status word cleared before ownership goes back (a DMA that takes the
                    * descriptor at once must not see the old status) */
        rx_desc[i].w0 &= ~GMAC_RXW0_OWN;
    }
}

static void rx_deliver(struct netif *netif, uint32_t first, uint32_t n, uint32_t len)
{
    if (len < 14u || len > n * FW_GMAC_BUF_SIZE || len > 0xFFFFu) {
        LINK_STATS_INC(link.lenerr);
        LINK_STATS_INC(link.drop);
        rx_release(first, n);
        return;
    }
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
    if (p == NULL) {
        LINK_STATS_INC(link.memerr);
        LINK_STATS_INC(link.drop);
        rx_release(first, n);
        return;
    }
    uint32_t off = 0;
    for (uint32_t i = first; off < len; i = rx_step(i)) {
        uint32_t chunk = len - off < FW_GMAC_BUF_SIZE ? len - off : FW_GMAC_BUF_SIZE;
        (void)pbuf_take_at(p, rx_buf[i], (u16_t)chunk, (u16_t)off);
        off += chunk;
    }
    rx_release(first, n);
    LINK_STATS_INC(link.recv);
    if (netif->input(p, netif) != ERR_OK) {
        pbuf_free(p);
    }
}

/* Takes up to max_frames complete frames from rx_next on; returns how many it took (frames and
 * dropped fragments). */
static int rx_walk(struct netif *netif, int max_frames)
{
    int count = 0;
    while (count < max_frames) {
        uint32_t first = rx_next;
        if ((rx_desc[first].w0 & GMAC_RXW0_OWN) == 0u) {
            break;
        }
        cpu_dmb(); /* the ownership bit before the status and the data */
        uint32_t w1 = rx_desc[first].w1;
        count++;
        if ((w1 & GMAC_RXW1_SOF) == 0u) { /* the tail of a frame whose start was dropped */
            LINK_STATS_INC(link.err);
            rx_release(first, 1);
            rx_next = rx_step(first);
            continue;
        }
        uint32_t last = first;
        uint32_t n = 1;
        bool fragment = false;
        while ((w1 & GMAC_RXW1_EOF) == 0u) {
            uint32_t i = rx_step(last);
            if (n == FW_GMAC_RX_DESCS) {
                fragment = true; /* no end anywhere in the ring */
                break;
            }
            if ((rx_desc[i].w0 & GMAC_RXW0_OWN) == 0u) {
                return count - 1; /* the rest of this frame is still being received */
            }
            cpu_dmb();
            w1 = rx_desc[i].w1;
            if ((w1 & GMAC_RXW1_SOF) != 0u) {
                fragment = true; /* a new frame began before this one ended */
                break;
            }
            last = i;
            n++;
        }
        if (fragment) {
            LINK_STATS_INC(link.err);
            rx_release(first, n);
            rx_next = rx_step(last);
            continue;
        }
        rx_next = rx_step(last);
        rx_deliver(netif, first, n, w1 & GMAC_RXW1_LEN_MASK);
    }
    return count;
}

/* The receiver after BNA or an overrun: stopped, the complete frames in the ring delivered, all
 * descriptors back to the GMAC from the queue base, started again (see the top of the file). */
static int rx_restart(struct netif *netif)
{
    ncr_write(ncr & ~GMAC_NCR_RXEN);
    REG_WRITE(GMAC_RSR, GMAC_RSR_ALL); /* with the receiver stopped no new flag can come */
    int count = rx_walk(netif, (int)FW_GMAC_RX_DESCS);
    rx_ring_init(); /* descriptors returned, rx_next = 0, RBQB rewritten */
    ncr_write(ncr | GMAC_NCR_RXEN);
    LINK_STATS_INC(link.err);
    return count;
}

int gmac_poll(struct netif *netif, int max_frames)
{
    tx_service();
    uint32_t rsr = REG_READ(GMAC_RSR); /* flags: the drops are counted from the statistics registers */
    if ((rsr & (GMAC_RSR_BNA | GMAC_RSR_RXOVR)) != 0u && (ncr & GMAC_NCR_RXEN) != 0u) {
        return rx_restart(netif);
    }
    if ((rsr & GMAC_RSR_ALL) != 0u) {
        REG_WRITE(GMAC_RSR, rsr & GMAC_RSR_ALL);
    }
    return rx_walk(netif, max_frames);
}

/* ---- Link ---------------------------------------------------------------------------------------- */

/* The GMAC's drop counters (statistics registers, cleared by reading) into lwIP's link stats. */
static void collect_statistics(void)
{
    uint32_t no_buffer = REG_READ(GMAC_RRE); /* frames lost: no receive descriptor free */
    uint32_t overrun = REG_READ(GMAC_ROE);   /* frames lost: DMA could not keep up */
    uint32_t bad_fcs = REG_READ(GMAC_FCSE);
#if LINK_STATS
    lwip_stats.link.drop += (STAT_COUNTER)(no_buffer + overrun);
    lwip_stats.link.chkerr += (STAT_COUNTER)bad_fcs;
#else
    (void)no_buffer;
    (void)overrun;
    (void)bad_fcs;
#endif
}

bool gmac_link_check(struct netif *netif, struct ksz8081_link *state)
{
    collect_statistics();
    if (phy_addr < 0) { /* absent at start (or still in reset then): look again */
        phy_addr = ksz8081_probe(&phy_id2);
        if (phy_addr >= 0) {
            (void)ksz8081_start(phy_addr);
        }
    }
    struct ksz8081_link now = {false, false, false};
    if (phy_addr >= 0) {
        now = ksz8081_link(phy_addr);
    }
    if (now.up && (!link_state.up || now.speed_100 != link_state.speed_100 ||
                   now.full_duplex != link_state.full_duplex)) {
        /* speed and duplex into NCFGR with the receiver and transmitter off; turning them off
         * rewinds the queues, so both rings restart empty (nothing arrived while the link was
         * down; frames still queued for sending are dropped) */
        ncr_write(GMAC_NCR_MPE);
        for (; tx_busy > 0u; tx_busy--) {
            LINK_STATS_INC(link.drop);
        }
        REG_WRITE(GMAC_NCFGR,
                  NCFGR_BASE | (now.speed_100 ? GMAC_NCFGR_SPD : 0u) | (now.full_duplex ? GMAC_NCFGR_FD : 0u));
        REG_WRITE(GMAC_TSR, GMAC_TSR_ALL);
        REG_WRITE(GMAC_RSR, GMAC_RSR_ALL);
        rings_init();
        ncr_write(GMAC_NCR_MPE | GMAC_NCR_RXEN | GMAC_NCR_TXEN);
        link_state = now;
        netif_set_link_up(netif);
    } else if (!now.up && link_state.up) {
        link_state = now;
        netif_set_link_down(netif);
    }
    if (state != NULL) {
        *state = now;
    }
    return now.up;
}

int gmac_phy_address(uint16_t *id2)
{
    if (id2 != NULL) {
        *id2 = phy_id2;
    }
    return phy_addr;
}

/* ---- Init ---------------------------------------------------------------------------------------- */

err_t gmac_netif_init(struct netif *netif)
{
    /* The MAC address comes from the configuration (FW_BOARD_MAC, through netif->state); the
     * Xplained's AT24MAC402 serial EEPROM holds a unique EUI-48 that could be read instead. */
    const uint8_t *mac = (const uint8_t *)netif->state;

    struct same70_part part;
    same70_part_read(&part);
    priority_queues = part.gmac_priority_queues <= GMAC_PRIORITY_QUEUES_MAX ? part.gmac_priority_queues : 0u;

    board_eth_pins_init();

    link_state = (struct ksz8081_link){false, false, false}; /* as the netif: down until checked */
    ncr_write(0);                   /* receiver, transmitter and MDIO off */
    REG_WRITE(GMAC_NCR, GMAC_NCR_CLRSTAT); /* statistics to zero */
    REG_WRITE(GMAC_IDR, 0xFFFFFFFFu);      /* polled: no interrupt */
    for (uint32_t q = 1; q <= priority_queues; q++) {
        REG_WRITE(GMAC_IDRPQ(q), 0xFFFFFFFFu);
    }
    (void)REG_READ(GMAC_ISR);
    REG_WRITE(GMAC_TSR, GMAC_TSR_ALL);
    REG_WRITE(GMAC_RSR, GMAC_RSR_ALL);
    REG_WRITE(GMAC_UR, 0); /* RMII (GMAC_UR_MII would select MII) */
    REG_WRITE(GMAC_NCFGR, NCFGR_BASE | GMAC_NCFGR_SPD | GMAC_NCFGR_FD); /* until the PHY tells */
    REG_WRITE(GMAC_DCFGR, GMAC_DCFGR_FBLDO_INCR4 | GMAC_DCFGR_RXBMS_FULL | GMAC_DCFGR_TXPBMS |
                              GMAC_DCFGR_DRBS(FW_GMAC_BUF_SIZE));
    REG_WRITE(GMAC_HRB, 0); /* no multicast/unicast hash matching */
    REG_WRITE(GMAC_HRT, 0);
    REG_WRITE(GMAC_SAB1,
              (uint32_t)mac[0] | ((uint32_t)mac[1] << 8) | ((uint32_t)mac[2] << 16) | ((uint32_t)mac[3] << 24));
    REG_WRITE(GMAC_SAT1, (uint32_t)mac[4] | ((uint32_t)mac[5] << 8)); /* writing the top half enables it */
    rings_init();

    ncr_write(GMAC_NCR_MPE);
    phy_addr = ksz8081_probe(&phy_id2);
    if (phy_addr >= 0) {
        (void)ksz8081_start(phy_addr);
    }
    ncr_write(GMAC_NCR_MPE | GMAC_NCR_RXEN | GMAC_NCR_TXEN);

    fw_netif_ethernet_setup(netif, 'e', 'n', gmac_output, mac);
    netif->flags &= (u8_t)~NETIF_FLAG_LINK_UP; /* gmac_link_check raises it when the PHY has a link */
    return ERR_OK;
}
