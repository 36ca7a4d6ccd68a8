/* chipid.h - which SAM E70/S70/V70/V71 part this is, from its CHIPID registers (chipid.c). */
#ifndef CHIPID_H
#define CHIPID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct same70_part {
    uint32_t cidr;                 /* CHIPID_CIDR as read */
    uint32_t exid;                 /* CHIPID_EXID as read */
    char name[16];                 /* e.g. "ATSAME70Q21B" (rev. A parts have no suffix), "unknown" */
    char revision;                 /* 'A', 'B', ... from CIDR.VERSION; '?' when not a SAMx7 */
    unsigned gmac_priority_queues; /* 2 on rev. A, 5 on rev. B; 0 when unknown */
    bool supported;                /* this image runs on it (see chipid.c) */
};

/** Decodes CIDR/EXID (pure: the host tests call it with the values of each part). */
void same70_part_decode(uint32_t cidr, uint32_t exid, struct same70_part *part);

/** "part ATSAME70Q21B rev B cidr=0xa1020e01 exid=0x00000002 gmac_priority_queues=5" into buf (the
 *  boot banner's board line); returns snprintf's result. */
int same70_part_describe(const struct same70_part *part, char *buf, size_t size);

/** Reads and decodes the chip's own CHIPID registers. */
void same70_part_read(struct same70_part *part);

#endif /* CHIPID_H */
