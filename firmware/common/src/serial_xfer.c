/* serial_xfer.c - the `serial` command: a file moved through the console in acknowledged blocks
 * (serial_xfer.h). One transfer at a time, alone on the device (its test slot). */
#include "serial_xfer.h"

#include "fw_inttypes.h"
#include <stdio.h>
#include <string.h>

#include "fw_app.h"
#include "fw_config.h"
#include "fw_out.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "fw_test_slot.h"

#define CMD "serial"
#define SLOT "serial"
#define USAGE "serial rx|tx BYTES BLOCK SEED [TIMEOUT_MS] | serial baud RATE|confirm"
#define SEQ_START 0x9E3779B9u

void serial_seq_init(struct serial_seq *s, uint32_t seed)
{
    s->x = seed + SEQ_START;
    if (s->x == 0u) {
        s->x = SEQ_START; /* xorshift never leaves 0 */
    }
}

uint8_t serial_seq_next(struct serial_seq *s)
{
    uint32_t x = s->x;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s->x = x;
    return (uint8_t)(x >> 24);
}

bool serial_xfer_parse(int argc, char **argv, struct serial_xfer_config *cfg, char *err, unsigned err_size)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->timeout_ms = FW_SERIAL_DEFAULT_TIMEOUT_MS;
    if (argc < 5 || argc > 6 || (strcmp(argv[1], "rx") != 0 && strcmp(argv[1], "tx") != 0)) {
        snprintf(err, err_size, "usage: " USAGE);
        return false;
    }
    cfg->dir = strcmp(argv[1], "rx") == 0 ? SERIAL_DIR_RX : SERIAL_DIR_TX;
    if (!fw_parse_u32(argv[2], 1, FW_SERIAL_MAX_BYTES, &cfg->bytes)) {
        snprintf(err, err_size, "bad size %s (1..%lu bytes)", argv[2], (unsigned long)FW_SERIAL_MAX_BYTES);
        return false;
    }
    if (!fw_parse_u32(argv[3], 1, FW_SERIAL_MAX_BLOCK, &cfg->block)) {
        snprintf(err, err_size, "bad block size %s (1..%u bytes)", argv[3], (unsigned)FW_SERIAL_MAX_BLOCK);
        return false;
    }
    if (!fw_parse_u32(argv[4], 0, UINT32_MAX, &cfg->seed)) {
        snprintf(err, err_size, "bad seed %s (0..4294967295)", argv[4]);
        return false;
    }
    if (argc == 6 && !fw_parse_u32(argv[5], 1, FW_SERIAL_MAX_TIMEOUT_MS, &cfg->timeout_ms)) {
        snprintf(err, err_size, "bad timeout %s (1..%u ms)", argv[5], (unsigned)FW_SERIAL_MAX_TIMEOUT_MS);
        return false;
    }
    return true;
}

/* ---- the transfer ------------------------------------------------------------------------- */
static struct {
    bool running;
    struct serial_xfer_config cfg;
    struct serial_seq seq;
    uint32_t moved;      /* bytes received (rx) or sent (tx) */
    uint32_t in_block;   /* rx: bytes of the current block so far */
    uint32_t blocks;     /* blocks acknowledged */
    uint32_t bad_blocks; /* NAKs sent (rx) or received (tx) */
    uint32_t mismatches; /* rx: bytes that differed from the sequence */
    uint32_t first_bad;  /* rx: the first one's offset (UINT32_MAX: none) */
    uint32_t stray;      /* tx: bytes from the PC other than ACK, NAK, CAN */
    bool block_bad;      /* rx: the current block holds a byte that differs */
    bool started;        /* rx: the first byte arrived; tx: the PC's go arrived */
    bool outstanding;    /* tx: a block went out, its acknowledgement is awaited */
    uint64_t start_us;
    uint64_t last_us;    /* the last byte that moved: the timeout counts from here */
} x;

static uint8_t block_buf[FW_SERIAL_MAX_BLOCK];

bool serial_xfer_running(void)
{
    return x.running;
}

