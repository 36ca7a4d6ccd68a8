/* ksz8081.h - Microchip (Micrel) KSZ8081RNA 10/100 PHY over MDIO (clause 22, through the GMAC). */
#ifndef KSZ8081_H
#define KSZ8081_H

#include <stdbool.h>
#include <stdint.h>

struct ksz8081_link {
    bool up;
    bool speed_100;   /* false: 10 Mbit/s */
    bool full_duplex; /* false: half duplex */
};

/** Scans MDIO addresses 0..31 for PHYID1 0x0022 (Micrel's OUI); returns the address (and the
 *  PHYID2 register in *id2, 0x156x for a KSZ8081), or -1 when no PHY answers. */
int ksz8081_probe(uint16_t *id2);

/** Soft reset, then auto-negotiation advertising 10/100 half/full. False if a step failed. */
bool ksz8081_start(int addr);

/** The link as the PHY reports it now (down while auto-negotiation is still running). */
struct ksz8081_link ksz8081_link(int addr);

#endif /* KSZ8081_H */
