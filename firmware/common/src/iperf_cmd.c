#include "iperf_cmd.h"

#include <stdio.h>
#include <string.h>

#include "fw_config.h"
#include "fw_parse.h"

#define MAX_BANDWIDTH (100ull * 1000ull * 1000ull * 1000ull) /* 100 Gbit/s */
#define MAX_AMOUNT (1ull << 50)

static bool fail(char *err, unsigned size, const char *fmt, const char *arg)
{
    snprintf(err, size, fmt, arg);
    return false;
}

/* Returns the option's value: "-p 5001" or "--port=5001"; NULL if missing. */
static const char *take_value(int argc, char **argv, int *i, const char *inline_value)
{
    if (inline_value != NULL) {
        return inline_value;
    }
    if (*i + 1 >= argc) {
        return NULL;
    }
    (*i)++;
    return argv[*i];
}

struct long_opt {
    const char *name;
    char short_name;
};

static const struct long_opt long_opts[] = {
    {"server", 's'}, {"client", 'c'}, {"udp", 'u'}, {"port", 'p'},   {"time", 't'},
    {"num", 'n'},    {"len", 'l'},    {"bandwidth", 'b'}, {"interval", 'i'}, {"format", 'f'},
    {"tos", 'S'},    {"bind", 'B'},   {"parallel", 'P'},  {"abort", 'a'},    {"ipv6_domain", 'V'},
    {"nodelay", 'N'},
};

/* Maps "--name[=value]" to its short option; sets *value to the inline value if any. */
static char long_to_short(const char *arg, const char **value)
{
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    *value = eq ? eq + 1 : NULL;
    for (size_t k = 0; k < sizeof long_opts / sizeof long_opts[0]; k++) {
        if (strlen(long_opts[k].name) == n && strncmp(long_opts[k].name, name, n) == 0) {
            return long_opts[k].short_name;
        }
    }
    return '\0';
}

