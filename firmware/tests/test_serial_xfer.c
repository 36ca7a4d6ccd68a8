/*
 * Unit tests: the `serial` command (common/src/serial_xfer.c) inside the whole application: the
 * file's byte sequence (the same bytes the suite makes, hil/console/serial_transfer.py), a file
 * received and sent block by block with one acknowledgement per block (the last block short), a
 * corrupted byte counted with its offset, the timeout, the console's bytes going to the transfer
 * and back to the command line after it, output of others held until its final line, the test
 * slot, bad arguments (one ERR line each), and a port's baud rate switched, confirmed and undone.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_out.h"
#include "fw_platform.h"
#include "fw_test_slot.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "serial_xfer.h"
#include "test_platform.h"

static void feed(const char *s)
{
    fw_app_console_input(s, strlen(s));
}

static void feed_bytes(const uint8_t *b, size_t n)
{
    fw_app_console_input((const char *)b, n);
}

/* the file of `bytes` bytes from `seed`, as the PC makes it */
static uint8_t file[4096];

static void make_file(uint32_t seed, size_t bytes)
{
    struct serial_seq s;
    serial_seq_init(&s, seed);
    for (size_t i = 0; i < bytes; i++) {
        file[i] = serial_seq_next(&s);
    }
}

static size_t count_byte(const char *buf, size_t len, uint8_t b)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        n += (uint8_t)buf[i] == b;
    }
    return n;
}

static void test_sequence(void)
{
    /* the first bytes of seed 1 and seed 0, as hil/console/serial_transfer.py's file_bytes makes them */
    static const uint8_t seed1[8] = {0x51, 0xec, 0xcf, 0x70, 0x8b, 0xe5, 0x77, 0xb6};
    static const uint8_t seed0[4] = {0x51, 0xe0, 0x7b, 0x01};
    make_file(1, 8);
    CHECK(memcmp(file, seed1, sizeof seed1) == 0);
    make_file(0, 4);
    CHECK(memcmp(file, seed0, sizeof seed0) == 0);
    /* a file of 4096 bytes holds every byte value (raw binary: 0x00, LF, CR, XON, XOFF, 0xff) */
    make_file(7, sizeof file);
    unsigned seen[256] = {0};
    for (size_t i = 0; i < sizeof file; i++) {
        seen[file[i]]++;
    }
    unsigned missing = 0;
    for (unsigned v = 0; v < 256; v++) {
        missing += seen[v] == 0;
    }
    CHECK(missing == 0);
}

