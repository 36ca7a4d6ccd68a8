/*
 * test_same70_chipid.c - chipid.c's decoding of CHIPID_CIDR/EXID for every SAM E70 part of the
 * DFP headers (SAME70_DFP 2.4.166 same70/ and same70b/ same70*.h: CHIP_CIDR, CHIP_EXID), the
 * parts this image refuses, and the board line of the boot banner.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "chipid.h"
#include "gmac_model.h"

static void check_part(uint32_t cidr, uint32_t exid, const char *name, char rev, unsigned queues, bool supported)
{
    struct same70_part p;
    same70_part_decode(cidr, exid, &p);
    bool ok = strcmp(p.name, name) == 0 && p.revision == rev && p.gmac_priority_queues == queues &&
              p.supported == supported;
    CHECK(ok);
    if (!ok) {
        fprintf(stderr, "  0x%08x/0x%08x: %s rev %c queues %u supported %d\n", (unsigned)cidr, (unsigned)exid,
                p.name, p.revision, p.gmac_priority_queues, (int)p.supported);
    }
}

int main(void)
{
    /* rev. B (same70b/) */
    check_part(0xA1020E01u, 2, "ATSAME70Q21B", 'B', 5, true);
    check_part(0xA1020C01u, 2, "ATSAME70Q20B", 'B', 5, true);
    check_part(0xA10D0A01u, 2, "ATSAME70Q19B", 'B', 5, false); /* 256 KB SRAM */
    check_part(0xA1020E01u, 1, "ATSAME70N21B", 'B', 5, true);
    check_part(0xA1020C01u, 1, "ATSAME70N20B", 'B', 5, true);
    check_part(0xA10D0A01u, 1, "ATSAME70N19B", 'B', 5, false);
    check_part(0xA1020E01u, 0, "ATSAME70J21B", 'B', 5, true);
    check_part(0xA1020C01u, 0, "ATSAME70J20B", 'B', 5, true);
    check_part(0xA10D0A01u, 0, "ATSAME70J19B", 'B', 5, false);
    /* rev. A (same70/): no suffix, two GMAC priority queues */
    check_part(0xA1020E00u, 2, "ATSAME70Q21", 'A', 2, true);
    check_part(0xA1020C00u, 2, "ATSAME70Q20", 'A', 2, true);
    check_part(0xA10D0A00u, 2, "ATSAME70Q19", 'A', 2, false);
    check_part(0xA1020E00u, 1, "ATSAME70N21", 'A', 2, true);
    check_part(0xA1020E00u, 0, "ATSAME70J21", 'A', 2, true);
    /* other families and revisions: named, refused */
    check_part(0xA1220E01u, 2, "ATSAMV71Q21B", 'B', 5, false);
    check_part(0xA1120E01u, 2, "ATSAMS70Q21B", 'B', 5, false);
    check_part(0xA1020E02u, 2, "ATSAME70Q21?", 'C', 0, false);
    check_part(0x00000000u, 0, "unknown", '?', 0, false);
    check_part(0xFFFFFFFFu, 0xFFFFFFFFu, "unknown", '?', 0, false);

    /* the banner's board line, from the CHIPID registers (the model's) */
    char line[96];
    struct same70_part p;
    model_reset(MODEL_CIDR_SAME70Q21B, MODEL_EXID_Q);
    same70_part_read(&p);
    (void)same70_part_describe(&p, line, sizeof line);
    printf("board same70-xplained %s\n", line);
    CHECK(strcmp(line, "part ATSAME70Q21B rev B cidr=0xa1020e01 exid=0x00000002 gmac_priority_queues=5") == 0);
    model_reset(MODEL_CIDR_SAME70Q21A, MODEL_EXID_Q);
    same70_part_read(&p);
    (void)same70_part_describe(&p, line, sizeof line);
    printf("board same70-xplained %s\n", line);
    CHECK(strcmp(line, "part ATSAME70Q21 rev A cidr=0xa1020e00 exid=0x00000002 gmac_priority_queues=2") == 0);
    return check_summary("test_same70_chipid");
}