bool iperf_cmd_parse(int argc, char **argv, struct iperf_config *cfg, char *err, unsigned err_size)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->port = FW_IPERF_DEFAULT_PORT;
    cfg->interval_ms = FW_IPERF_DEFAULT_INTERVAL_MS;
    cfg->format = 'm';
    bool have_time = false;
    bool have_len = false;
    uint32_t time_ms = 0;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *inline_value = NULL;
        char opt;
        if (arg[0] == '-' && arg[1] == '-' && arg[2] != '\0') {
            opt = long_to_short(arg, &inline_value);
            if (opt == '\0') {
                return fail(err, err_size, "unknown option %s", arg);
            }
        } else if (arg[0] == '-' && arg[1] != '\0' && arg[2] == '\0') {
            opt = arg[1];
        } else {
            return fail(err, err_size, "unexpected argument %s", arg);
        }
        if (strchr("scuptnlbifSBPaVN", opt) == NULL) {
            return fail(err, err_size, "unknown option %s", arg);
        }
        bool flag = (opt == 's' || opt == 'u' || opt == 'a' || opt == 'V' || opt == 'N');
        if (flag && inline_value != NULL) {
            return fail(err, err_size, "option %s takes no value", arg);
        }
        const char *v = flag ? NULL : take_value(argc, argv, &i, inline_value);
        if (!flag && v == NULL) {
            return fail(err, err_size, "option %s needs a value", arg);
        }
        uint32_t u32;
        switch (opt) {
        case 's':
            if (cfg->role == IPERF_ROLE_CLIENT) {
                return fail(err, err_size, "%s", "-s and -c exclude each other");
            }
            cfg->role = IPERF_ROLE_SERVER;
            break;
        case 'c':
            if (cfg->role == IPERF_ROLE_SERVER) {
                return fail(err, err_size, "%s", "-s and -c exclude each other");
            }
            if (!fw_parse_ipv4(v, &cfg->peer_ip)) {
                return fail(err, err_size, "bad IPv4 address %s", v);
            }
            cfg->role = IPERF_ROLE_CLIENT;
            break;
        case 'u':
            cfg->udp = true;
            break;
        case 'a':
            cfg->abort = true;
            break;
        case 'V':
            return fail(err, err_size, "%s", "IPv6 is not supported by this firmware");
        case 'p':
            if (!fw_parse_u32(v, 1, 65535, &u32)) {
                return fail(err, err_size, "bad port %s (1-65535)", v);
            }
            cfg->port = (uint16_t)u32;
            break;
        case 't':
            if (!fw_parse_seconds_ms(v, 100, FW_IPERF_MAX_TIME_S * 1000u, &time_ms)) {
                return fail(err, err_size, "bad time %s (0.1-86400 s)", v);
            }
            have_time = true;
            break;
        case 'n':
            if (!fw_parse_scaled(v, 1, MAX_AMOUNT, &cfg->amount)) {
                return fail(err, err_size, "bad byte count %s", v);
            }
            break;
        case 'l': {
            uint64_t len;
            if (!fw_parse_scaled(v, 1, FW_IPERF_TCP_MAX_LEN, &len)) {
                return fail(err, err_size, "bad length %s", v);
            }
            cfg->len = (uint32_t)len;
            have_len = true;
            break;
        }
        case 'b':
            if (!fw_parse_scaled(v, 1, MAX_BANDWIDTH, &cfg->bandwidth)) {
                return fail(err, err_size, "bad bandwidth %s (bit/s with optional k/m/g/K/M/G)", v);
            }
            break;
        case 'i':
            if (!fw_parse_seconds_ms(v, 0, 3600u * 1000u, &cfg->interval_ms) ||
                (cfg->interval_ms != 0 && cfg->interval_ms < 100)) {
                return fail(err, err_size, "bad interval %s (0 or 0.1-3600 s)", v);
            }
            break;
        case 'f':
            if (strcmp(v, "b") != 0 && strcmp(v, "k") != 0 && strcmp(v, "m") != 0) {
                return fail(err, err_size, "bad format %s (b, k or m)", v);
            }
            cfg->format = v[0];
            break;
        case 'S':
            if (!fw_parse_u32(v, 0, 255, &u32)) {
                return fail(err, err_size, "bad TOS %s (0-255)", v);
            }
            cfg->tos = (uint8_t)u32;
            break;
        case 'B':
            if (!fw_parse_ipv4(v, &cfg->bind_ip)) {
                return fail(err, err_size, "bad IPv4 address %s", v);
            }
            break;
        case 'N': /* TCP_NODELAY: Nagle's algorithm off on the client's connection (iperf -N) */
            cfg->nodelay = true;
            break;
        case 'P':
            if (!fw_parse_u32(v, 1, 1, &u32)) {
                return fail(err, err_size, "unsupported parallel count %s (only 1)", v);
            }
            break;
        default:
            return fail(err, err_size, "unknown option %s", arg);
        }
    }

    if (cfg->abort) {
        if (argc != 2) {
            return fail(err, err_size, "%s", "--abort takes no other option");
        }
        return true;
    }
    if (cfg->role == IPERF_ROLE_NONE) {
        return fail(err, err_size, "%s", "need -s or -c IP");
    }
    if (have_time && cfg->amount != 0) {
        return fail(err, err_size, "%s", "-t and -n exclude each other");
    }
    if (cfg->role == IPERF_ROLE_SERVER && cfg->amount != 0) {
        return fail(err, err_size, "%s", "-n is a client option");
    }
    if (cfg->nodelay && (cfg->role != IPERF_ROLE_CLIENT || cfg->udp)) {
        return fail(err, err_size, "%s", "-N is a TCP client option");
    }
    if (cfg->udp) {
        if (!have_len) {
            cfg->len = FW_IPERF_UDP_DEFAULT_LEN;
        } else if (cfg->len < FW_IPERF_UDP_MIN_LEN || cfg->len > FW_IPERF_UDP_MAX_LEN) {
            snprintf(err, err_size, "UDP length %lu out of range (%u-%u)", (unsigned long)cfg->len,
                     (unsigned)FW_IPERF_UDP_MIN_LEN, (unsigned)FW_IPERF_UDP_MAX_LEN);
            return false;
        }
    } else if (!have_len) {
        cfg->len = FW_IPERF_TCP_DEFAULT_LEN;
    }
    if (cfg->role == IPERF_ROLE_CLIENT) {
        cfg->duration_ms = have_time ? time_ms : (cfg->amount ? 0 : FW_IPERF_DEFAULT_TIME_S * 1000u);
    } else {
        cfg->duration_ms = have_time ? time_ms : 0;
    }
    return true;
}
