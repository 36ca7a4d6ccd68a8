/*
 * planted_defect.h - a defect planted on purpose, for the suite's own self-test: only the preset
 * host-planted builds it (CMake option FW_PLANTED_DEFECT, OFF by default), never a default build.
 * The robustness scenarios must find it: a frame from the wire crashes this build under ASan.
 */
#ifndef PLANTED_DEFECT_H
#define PLANTED_DEFECT_H

#include <stddef.h>
#include <stdint.h>

#ifndef FW_PLANTED_DEFECT
#error "planted_defect.h belongs to the host-planted build only (FW_PLANTED_DEFECT)"
#endif

/**
 * A "header inspection" of one received Ethernet frame (`frame`, `len` bytes) with the defect:
 * an untagged IPv4 frame's header and payload are copied into a static buffer of 1500 bytes by the
 * header's total-length field, checked neither against `len` nor against the buffer, so a frame
 * claiming a total length above 1500 (e.g. 65535) overruns it. Returns the copied header's
 * protocol (0 for anything else).
 */
uint8_t fw_planted_defect_inspect(const uint8_t *frame, size_t len);

#endif /* PLANTED_DEFECT_H */