static void finish(const char *status)
{
    uint64_t end = strcmp(status, "timeout") == 0 ? x.last_us : fw_platform_time_us();
    uint64_t elapsed = x.started && end > x.start_us ? end - x.start_us : 0;
    bool rx = x.cfg.dir == SERIAL_DIR_RX;
    fw_out_direct("RESULT " CMD " dir=%s status=%s bytes=%lu block=%lu seed=%lu moved=%lu blocks=%lu bad_blocks=%lu",
                  rx ? "rx" : "tx", status, (unsigned long)x.cfg.bytes, (unsigned long)x.cfg.block,
                  (unsigned long)x.cfg.seed, (unsigned long)x.moved, (unsigned long)x.blocks,
                  (unsigned long)x.bad_blocks);
    if (rx && x.mismatches > 0) {
        fw_out_direct(" mismatches=%lu first_bad=%lu", (unsigned long)x.mismatches, (unsigned long)x.first_bad);
    } else if (rx) {
        fw_out_direct(" mismatches=0 first_bad=none");
    }
    fw_out_direct(" stray=%lu elapsed_us=%" PRIu64 " held=%lu held_lost=%lu\r\n", (unsigned long)x.stray, elapsed,
                  (unsigned long)fw_out_held_bytes(), (unsigned long)fw_out_held_lost());
    x.running = false;
    fw_app_console_release();
    fw_test_release(SLOT);
    fw_out_release(); /* what others printed meanwhile, after the final line */
}

static void send_ack(bool bad)
{
    const uint8_t a = bad ? SERIAL_NAK : SERIAL_ACK;
    fw_out_raw(&a, 1);
}

static size_t rx_input(const char *data, size_t len)
{
    uint64_t now = fw_platform_time_us();
    if (!x.started) {
        x.started = true;
        x.start_us = now;
    }
    x.last_us = now;
    size_t i = 0;
    while (i < len) {
        uint8_t want = serial_seq_next(&x.seq);
        if ((uint8_t)data[i] != want) {
            if (x.mismatches == 0) {
                x.first_bad = x.moved;
            }
            x.mismatches++;
            x.block_bad = true;
        }
        i++;
        x.moved++;
        x.in_block++;
        if (x.in_block == x.cfg.block || x.moved == x.cfg.bytes) {
            send_ack(x.block_bad);
            x.blocks++;
            x.bad_blocks += x.block_bad ? 1u : 0u;
            x.in_block = 0;
            x.block_bad = false;
            if (x.moved == x.cfg.bytes) {
                finish("ok");
                return i; /* what follows is the command line's again */
            }
        }
    }
    return i;
}

static void send_block(void)
{
    uint32_t left = x.cfg.bytes - x.moved;
    uint32_t n = left < x.cfg.block ? left : x.cfg.block;
    for (uint32_t i = 0; i < n; i++) {
        block_buf[i] = serial_seq_next(&x.seq);
    }
    fw_out_raw(block_buf, n);
    x.moved += n;
    x.outstanding = true;
}

static size_t tx_input(const char *data, size_t len)
{
    x.last_us = fw_platform_time_us();
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)data[i];
        if (c == SERIAL_CAN) {
            finish("aborted");
            return i + 1;
        }
        if (c != SERIAL_ACK && c != SERIAL_NAK) {
            x.stray++;
            continue;
        }
        if (!x.started) { /* the PC's go */
            if (c != SERIAL_ACK) {
                x.stray++;
                continue;
            }
            x.started = true;
            x.start_us = x.last_us;
            send_block();
            continue;
        }
        if (!x.outstanding) {
            x.stray++;
            continue;
        }
        x.outstanding = false;
        x.blocks++;
        x.bad_blocks += c == SERIAL_NAK ? 1u : 0u;
        if (x.moved == x.cfg.bytes) {
            finish("ok");
            return i + 1;
        }
        send_block();
    }
    return len;
}

static size_t xfer_input(const char *data, size_t len)
{
    if (!x.running) {
        return 0;
    }
    return x.cfg.dir == SERIAL_DIR_RX ? rx_input(data, len) : tx_input(data, len);
}

/* ---- the baud rate of a port's console -------------------------------------------------------- */
static const struct serial_baud_port *baud_port;
static struct {
    bool pending; /* switched, not confirmed yet */
    uint32_t previous;
    uint32_t rate;
    uint64_t deadline_us;
} baud;

void serial_xfer_set_baud_port(const struct serial_baud_port *port)
{
    baud_port = port;
    baud.pending = false;
}

