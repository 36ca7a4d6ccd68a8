/* Unit tests: strict number, size/bandwidth, duration and IPv4 parsing. */
#include <stdint.h>

#include "check.h"
#include "fw_parse.h"

static void test_u32(void)
{
    uint32_t v = 7;
    CHECK(fw_parse_u32("0", 0, 10, &v) && v == 0);
    CHECK(fw_parse_u32("4294967295", 0, UINT32_MAX, &v) && v == UINT32_MAX);
    CHECK(!fw_parse_u32("4294967296", 0, UINT32_MAX, &v));
    CHECK(!fw_parse_u32("", 0, 10, &v));
    CHECK(!fw_parse_u32("-1", 0, 10, &v));
    CHECK(!fw_parse_u32("+1", 0, 10, &v));
    CHECK(!fw_parse_u32("1x", 0, 10, &v));
    CHECK(!fw_parse_u32(" 1", 0, 10, &v));
    CHECK(!fw_parse_u32("11", 0, 10, &v));
    CHECK(!fw_parse_u32("4", 5, 10, &v));
    CHECK(!fw_parse_u32(NULL, 0, 10, &v));
    v = 3;
    CHECK(!fw_parse_u32("99999999999999999999999", 0, UINT32_MAX, &v) && v == 3);
}

static void test_scaled(void)
{
    uint64_t v = 0;
    CHECK(fw_parse_scaled("100", 1, UINT64_MAX, &v) && v == 100);
    CHECK(fw_parse_scaled("1k", 1, UINT64_MAX, &v) && v == 1000);
    CHECK(fw_parse_scaled("1K", 1, UINT64_MAX, &v) && v == 1024);
    CHECK(fw_parse_scaled("100m", 1, UINT64_MAX, &v) && v == 100000000ull);
    CHECK(fw_parse_scaled("100M", 1, UINT64_MAX, &v) && v == 104857600ull);
    CHECK(fw_parse_scaled("2g", 1, UINT64_MAX, &v) && v == 2000000000ull);
    CHECK(fw_parse_scaled("2G", 1, UINT64_MAX, &v) && v == 2147483648ull);
    CHECK(!fw_parse_scaled("1.5m", 1, UINT64_MAX, &v));
    CHECK(!fw_parse_scaled("1mm", 1, UINT64_MAX, &v));
    CHECK(!fw_parse_scaled("1x", 1, UINT64_MAX, &v));
    CHECK(!fw_parse_scaled("m", 1, UINT64_MAX, &v));
    CHECK(!fw_parse_scaled("0", 1, UINT64_MAX, &v));
    CHECK(!fw_parse_scaled("20000000000G", 1, UINT64_MAX, &v)); /* overflow after scaling */
    CHECK(!fw_parse_scaled("65537", 1, 65536, &v));
}

static void test_seconds(void)
{
    uint32_t ms = 0;
    CHECK(fw_parse_seconds_ms("10", 0, 100000, &ms) && ms == 10000);
    CHECK(fw_parse_seconds_ms("0.5", 0, 100000, &ms) && ms == 500);
    CHECK(fw_parse_seconds_ms("1.25", 0, 100000, &ms) && ms == 1250);
    CHECK(fw_parse_seconds_ms("0.001", 0, 100000, &ms) && ms == 1);
    CHECK(!fw_parse_seconds_ms("0.0001", 0, 100000, &ms));
    CHECK(!fw_parse_seconds_ms("1.", 0, 100000, &ms));
    CHECK(!fw_parse_seconds_ms(".5", 0, 100000, &ms));
    CHECK(!fw_parse_seconds_ms("1s", 0, 100000, &ms));
    CHECK(!fw_parse_seconds_ms("101", 0, 100000, &ms));
    CHECK(!fw_parse_seconds_ms("0.05", 100, 100000, &ms));
    CHECK(!fw_parse_seconds_ms("99999999999", 0, UINT32_MAX, &ms));
}

static void test_ipv4(void)
{
    uint32_t a = 0;
    CHECK(fw_parse_ipv4("10.77.0.2", &a) && a == 0x0a4d0002u);
    CHECK(fw_parse_ipv4("255.255.255.255", &a) && a == 0xffffffffu);
    CHECK(fw_parse_ipv4("0.0.0.0", &a) && a == 0);
    CHECK(!fw_parse_ipv4("256.0.0.1", &a));
    CHECK(!fw_parse_ipv4("1.2.3", &a));
    CHECK(!fw_parse_ipv4("1.2.3.4.5", &a));
    CHECK(!fw_parse_ipv4("1..3.4", &a));
    CHECK(!fw_parse_ipv4("1.2.3.4 ", &a));
    CHECK(!fw_parse_ipv4("0001.2.3.4", &a));
    CHECK(!fw_parse_ipv4("a.b.c.d", &a));
    CHECK(!fw_parse_ipv4("", &a));
}

int main(void)
{
    test_u32();
    test_scaled();
    test_seconds();
    test_ipv4();
    return check_summary("test_parse");
}
