#include "fw_out.h"

#include "fw_inttypes.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fw_config.h"
#include "fw_muldiv.h"
#include "fw_platform.h"

static char out_buf[FW_OUT_LINE_MAX];

/* output held while a command owns the console's bytes (fw_out_hold) */
static struct {
    bool on;
    char text[FW_OUT_HOLD_BYTES];
    uint32_t len;
    uint32_t lost;
} held;

static void out_vprintf(const char *fmt, va_list ap, bool direct)
{
    int n = vsnprintf(out_buf, sizeof out_buf, fmt, ap);
    if (n < 0) {
        return;
    }
    size_t len = (size_t)n < sizeof out_buf ? (size_t)n : sizeof out_buf - 1;
    if (!held.on || direct) {
        fw_platform_console_write(out_buf, len);
        return;
    }
    size_t room = sizeof held.text - held.len;
    size_t keep = len < room ? len : room;
    memcpy(held.text + held.len, out_buf, keep);
    held.len += (uint32_t)keep;
    held.lost += (uint32_t)(len - keep);
}

void fw_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out_vprintf(fmt, ap, false);
    va_end(ap);
}

void fw_out_direct(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out_vprintf(fmt, ap, true);
    va_end(ap);
}

void fw_out_raw(const void *data, size_t len)
{
    fw_platform_console_write((const char *)data, len);
}

void fw_out_hold(void)
{
    held.on = true;
    held.len = 0;
    held.lost = 0;
}

bool fw_out_held(void)
{
    return held.on;
}

uint32_t fw_out_held_bytes(void)
{
    return held.len;
}

uint32_t fw_out_held_lost(void)
{
    return held.lost;
}

void fw_out_release(void)
{
    held.on = false;
    if (held.len > 0) {
        fw_platform_console_write(held.text, held.len);
    }
    held.len = 0;
    held.lost = 0;
}

void fw_err(const char *cmd, const char *fmt, ...)
{
    char reason[FW_OUT_LINE_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    fw_printf("ERR %s %s\r\n", cmd, reason);
}

const char *fw_fmt_mbps(char *buf, unsigned size, uint64_t bytes, uint64_t duration_us)
{
    /* kbit/s = bytes * 8 * 1000 / us ; printed as Mbit/s with 3 decimals */
    uint64_t kbps = duration_us ? fw_muldiv_u64(bytes, 8000u, duration_us) : 0;
    snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, kbps / 1000u, kbps % 1000u);
    return buf;
}

const char *fw_fmt_ms(char *buf, unsigned size, uint64_t us)
{
    snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, us / 1000u, us % 1000u);
    return buf;
}

const char *fw_fmt_ppm_pct(char *buf, unsigned size, uint64_t ppm)
{
    /* 1 % = 10000 ppm */
    snprintf(buf, size, "%" PRIu64 ".%04" PRIu64, ppm / 10000u, ppm % 10000u);
    return buf;
}
