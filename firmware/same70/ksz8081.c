/*
 * ksz8081.c - KSZ8081RNA PHY, from its data sheet (Microchip DS00002199): IEEE 802.3 clause 22
 * registers 0-5 plus the vendor PHY Control 1 register (0x1E), whose operation mode field gives
 * the negotiated speed and duplex. The board's KSZ8081RNA runs in RMII mode from a 25 MHz crystal
 * and drives the 50 MHz RMII reference clock to the SAME70 (its default; PHY Control 2 bit 7
 * stays 0). The reset line is board wiring (board.c); MDIO frames come from the GMAC (gmac.c).
 */
#include "ksz8081.h"

#include <stddef.h>

#include "fw_platform.h"
#include "gmac.h"

#define REG_BMCR 0x00u   /* basic control */
#define REG_BMSR 0x01u   /* basic status */
#define REG_PHYID1 0x02u
#define REG_PHYID2 0x03u
#define REG_ANAR 0x04u   /* auto-negotiation advertisement */
#define REG_ANLPAR 0x05u /* link partner ability */
#define REG_PHYCTRL1 0x1Eu

#define BMCR_RESET (1u << 15)
#define BMCR_ANENABLE (1u << 12)
#define BMCR_ANRESTART (1u << 9)
#define BMSR_LINK (1u << 2) /* latched low: read twice for the current state */
#define BMSR_ANCOMPLETE (1u << 5)
#define ANAR_SELECTOR_8023 0x0001u
#define ANAR_10HD (1u << 5)
#define ANAR_10FD (1u << 6)
#define ANAR_100HD (1u << 7)
#define ANAR_100FD (1u << 8)
#define PHYCTRL1_MODE_MASK 0x7u /* operation mode indication */
#define PHYCTRL1_MODE_10HD 1u
#define PHYCTRL1_MODE_100HD 2u
#define PHYCTRL1_MODE_10FD 5u
#define PHYCTRL1_MODE_100FD 6u

#define PHYID1_MICREL 0x0022u
#define RESET_TIMEOUT_US 500000u

int ksz8081_probe(uint16_t *id2)
{
    for (unsigned addr = 0; addr < 32u; addr++) {
        uint16_t id1;
        if (gmac_mdio_read(addr, REG_PHYID1, &id1) && id1 == PHYID1_MICREL) {
            uint16_t v = 0;
            (void)gmac_mdio_read(addr, REG_PHYID2, &v);
            if (id2 != NULL) {
                *id2 = v;
            }
            return (int)addr;
        }
    }
    return -1;
}

bool ksz8081_start(int addr)
{
    unsigned a = (unsigned)addr;
    if (!gmac_mdio_write(a, REG_BMCR, BMCR_RESET)) {
        return false;
    }
    uint64_t start = fw_platform_time_us();
    for (;;) {
        uint16_t bmcr;
        if (gmac_mdio_read(a, REG_BMCR, &bmcr) && (bmcr & BMCR_RESET) == 0u) {
            break;
        }
        if (fw_platform_time_us() - start > RESET_TIMEOUT_US) {
            return false;
        }
    }
    return gmac_mdio_write(a, REG_ANAR, ANAR_100FD | ANAR_100HD | ANAR_10FD | ANAR_10HD | ANAR_SELECTOR_8023) &&
           gmac_mdio_write(a, REG_BMCR, BMCR_ANENABLE | BMCR_ANRESTART);
}

struct ksz8081_link ksz8081_link(int addr)
{
    struct ksz8081_link link = {false, false, false};
    unsigned a = (unsigned)addr;
    uint16_t bmsr;
    uint16_t ctrl1;
    if (!gmac_mdio_read(a, REG_BMSR, &bmsr) || !gmac_mdio_read(a, REG_BMSR, &bmsr) ||
        (bmsr & BMSR_LINK) == 0u || !gmac_mdio_read(a, REG_PHYCTRL1, &ctrl1)) {
        return link;
    }
    switch (ctrl1 & PHYCTRL1_MODE_MASK) {
    case PHYCTRL1_MODE_100FD:
        link.speed_100 = true;
        link.full_duplex = true;
        break;
    case PHYCTRL1_MODE_100HD:
        link.speed_100 = true;
        break;
    case PHYCTRL1_MODE_10FD:
        link.full_duplex = true;
        break;
    case PHYCTRL1_MODE_10HD:
        break;
    default: {
        /* no mode indicated (still negotiating, or a PHY without that register): resolve from
         * the advertised and the partner's abilities once auto-negotiation is complete */
        uint16_t anar;
        uint16_t anlpar;
        if ((bmsr & BMSR_ANCOMPLETE) == 0u || !gmac_mdio_read(a, REG_ANAR, &anar) ||
            !gmac_mdio_read(a, REG_ANLPAR, &anlpar)) {
            return link;
        }
        uint16_t common = anar & anlpar;
        if ((common & ANAR_100FD) != 0u) {
            link.speed_100 = true;
            link.full_duplex = true;
        } else if ((common & ANAR_100HD) != 0u) {
            link.speed_100 = true;
        } else if ((common & ANAR_10FD) != 0u) {
            link.full_duplex = true;
        }
        break;
    }
    }
    link.up = true;
    return link;
}
