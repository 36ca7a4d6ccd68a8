/*
 * gmac_model.h - test equipment: a register-level model of the SAME70's GMAC (queue 0's DMA, the
 * registers the board's gmac.c touches, the statistics it reads), of the KSZ8081RNA behind its
 * MDIO port and of the CHIPID registers, for host tests of the board's unmodified gmac.c,
 * ksz8081.c and chipid.c (compiled with SAME70_REGISTER_MODEL: same70.h's REG_READ/REG_WRITE
 * call same70_model_read/same70_model_write). Written from the data sheets' register
 * descriptions (DS60001527 "GMAC", KSZ8081RNA DS00002199); gmac_model.c says which behaviour
 * comes from where.
 *
 * Descriptors and buffers are the driver's own static arrays; their 32-bit addresses are the
 * host addresses, so the tests link without PIE (everything static lies below 4 GB).
 */
#ifndef GMAC_MODEL_H
#define GMAC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_PHY_ADDR 1u        /* MDIO address the model's PHY answers on (the driver scans) */
#define MODEL_FRAME_MAX 1536u
#define MODEL_TX_FRAMES 512u     /* transmitted frames kept for the test */
#define MODEL_AN_US 1500000u     /* auto-negotiation time after a restart or a partner appearing */

/* CHIPID values of the DFP headers (SAME70_DFP 2.4.166: same70b/same70q21b.h, same70/same70q21.h) */
#define MODEL_CIDR_SAME70Q21B 0xA1020E01u
#define MODEL_CIDR_SAME70Q21A 0xA1020E00u
#define MODEL_EXID_Q 0x00000002u

/* link partner abilities, as ANAR/ANLPAR bits */
#define MODEL_10HD (1u << 5)
#define MODEL_10FD (1u << 6)
#define MODEL_100HD (1u << 7)
#define MODEL_100FD (1u << 8)

enum model_tx_error { MODEL_TX_OK, MODEL_TX_RETRY_LIMIT, MODEL_TX_AHB_ERROR, MODEL_TX_UNDERRUN };
enum model_rx_result { MODEL_RX_STORED, MODEL_RX_OFF, MODEL_RX_NO_BUFFER, MODEL_RX_OVERRUN };

struct model_frame {
    uint16_t len;
    uint8_t data[MODEL_FRAME_MAX];
};

struct gmac_model {
    /* registers */
    uint32_t ncr, ncfgr, ur, dcfgr, tsr, rsr, isr, man, hrb, hrt, sab1, sat1, idr, pmc;
    uint32_t rbqb, tbqb;       /* queue base addresses as written */
    uint32_t rx_ptr, tx_ptr;   /* the DMA's internal queue pointers (not readable by software) */
    bool txgo;                 /* transmitter active (TSR.TXGO) */
    bool rx_stalled;           /* receive DMA stopped after BNA, until RXEN is cleared */
    bool tx_hold;              /* test: transmitter paused (frames queue up) */
    bool overrun_next;         /* test: the next frame overruns the receive packet buffer */
    enum model_tx_error tx_fail_next;
    uint32_t pq_count;         /* priority queues of the modelled part */
    uint32_t pq_tbq[5], pq_rbq[5], pq_idr[5];
    uint32_t pq_written;       /* bit q: a register of priority queue q was written */
    /* statistics (cleared on read, saturating at their field width) */
    uint32_t st_ft, st_fr, st_tur, st_fcse, st_rre, st_roe;
    /* CHIPID */
    uint32_t cidr, exid;
    /* what software did wrong: accesses the part has no register for, MDIO without MPE, ... */
    uint32_t bad_accesses;
    uint32_t last_bad_addr;
    uint32_t ignored_writes;   /* RBQB/TBQB written while the queue ran (ignored, as the DS says) */
    /* transmitted frames */
    size_t tx_count;
    struct model_frame tx[MODEL_TX_FRAMES];
    /* time */
    uint64_t now_us;
};

/* the PHY */
struct ksz8081_model {
    uint16_t bmcr, anar, phyctrl2;
    unsigned reset_reads;      /* BMCR reads that still show the reset bit */
    bool partner;              /* a link partner is connected */
    uint16_t partner_abilities;
    bool an_complete;
    uint64_t an_done_at;
    bool link_fell;            /* BMSR link status latched low since the last read */
    uint32_t resets;
};

extern struct gmac_model gm;
extern struct ksz8081_model phy;

/** Power-on reset of the whole model: a part with these CHIPID values, no link partner. */
void model_reset(uint32_t cidr, uint32_t exid);

/** Time passes: auto-negotiation progresses, the transmitter sends what it may. */
void model_advance(uint64_t us);

/** A frame arrives from the wire (FCS already removed, as with NCFGR.RFCS). */
enum model_rx_result model_rx_frame(const uint8_t *data, size_t len);

/** A frame with a bad FCS arrives (dropped by the MAC, counted in FCSE). */
void model_rx_bad_fcs(void);

/** Link partner connected (abilities: MODEL_10HD...) or gone. */
void model_phy_partner(bool connected, uint16_t abilities);

#endif /* GMAC_MODEL_H */
