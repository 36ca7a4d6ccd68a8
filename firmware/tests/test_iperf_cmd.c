/* Unit tests: the iperf command's option parsing (Espressif iperf-cmd syntax). */
#include <string.h>

#include "check.h"
#include "fw_config.h"
#include "iperf_cmd.h"

static bool parse(const char *line, struct iperf_config *cfg, char *err)
{
    static char buf[256];
    char *argv[32];
    int argc = 0;
    strcpy(buf, line);
    for (char *t = strtok(buf, " "); t != NULL && argc < 32; t = strtok(NULL, " ")) {
        argv[argc++] = t;
    }
    return iperf_cmd_parse(argc, argv, cfg, err, 96);
}

int main(void)
{
    struct iperf_config c;
    char err[96];

    CHECK(parse("iperf -s", &c, err) && c.role == IPERF_ROLE_SERVER && !c.udp && c.port == 5001 &&
          c.duration_ms == 0 && c.len == FW_IPERF_TCP_DEFAULT_LEN);
    CHECK(parse("iperf -s -u -p 6000 -i 1", &c, err) && c.udp && c.port == 6000 && c.interval_ms == 1000 &&
          c.len == FW_IPERF_UDP_DEFAULT_LEN);
    CHECK(parse("iperf -c 10.77.0.1", &c, err) && c.role == IPERF_ROLE_CLIENT && c.peer_ip == 0x0a4d0001u &&
          c.duration_ms == FW_IPERF_DEFAULT_TIME_S * 1000u && c.amount == 0);
    CHECK(parse("iperf -c 10.77.0.1 -u -b 95m -l 1448 -t 2.5", &c, err) && c.bandwidth == 95000000ull &&
          c.len == 1448 && c.duration_ms == 2500);
    CHECK(parse("iperf -c 10.77.0.1 -n 10M", &c, err) && c.amount == 10485760ull && c.duration_ms == 0);
    CHECK(parse("iperf --client=10.77.0.1 --udp --bandwidth=1M --len=64", &c, err) && c.udp &&
          c.bandwidth == 1048576ull && c.len == 64);
    CHECK(parse("iperf -a", &c, err) && c.abort);
    CHECK(parse("iperf --abort", &c, err) && c.abort);
    CHECK(parse("iperf -c 10.77.0.1 -S 184 -f k -P 1 -B 10.77.0.2", &c, err) && c.tos == 184 &&
          c.format == 'k' && c.bind_ip == 0x0a4d0002u);

    CHECK(!parse("iperf", &c, err) && strstr(err, "need -s or -c") != NULL);
    CHECK(!parse("iperf -s -c 1.2.3.4", &c, err) && strstr(err, "exclude") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -t 5 -n 1M", &c, err) && strstr(err, "exclude") != NULL);
    CHECK(!parse("iperf -c 1.2.3", &c, err) && strstr(err, "bad IPv4") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -p 0", &c, err) && strstr(err, "bad port") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -p 65536", &c, err));
    CHECK(!parse("iperf -c 1.2.3.4 -b 10x", &c, err) && strstr(err, "bad bandwidth") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -u -l 1473", &c, err) && strstr(err, "UDP length") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -u -l 8", &c, err) && strstr(err, "UDP length") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -t", &c, err) && strstr(err, "needs a value") != NULL);
    CHECK(parse("iperf -c 1.2.3.4 -N -l 64", &c, err) && c.nodelay && c.len == 64);
    CHECK(parse("iperf -c 1.2.3.4 --nodelay", &c, err) && c.nodelay);
    CHECK(parse("iperf -c 1.2.3.4", &c, err) && !c.nodelay);
    CHECK(!parse("iperf -s -N", &c, err) && strstr(err, "-N is a TCP client option") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -u -b 1M -N", &c, err) && strstr(err, "-N is a TCP client option") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -N 5", &c, err) && strstr(err, "unexpected argument") != NULL);
    CHECK(!parse("iperf -s -x", &c, err) && strstr(err, "unknown option -x") != NULL);
    CHECK(!parse("iperf --bogus", &c, err) && strstr(err, "unknown option --bogus") != NULL);
    CHECK(!parse("iperf -s extra", &c, err) && strstr(err, "unexpected argument") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -P 4", &c, err) && strstr(err, "parallel") != NULL);
    CHECK(!parse("iperf -c 1.2.3.4 -V", &c, err) && strstr(err, "IPv6") != NULL);
    CHECK(!parse("iperf -a -s", &c, err));
    CHECK(!parse("iperf -s -n 1M", &c, err));
    CHECK(!parse("iperf -c 1.2.3.4 -i 0.05", &c, err) && strstr(err, "bad interval") != NULL);
    CHECK(!parse("iperf --udp=1 -s", &c, err) && strstr(err, "takes no value") != NULL);
    return check_summary("test_iperf_cmd");
}
