/*
 * serial_xfer.h - the console's own throughput (the thesis's UART file transfer by block size,
 * seed 004 section 5.4; ezTCP's throughput = bytes / time, seed 002): a file of a given size
 * moved through the console in blocks, each block acknowledged before the next goes, as a
 * file-transfer utility does (so the block size sets how many round trips the file costs).
 *   serial rx BYTES BLOCK SEED [TIMEOUT_MS]   the PC sends the file, the DUT checks every byte
 *   serial tx BYTES BLOCK SEED [TIMEOUT_MS]   the DUT sends the file, the PC checks every byte
 *   serial baud RATE | serial baud confirm    a port whose console has a baud rate (a UART)
 *
 * The file is a pseudo-random byte sequence both sides make from SEED (serial_seq_next), so the
 * DUT checks or makes each byte as it goes and never stores the file. Bytes are raw: every value
 * 0x00-0xFF, no framing.
 *
 * rx: the DUT prints "serial: receiving BYTES bytes in blocks of BLOCK (seed SEED)" and takes the
 *     console's bytes (fw_app_console_take): each byte is compared with the sequence; after each
 *     block (the last may be shorter) it writes one byte, ACK 0x06, or NAK 0x15 when the block
 *     held a byte that differs (nothing is sent again: the check counts, it does not repair).
 * tx: the DUT prints "serial: sending BYTES bytes in blocks of BLOCK (seed SEED)", takes the
 *     console's bytes and waits for the PC's ACK ("go"); then it writes a block per ACK or NAK
 *     the PC answers with (a NAK is counted); CAN 0x18 from the PC ends the transfer (aborted);
 *     any other byte is counted (stray) and ignored.
 * Either way no byte for TIMEOUT_MS (default FW_SERIAL_DEFAULT_TIMEOUT_MS) ends it
 * (status=timeout), so a lost byte never hangs the firmware. While it runs, other output is held
 * back and printed after its final line (fw_out_hold): nothing is interleaved with the data. It
 * ends with
 *   RESULT serial dir=rx|tx status=ok|timeout|aborted bytes= block= seed= moved= blocks=
 *          bad_blocks= [mismatches= first_bad=] stray= elapsed_us= held= held_lost=
 * moved: bytes received (rx) or sent (tx); blocks: blocks acknowledged; bad_blocks: NAKs sent (rx)
 * or received (tx); mismatches / first_bad (rx): bytes that differed and the offset of the first
 * ("none"); elapsed_us: the DUT's own time from the first byte received (rx) or the PC's go (tx) to
 * the last block's acknowledgement; held / held_lost: other output held back meanwhile, and the
 * bytes of it that did not fit (FW_OUT_HOLD_BYTES).
 *
 * baud: a port that can set its console's baud rate registers how (serial_xfer_set_baud_port);
 * `serial baud RATE` prints "RESULT serial action=baud baud=RATE previous=OLD confirm_ms=..." at
 * the old rate, then switches; the PC follows and sends `serial baud confirm` at the new rate
 * within FW_SERIAL_BAUD_CONFIRM_MS, else the port goes back to the old rate (a PC that cannot
 * follow never loses the console). Without such a port: "ERR serial ..." saying so.
 */
#ifndef SERIAL_XFER_H
#define SERIAL_XFER_H

#include <stdbool.h>
#include <stdint.h>

#include "fw_module.h"

#define SERIAL_ACK 0x06
#define SERIAL_NAK 0x15
#define SERIAL_CAN 0x18

/** The file's byte sequence: xorshift32 from the seed, one step per byte, its top byte. */
struct serial_seq {
    uint32_t x;
};

void serial_seq_init(struct serial_seq *s, uint32_t seed);
uint8_t serial_seq_next(struct serial_seq *s);

enum serial_dir { SERIAL_DIR_RX, SERIAL_DIR_TX };

struct serial_xfer_config {
    enum serial_dir dir;
    uint32_t bytes;
    uint32_t block;
    uint32_t seed;
    uint32_t timeout_ms;
};

/** Parses `serial rx|tx BYTES BLOCK SEED [TIMEOUT_MS]`; false with the reason in err. */
bool serial_xfer_parse(int argc, char **argv, struct serial_xfer_config *cfg, char *err, unsigned err_size);

/** True while a transfer owns the console. */
bool serial_xfer_running(void);

/** How a port sets its console's baud rate (a UART); the functions run from the main loop. */
struct serial_baud_port {
    uint32_t (*get)(void);
    /* whether the UART can make this rate closely enough (NULL: any rate in min..max); false with
     * the reason in err */
    bool (*check)(uint32_t baud, char *err, unsigned err_size);
    void (*set)(uint32_t baud); /* waits until what was written has left, then switches */
    uint32_t min_baud;
    uint32_t max_baud;
};

/** Registers the port's console baud rate (kept by pointer; NULL: none). Call before fw_app_init. */
void serial_xfer_set_baud_port(const struct serial_baud_port *port);

/** The `serial` command with its poll (timeouts) and deadline (fw_modules.c). */
extern const struct fw_module serial_xfer_module;

#endif /* SERIAL_XFER_H */
