/*
 * chipid.c - the part and its revision from CHIPID_CIDR/CHIPID_EXID (DS60001527 "Chip Identifier
 * (CHIPID)"), checked against Microchip's SAME70_DFP 2.4.166 headers (Zephyr hal_atmel:
 * same70/ and same70b/ component/chipid.h and same70*.h CHIP_CIDR/CHIP_EXID):
 *   CIDR: VERSION [4:0] (0 = rev. A, 1 = rev. B), EPROC [7:5], NVPSIZ [11:8] (0xA 512 KB,
 *         0xC 1 MB, 0xE 2 MB), NVPSIZ2 [15:12], SRAMSIZ [19:16] (0xD 256 KB, 0x2 384 KB),
 *         ARCH [27:20] (0x10 E70, 0x11 S70, 0x12 V71, 0x13 V70), NVPTYP [30:28], EXT [31];
 *   EXID: the package, 0 = J (64 pins), 1 = N (100), 2 = Q (144);
 *   e.g. ATSAME70Q21B: CIDR 0xA1020E01, EXID 0x00000002; ATSAME70Q21 (rev. A): 0xA1020E00.
 * Rev. A parts have two GMAC priority queues, rev. B parts five (the DFP's GMAC_TBQBAPQ[2] vs [5]).
 *
 * This image is linked for 384 KB of SRAM (the stack starts at its top) and drives the GMAC, so it
 * runs on a SAM E70 with 384 KB SRAM (Q/N 20/21) of revision A or B; main.c refuses anything else.
 */
#include "chipid.h"

#include <stdio.h>

#include "same70.h"

#define CIDR_VERSION(c) ((c) & 0x1Fu)
#define CIDR_NVPSIZ(c) (((c) >> 8) & 0xFu)
#define CIDR_SRAMSIZ(c) (((c) >> 16) & 0xFu)
#define CIDR_ARCH(c) (((c) >> 20) & 0xFFu)
#define SRAMSIZ_384K 0x2u

void same70_part_decode(uint32_t cidr, uint32_t exid, struct same70_part *part)
{
    static const char *const families[] = {"E70", "S70", "V71", "V70"}; /* ARCH 0x10..0x13 */
    uint32_t arch = CIDR_ARCH(cidr);
    uint32_t version = CIDR_VERSION(cidr);
    part->cidr = cidr;
    part->exid = exid;
    part->supported = false;
    part->gmac_priority_queues = 0;
    if (arch < 0x10u || arch > 0x13u) {
        part->revision = '?';
        (void)snprintf(part->name, sizeof part->name, "unknown");
        return;
    }
    part->revision = (char)('A' + version);
    char package = exid == 0u ? 'J' : exid == 1u ? 'N' : exid == 2u ? 'Q' : '?';
    const char *flash;
    switch (CIDR_NVPSIZ(cidr)) {
    case 0xAu:
        flash = "19";
        break;
    case 0xCu:
        flash = "20";
        break;
    case 0xEu:
        flash = "21";
        break;
    default:
        flash = "??";
        break;
    }
    const char *suffix = version == 0u ? "" : version == 1u ? "B" : "?";
    (void)snprintf(part->name, sizeof part->name, "ATSAM%s%c%s%s", families[arch - 0x10u], package, flash,
                   suffix);
    if (version == 0u) {
        part->gmac_priority_queues = 2;
    } else if (version == 1u) {
        part->gmac_priority_queues = 5;
    }
    part->supported = arch == 0x10u && part->gmac_priority_queues != 0u && CIDR_SRAMSIZ(cidr) == SRAMSIZ_384K;
}

int same70_part_describe(const struct same70_part *part, char *buf, size_t size)
{
    return snprintf(buf, size, "part %s rev %c cidr=0x%08lx exid=0x%08lx gmac_priority_queues=%u", part->name,
                    part->revision, (unsigned long)part->cidr, (unsigned long)part->exid,
                    part->gmac_priority_queues);
}

void same70_part_read(struct same70_part *part)
{
    same70_part_decode(REG_READ(CHIPID_CIDR), REG_READ(CHIPID_EXID), part);
}