static void test_bad_arguments(void)
{
    static const struct {
        const char *line;
        const char *err;
    } bad[] = {
        {"serial\r\n", "ERR serial usage: serial rx|tx BYTES BLOCK SEED [TIMEOUT_MS] | serial baud RATE|confirm\r\n"},
        {"serial up 10 8 1\r\n", "ERR serial usage: "},
        {"serial rx 10 8\r\n", "ERR serial usage: "},
        {"serial rx 10 8 1 100 7\r\n", "ERR serial usage: "},
        {"serial rx 0 8 1\r\n", "ERR serial bad size 0 (1..16777216 bytes)\r\n"},
        {"serial rx 16777217 8 1\r\n", "ERR serial bad size 16777217 (1..16777216 bytes)\r\n"},
        {"serial tx 10k 8 1\r\n", "ERR serial bad size 10k (1..16777216 bytes)\r\n"},
        {"serial rx 10 0 1\r\n", "ERR serial bad block size 0 (1..1024 bytes)\r\n"},
        {"serial tx 10 1025 1\r\n", "ERR serial bad block size 1025 (1..1024 bytes)\r\n"},
        {"serial rx 10 8 -1\r\n", "ERR serial bad seed -1 (0..4294967295)\r\n"},
        {"serial rx 10 8 4294967296\r\n", "ERR serial bad seed 4294967296 (0..4294967295)\r\n"},
        {"serial rx 10 8 1 0\r\n", "ERR serial bad timeout 0 (1..60000 ms)\r\n"},
        {"serial baud\r\n", "ERR serial usage: "},
        {"serial baud 115200\r\n", "ERR serial this console has no baud rate to set (not a UART of this port's)\r\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_output_reset();
        feed(bad[i].line);
        CHECK(strncmp(test_output, bad[i].err, strlen(bad[i].err)) == 0);
        CHECK(count_byte(test_output, test_output_len, '\n') == 1); /* one line, nothing else */
        CHECK(!serial_xfer_running() && !fw_test_running());
    }
}

static void test_receive(void)
{
    make_file(42, 20);
    test_output_reset();
    /* the command line and the first block in one read: the bytes after its line are the file's */
    uint8_t first[64];
    const char *cmd = "serial rx 20 8 42\r\n";
    size_t n = strlen(cmd);
    memcpy(first, cmd, n);
    memcpy(first + n, file, 8);
    feed_bytes(first, n + 8);
    CHECK(serial_xfer_running() && fw_test_running());
    const char *ready = "serial: receiving 20 bytes in blocks of 8 (seed 42)\r\n";
    size_t r = strlen(ready);
    CHECK(strncmp(test_output, ready, r) == 0);
    CHECK(test_output_len == r + 1 && (uint8_t)test_output[r] == SERIAL_ACK);

    /* what the device prints meanwhile is held */
    fw_printf("late line of another module\r\n");
    CHECK(test_output_len == r + 1);
    test_now_us += 1000;
    feed_bytes(file + 8, 5); /* half a block: no acknowledgement yet */
    CHECK(test_output_len == r + 1);
    /* the rest of the second block, the third (short) block, then a command line */
    uint8_t rest[64];
    memcpy(rest, file + 13, 7);
    memcpy(rest + 7, "version\r\n", 9);
    test_now_us += 1000;
    feed_bytes(rest, 16);
    CHECK(!serial_xfer_running() && !fw_test_running());
    CHECK((uint8_t)test_output[r + 1] == SERIAL_ACK && (uint8_t)test_output[r + 2] == SERIAL_ACK);
    const char *result = test_output + r + 3;
    const char *want = "RESULT serial dir=rx status=ok bytes=20 block=8 seed=42 moved=20 blocks=3 bad_blocks=0"
                       " mismatches=0 first_bad=none stray=0 elapsed_us=2000 held=29 held_lost=0\r\n";
    CHECK(strncmp(result, want, strlen(want)) == 0);
    /* the held line after the final line, then the command line's answer */
    const char *held = strstr(result, "late line of another module\r\n");
    CHECK(held != NULL && strstr(held, "RESULT version name=hil-fw ") != NULL);
}

static void test_receive_corrupted_and_timeout(void)
{
    make_file(5, 100);
    file[37] ^= 0x10; /* a byte flipped at offset 37 (the second 32-byte block) */
    file[70] ^= 0xff; /* and one in the third block, which never completes */
    test_output_reset();
    feed("serial rx 100 32 5 500\n");
    size_t start = test_output_len;
    feed_bytes(file, 90); /* 10 bytes never come */
    CHECK(test_output_len == start + 2);
    CHECK((uint8_t)test_output[start] == SERIAL_ACK && (uint8_t)test_output[start + 1] == SERIAL_NAK);
    /* nothing for 499 ms: still waiting; 500 ms: it ends, the PC's silence named */
    test_now_us += 499000;
    fw_app_poll();
    CHECK(serial_xfer_running());
    CHECK(fw_app_poll_delay_us() == 1000u);
    test_now_us += 1000;
    fw_app_poll();
    CHECK(!serial_xfer_running() && !fw_test_running());
    CHECK(strstr(test_output, "RESULT serial dir=rx status=timeout bytes=100 block=32 seed=5 moved=90 blocks=2 "
                              "bad_blocks=1 mismatches=2 first_bad=37 stray=0 elapsed_us=0 ") != NULL);
    /* the console answers lines again */
    test_output_reset();
    feed("version\r\n");
    CHECK(strncmp(test_output, "\r\nhil-fw ", 9) == 0);
}

static void test_send(void)
{
    make_file(9, 10);
    test_output_reset();
    feed("serial tx 10 4 9\r"); /* CR only: no LF follows */
    CHECK(serial_xfer_running());
    const char *ready = "serial: sending 10 bytes in blocks of 4 (seed 9)\r\n";
    size_t r = strlen(ready);
    CHECK(test_output_len == r && strcmp(test_output, ready) == 0);
    /* nothing goes before the PC's go; a stray byte is counted */
    const uint8_t stray = 'x', ack = SERIAL_ACK, nak = SERIAL_NAK;
    feed_bytes(&stray, 1);
    CHECK(test_output_len == r);
    feed_bytes(&ack, 1); /* go */
    CHECK(test_output_len == r + 4 && memcmp(test_output + r, file, 4) == 0);
    feed_bytes(&nak, 1); /* the PC found a bad byte: counted, the next block goes */
    CHECK(test_output_len == r + 8 && memcmp(test_output + r + 4, file + 4, 4) == 0);
    test_now_us += 3000;
    feed_bytes(&ack, 1);
    CHECK(test_output_len == r + 10 && memcmp(test_output + r + 8, file + 8, 2) == 0); /* the short last block */
    feed_bytes(&ack, 1);
    CHECK(!serial_xfer_running() && !fw_test_running());
    CHECK(strcmp(test_output + r + 10, "RESULT serial dir=tx status=ok bytes=10 block=4 seed=9 moved=10 blocks=3 "
                                       "bad_blocks=1 stray=1 elapsed_us=3000 held=0 held_lost=0\r\n") == 0);

    /* the PC cancels; a second transfer meanwhile is refused by the test slot */
    test_output_reset();
    feed("serial tx 100 10 1\r\n");
    const uint8_t go_can[2] = {SERIAL_ACK, SERIAL_CAN};
    feed_bytes(go_can, 2);
    CHECK(strstr(test_output, "RESULT serial dir=tx status=aborted bytes=100 block=10 seed=1 moved=10 blocks=0 ")
          != NULL);
    test_output_reset();
    feed("ping 10.77.0.9 -c 1 -i 0.1\r\n");
    feed("serial rx 10 8 1\r\n");
    CHECK(strstr(test_output, "ERR serial busy: ping running") != NULL);
    test_now_us += 2000000;
    fw_app_poll();
    test_now_us += 2000000;
    fw_app_poll();
    CHECK(!fw_test_running());
}

/* a port whose console has a baud rate */
static uint32_t port_baud = 115200;
static unsigned port_sets;

static uint32_t fake_get(void)
{
    return port_baud;
}

static bool fake_check(uint32_t baud, char *err, unsigned size)
{
    if (baud == 250000) {
        strncpy(err, "2.4 % off", size);
        return false;
    }
    return true;
}

static void fake_set(uint32_t baud)
{
    port_baud = baud;
    port_sets++;
}

static void test_baud(void)
{
    static const struct serial_baud_port port = {fake_get, fake_check, fake_set, 1200, 3000000};
    serial_xfer_set_baud_port(&port);
    test_output_reset();
    feed("serial baud 50\r\n");
    CHECK(strcmp(test_output, "ERR serial bad baud rate 50 (1200..3000000)\r\n") == 0);
    test_output_reset();
    feed("serial baud 250000\r\n");
    CHECK(strcmp(test_output, "ERR serial baud rate 250000: 2.4 % off\r\n") == 0 && port_sets == 0);
    test_output_reset();
    feed("serial baud confirm\r\n");
    CHECK(strcmp(test_output, "ERR serial no baud rate change to confirm\r\n") == 0);

    /* switched after its line, confirmed at the new rate */
    test_output_reset();
    feed("serial baud 460800\r\n");
    CHECK(strcmp(test_output, "RESULT serial action=baud baud=460800 previous=115200 confirm_ms=3000\r\n") == 0);
    CHECK(port_baud == 460800 && port_sets == 1);
    test_output_reset();
    feed("serial rx 10 8 1\r\n"); /* nothing else until it is confirmed */
    CHECK(strcmp(test_output, "ERR serial baud rate 460800 not confirmed yet (serial baud confirm)\r\n") == 0);
    test_output_reset();
    feed("serial baud confirm\r\n");
    CHECK(strcmp(test_output, "RESULT serial action=baud_confirm baud=460800\r\n") == 0);
    test_now_us += 10000000;
    fw_app_poll();
    CHECK(port_baud == 460800);

    /* not confirmed: back to the old rate */
    test_output_reset();
    feed("serial baud 921600\r\n");
    CHECK(port_baud == 921600);
    test_now_us += 2999000;
    fw_app_poll();
    CHECK(port_baud == 921600);
    test_now_us += 1000;
    fw_app_poll();
    CHECK(port_baud == 460800 && port_sets == 3);
    CHECK(strstr(test_output, "serial: baud rate 921600 not confirmed within 3000 ms: back to 460800\r\n") != NULL);
    serial_xfer_set_baud_port(NULL);
}

int main(void)
{
    static struct netif netif;
    lwip_init();
    test_netif_add(&netif, 0x0a4d0002u, 0xffffff00u);
    fw_app_init(&netif);
    test_sequence();
    test_bad_arguments();
    test_receive();
    test_receive_corrupted_and_timeout();
    test_send();
    test_baud();
    return check_summary("test_serial_xfer");
}