static void cmd_baud(int argc, char **argv)
{
    if (argc != 3) {
        fw_err(CMD, "usage: " USAGE);
        return;
    }
    if (baud_port == NULL) {
        fw_err(CMD, "this console has no baud rate to set (not a UART of this port's)");
        return;
    }
    if (strcmp(argv[2], "confirm") == 0) {
        if (!baud.pending) {
            fw_err(CMD, "no baud rate change to confirm");
            return;
        }
        baud.pending = false;
        fw_printf("RESULT " CMD " action=baud_confirm baud=%lu\r\n", (unsigned long)baud.rate);
        return;
    }
    if (baud.pending) {
        fw_err(CMD, "baud rate %lu not confirmed yet (serial baud confirm)", (unsigned long)baud.rate);
        return;
    }
    uint32_t rate;
    char err[96];
    if (!fw_parse_u32(argv[2], baud_port->min_baud, baud_port->max_baud, &rate)) {
        fw_err(CMD, "bad baud rate %s (%lu..%lu)", argv[2], (unsigned long)baud_port->min_baud,
               (unsigned long)baud_port->max_baud);
        return;
    }
    if (baud_port->check != NULL && !baud_port->check(rate, err, sizeof err)) {
        fw_err(CMD, "baud rate %lu: %s", (unsigned long)rate, err);
        return;
    }
    baud.previous = baud_port->get();
    baud.rate = rate;
    fw_printf("RESULT " CMD " action=baud baud=%lu previous=%lu confirm_ms=%u\r\n", (unsigned long)rate,
              (unsigned long)baud.previous, (unsigned)FW_SERIAL_BAUD_CONFIRM_MS);
    baud_port->set(rate); /* after the line has left at the old rate */
    baud.pending = true;
    baud.deadline_us = fw_platform_time_us() + (uint64_t)FW_SERIAL_BAUD_CONFIRM_MS * 1000u;
}

/* ---- the command, its poll and deadline ------------------------------------------------------- */
static void cmd_serial(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "baud") == 0) {
        cmd_baud(argc, argv);
        return;
    }
    struct serial_xfer_config cfg;
    char err[96];
    if (!serial_xfer_parse(argc, argv, &cfg, err, sizeof err)) {
        fw_err(CMD, "%s", err);
        return;
    }
    if (baud.pending) {
        fw_err(CMD, "baud rate %lu not confirmed yet (serial baud confirm)", (unsigned long)baud.rate);
        return;
    }
    if (!fw_test_claim(CMD, SLOT, SLOT)) {
        return;
    }
    if (!fw_app_console_take(xfer_input)) {
        fw_test_release(SLOT);
        fw_err(CMD, "the console's input is taken");
        return;
    }
    memset(&x, 0, sizeof x);
    x.running = true;
    x.cfg = cfg;
    x.first_bad = UINT32_MAX;
    x.last_us = fw_platform_time_us();
    serial_seq_init(&x.seq, cfg.seed);
    fw_out_hold();
    fw_out_direct("serial: %s %lu bytes in blocks of %lu (seed %lu)\r\n",
                  cfg.dir == SERIAL_DIR_RX ? "receiving" : "sending", (unsigned long)cfg.bytes,
                  (unsigned long)cfg.block, (unsigned long)cfg.seed);
}

static void serial_poll(uint64_t now)
{
    if (x.running && now > x.last_us && now - x.last_us >= (uint64_t)x.cfg.timeout_ms * 1000u) {
        finish("timeout");
    }
    if (baud.pending && now >= baud.deadline_us) {
        baud.pending = false;
        baud_port->set(baud.previous);
        fw_printf(CMD ": baud rate %lu not confirmed within %u ms: back to %lu\r\n", (unsigned long)baud.rate,
                  (unsigned)FW_SERIAL_BAUD_CONFIRM_MS, (unsigned long)baud.previous);
    }
}

static uint64_t serial_next_deadline_us(void)
{
    uint64_t next = UINT64_MAX;
    if (x.running) {
        next = x.last_us + (uint64_t)x.cfg.timeout_ms * 1000u;
    }
    if (baud.pending && baud.deadline_us < next) {
        next = baud.deadline_us;
    }
    return next;
}

static const struct fw_cmd serial_cmds[] = {
    {"serial", "rx|tx BYTES BLOCK SEED [TIMEOUT_MS] | baud RATE|confirm",
     "move a file of BYTES pseudo-random bytes through this console in acknowledged blocks, checked byte for byte",
     cmd_serial},
};

const struct fw_module serial_xfer_module = {serial_cmds, sizeof serial_cmds / sizeof serial_cmds[0], serial_poll,
                                             serial_next_deadline_us};
