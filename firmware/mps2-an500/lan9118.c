/*
 * lan9118.c - SMSC LAN9118 driver written from the controller's datasheet: soft reset, MAC
 * address and MAC_CR through the indirect MAC CSR interface, then programmed-I/O frames through
 * the TX/RX data FIFOs with TX command words A/B and RX status words.
 */
#include "lan9118.h"

#include <string.h>

#include "fw_netif.h"
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "mps2_an500.h"
#include "netif/ethernet.h"

#define R(off) REG32(LAN9118_BASE + (off))
#define RX_DATA_FIFO R(0x00u)
#define TX_DATA_FIFO R(0x20u)
#define RX_STATUS_FIFO R(0x40u)
#define TX_STATUS_FIFO R(0x48u)
#define ID_REV R(0x50u)
#define IRQ_CFG R(0x54u)
#define INT_STS R(0x58u)
#define INT_EN R(0x5Cu)
#define BYTE_TEST R(0x64u)
#define TX_CFG R(0x70u)
#define HW_CFG R(0x74u)
#define RX_FIFO_INF R(0x7Cu)
#define TX_FIFO_INF R(0x80u)
#define PMT_CTRL R(0x84u)
#define MAC_CSR_CMD R(0xA4u)
#define MAC_CSR_DATA R(0xA8u)

#define BYTE_TEST_VALUE 0x87654321u
#define HW_CFG_SRST (1u << 0)
#define PMT_CTRL_READY (1u << 0)
#define TX_CFG_TX_ON (1u << 1)
#define TX_CFG_TXSAO (1u << 2) /* TX status FIFO may overrun: statuses are not read */
#define CSR_BUSY (1u << 31)
#define CSR_READ (1u << 30)
#define MAC_CR 1u
#define MAC_ADDRH 2u
#define MAC_ADDRL 3u
#define MAC_CR_RXEN (1u << 2)
#define MAC_CR_TXEN (1u << 3)
#define MAC_CR_FDPX (1u << 20)
#define IRQ_CFG_TYPE (1u << 0) /* push-pull */
#define IRQ_CFG_POL (1u << 4)  /* active high */
#define IRQ_CFG_EN (1u << 8)
#define INT_RSFL (1u << 3) /* RX status FIFO above its level (level 0: any frame) */
#define TXA_FIRST_SEG (1u << 13)
#define TXA_LAST_SEG (1u << 12)
#define RXS_ERROR (1u << 15)
#define FRAME_MAX 1536u
#define SPIN_LIMIT 1000000u

static uint32_t frame_words[FRAME_MAX / 4u];

static bool mac_csr_wait(void)
{
    for (uint32_t i = 0; i < SPIN_LIMIT; i++) {
        if ((MAC_CSR_CMD & CSR_BUSY) == 0) {
            return true;
        }
    }
    return false;
}

static void mac_csr_write(uint32_t reg, uint32_t value)
{
    mac_csr_wait();
    MAC_CSR_DATA = value;
    MAC_CSR_CMD = CSR_BUSY | reg;
    mac_csr_wait();
}

static err_t lan9118_output(struct netif *netif, struct pbuf *p)
{
    (void)netif;
    uint32_t len = p->tot_len;
    if (len > FRAME_MAX) {
        LINK_STATS_INC(link.lenerr);
        return ERR_BUF;
    }
    uint32_t words = (len + 3u) / 4u;
    for (uint32_t i = 0; (TX_FIFO_INF & 0xFFFFu) < words * 4u + 8u; i++) {
        if (i == SPIN_LIMIT) {
            LINK_STATS_INC(link.drop); /* the TX FIFO did not drain: drop, as a full ring would */
            return ERR_OK;
        }
    }
    frame_words[words - 1u] = 0;
    pbuf_copy_partial(p, frame_words, (u16_t)len, 0);
    TX_DATA_FIFO = TXA_FIRST_SEG | TXA_LAST_SEG | len;
    TX_DATA_FIFO = (len << 16) | len; /* packet tag = length, packet length */
    for (uint32_t i = 0; i < words; i++) {
        TX_DATA_FIFO = frame_words[i];
    }
    LINK_STATS_INC(link.xmit);
    return ERR_OK;
}

int lan9118_poll(struct netif *netif, int max_frames)
{
    int count = 0;
    while (count < max_frames && ((RX_FIFO_INF >> 16) & 0xFFu) != 0u) {
        uint32_t status = RX_STATUS_FIFO;
        uint32_t len = (status >> 16) & 0x3FFFu; /* includes the 4-byte FCS */
        uint32_t words = (len + 3u) / 4u;
        count++;
        if (words > FRAME_MAX / 4u) {
            for (uint32_t i = 0; i < words; i++) {
                (void)RX_DATA_FIFO;
            }
            LINK_STATS_INC(link.lenerr);
            continue;
        }
        for (uint32_t i = 0; i < words; i++) {
            frame_words[i] = RX_DATA_FIFO;
        }
        if ((status & RXS_ERROR) != 0u || len < 18u) {
            LINK_STATS_INC(link.err);
            continue;
        }
        struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)(len - 4u), PBUF_POOL);
        if (p == NULL) {
            LINK_STATS_INC(link.memerr);
            LINK_STATS_INC(link.drop);
            continue;
        }
        pbuf_take(p, frame_words, (u16_t)(len - 4u));
        LINK_STATS_INC(link.recv);
        if (netif->input(p, netif) != ERR_OK) {
            pbuf_free(p);
        }
    }
    return count;
}

void lan9118_wake_on_rx(void)
{
    INT_STS = INT_RSFL;
    INT_EN = INT_RSFL;
    IRQ_CFG = IRQ_CFG_EN | IRQ_CFG_POL | IRQ_CFG_TYPE;
}

void lan9118_clear_wake(void)
{
    INT_STS = INT_RSFL; /* write 1 to clear; a frame arriving after this sets it again */
}

err_t lan9118_netif_init(struct netif *netif)
{
    const uint8_t *mac = (const uint8_t *)netif->state;
    if (BYTE_TEST != BYTE_TEST_VALUE) {
        return ERR_IF;
    }
    HW_CFG = HW_CFG_SRST;
    for (uint32_t i = 0; (HW_CFG & HW_CFG_SRST) != 0u; i++) {
        if (i == SPIN_LIMIT) {
            return ERR_IF;
        }
    }
    for (uint32_t i = 0; (PMT_CTRL & PMT_CTRL_READY) == 0u; i++) {
        if (i == SPIN_LIMIT) {
            return ERR_IF;
        }
    }
    mac_csr_write(MAC_ADDRL, (uint32_t)mac[0] | ((uint32_t)mac[1] << 8) | ((uint32_t)mac[2] << 16) |
                                 ((uint32_t)mac[3] << 24));
    mac_csr_write(MAC_ADDRH, (uint32_t)mac[4] | ((uint32_t)mac[5] << 8));
    mac_csr_write(MAC_CR, MAC_CR_RXEN | MAC_CR_TXEN | MAC_CR_FDPX);
    TX_CFG = TX_CFG_TX_ON | TX_CFG_TXSAO;
    (void)ID_REV;
    (void)TX_STATUS_FIFO;

    fw_netif_ethernet_setup(netif, 'e', 'n', lan9118_output, mac);
    return ERR_OK;
}
