#include "fw_out.h"

#include "fw_inttypes.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fw_config.h"
#include "fw_muldiv.h"
#include "fw_platform.h"

static char out_buf[FW_OUT_LINE_MAX];

static void out_vprintf(const char *fmt, va_list ap)
{
    int n = vsnprintf(out_buf, sizeof out_buf, fmt, ap);
    if (n < 0) {
        return;
    }
    size_t len = (size_t)n < sizeof out_buf ? (size_t)n : sizeof out_buf - 1;
    fw_platform_console_write(out_buf, len);
}

void fw_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out_vprintf(fmt, ap);
    va_end(ap);
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
