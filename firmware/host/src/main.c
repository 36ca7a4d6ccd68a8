/*
 * main.c - the Linux host port of the test firmware: lwIP on a tap device, console on a
 * pseudo-terminal (as a board's USB serial port) or on stdin/stdout, one poll loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core_lock.h"
#include "fault_inject.h"
#include "fw_app.h"
#include "fw_arp_guard.h"
#include "fw_config.h"
#include "fw_parse.h"
#include "fw_platform.h"
#include "host_platform.h"
#include "link_delay.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"
#include "personality.h"
#include "tapif.h"
#ifdef FW_BRIDGE
#include "host_bridge.h"
#endif
#include "esp_wifi_personality.h"
#include "wifi_air.h"
#include "wifi_cmd.h"
#include "wifi_link.h"
#include "wifi_sim.h"

#define MAX_FRAMES_PER_POLL 256
#define MAX_SLEEP_US 1000000u
#define BRIDGE_TAPS_ARG_MAX 128 /* bytes of the --bridge-taps list */

#ifdef FW_BRIDGE
#define BUILD_HAS_BRIDGE 1
#else
#define BUILD_HAS_BRIDGE 0
#endif

static volatile sig_atomic_t stop_requested;

static const char *pty_link_path;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* The simulated station's air between its tap and the stack (wifi_air.h). */
static bool air_carry(size_t len, bool outgoing)
{
    return wifi_air_carry(len, outgoing ? WIFI_AIR_UP : WIFI_AIR_DOWN, fw_platform_time_us());
}

/* The SoftAP's beacons and association answers (wifi_link.h): a band of their own in the AP's queue */
static bool air_management(const uint8_t *frame, size_t len)
{
    return len >= 14 && ((unsigned)frame[12] << 8 | frame[13]) == WIFI_LINK_ETHERTYPE;
}

static const struct tapif_air station_air = {wifi_air_free_at_us, air_carry, NULL};
static const struct tapif_air linked_station_air = {wifi_air_free_at_us, air_carry, air_management};

/* --wifi-link: the air's management frames go to the tap straight (wifi_link.h) */
static struct tapif *wifi_link_tap;

static void wifi_link_write(const uint8_t *frame, size_t len)
{
    tapif_write_frame(wifi_link_tap, frame, len);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hil-fw-host --tap NAME --ip A.B.C.D [options]\n"
            "       hil-fw-host --bridge-taps NAME,NAME --ip A.B.C.D [options]   (bridge build)\n"
            "  --tap NAME          tap device to attach to (created if missing and permitted)\n"
            "  --bridge-taps A,B   the bridge build (preset host-bridge): forward frames between these taps\n"
            "                      with lwIP's bridgeif; --ip is the bridge's own (management) address;\n"
            "                      a --tap given as well must be one of them\n"
            "  --ip A.B.C.D        the DUT's IPv4 address\n"
            "  --netmask A.B.C.D   default 255.255.255.0\n"
            "  --gw A.B.C.D        default 0.0.0.0 (none)\n"
            "  --mac XX:XX:XX:XX:XX:XX  default 02:00:00:00:00:02\n"
            "  --console pty|stdio console on a new pseudo-terminal (default) or on stdin/stdout\n"
            "  --pty-link PATH     with --console pty: symlink PATH to the pseudo-terminal\n"
            "  --wifi-sim-ssid SSID  run as a Wi-Fi station (the ESP32 port's `wifi` command) next to a\n"
            "                      simulated AP with this SSID; the address then comes from `wifi connect`\n"
            "                      (no --ip) and nothing passes until the station has associated\n"
            "  --wifi-sim-psk-env VAR  the simulated AP's passphrase is in environment variable VAR\n"
            "                      (default: an open network)\n"
            "  --wifi-link         Wi-Fi over the tap's link, with the ESP32 port's `wifi` command: `wifi ap`\n"
            "                      makes this DUT the SoftAP there, `wifi connect` joins a SoftAP heard\n"
            "                      there (another host firmware's); the address comes from either command\n"
            "  --wifi-air FILE     the station's radio follows a path-loss model driven by an attenuator\n"
            "                      writing \"ATTENUATION_DB [AP_DBM]\" to FILE (RSSI, MCS, retries, air time)\n"
            "  --wifi-air-notch-db N  a planted bad point: at N dB of attenuation frames take twice the air\n"
            "  --personality NAME  speak a stock test firmware's console instead of the project's (test\n"
            "                      equipment for the suite's console dialects): %s; an Espressif one\n"
            "                      with --wifi-sim-ssid has the example's Wi-Fi commands, --ip is its DHCP lease\n",
            personality_names());
}

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "hil-fw-host: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see --help)\n");
    return 2;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
    unsigned v[6];
    char tail;
    if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6) {
        return 0;
    }
    for (int i = 0; i < 6; i++) {
        mac[i] = (uint8_t)v[i];
    }
    return (mac[0] & 1u) == 0; /* a unicast address */
}

static void set_ip(ip4_addr_t *a, uint32_t host_order)
{
    ip4_addr_set_u32(a, lwip_htonl(host_order));
}

static void remove_pty_link(void)
{
    if (pty_link_path != NULL) {
        unlink(pty_link_path);
    }
}

/* Opens a pseudo-terminal in raw mode; fills the console with its master side. */
static int open_pty_console(struct host_console *con, const char *link)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY) /* survives a restart (re-exec) */;
    char name[128];
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
        fprintf(stderr, "hil-fw-host: cannot create a pseudo-terminal: %s\n", strerror(errno));
        return -1;
    }
    int slave = open(name, O_RDWR | O_NOCTTY);
    if (slave < 0) {
        fprintf(stderr, "hil-fw-host: cannot open %s: %s\n", name, strerror(errno));
        return -1;
    }
    struct termios t;
    if (tcgetattr(slave, &t) == 0) {
        cfmakeraw(&t);
        tcsetattr(slave, TCSANOW, &t);
    }
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    con->in_fd = master;
    con->out_fd = master;
    con->pty_slave_fd = slave;
    if (link != NULL) {
        unlink(link);
        if (symlink(name, link) != 0) {
            fprintf(stderr, "hil-fw-host: cannot create link %s: %s\n", link, strerror(errno));
            return -1;
        }
        pty_link_path = link;
        atexit(remove_pty_link);
    }
    fprintf(stderr, "hil-fw-host: console on %s\n", name);
    return 0;
}

/* Splits "A,B" into tap names (copied: argv stays intact for a restart). Returns the count, 0 when
 * malformed (an empty or repeated name, more than max). */
static size_t parse_tap_list(const char *arg, struct tapif *taps, size_t max)
{
    static char names[BRIDGE_TAPS_ARG_MAX];
    if (strlen(arg) >= sizeof names) {
        return 0;
    }
    strcpy(names, arg);
    size_t n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(names, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            if (strcmp(taps[i].ifname, tok) == 0) {
                return 0;
            }
        }
        taps[n++].ifname = tok;
    }
    size_t commas = 0;
    for (const char *c = arg; *c != '\0'; c++) {
        commas += *c == ',';
    }
    return commas + 1 == n ? n : 0; /* no empty names ("a,,b", ",a") */
}

/* After fw_platform_restart(): reuse the console the previous image had. */
static int inherit_console(struct host_console *con)
{
    const char *fds = getenv("HILFW_CONSOLE_FDS");
    if (fds == NULL || sscanf(fds, "%d,%d,%d", &con->in_fd, &con->out_fd, &con->pty_slave_fd) != 3) {
        return 0;
    }
    unsetenv("HILFW_CONSOLE_FDS");
    fcntl(con->out_fd, F_SETFL, fcntl(con->out_fd, F_GETFL) | O_NONBLOCK);
    return 1;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tap", required_argument, NULL, 't'},    {"ip", required_argument, NULL, 'i'},
        {"netmask", required_argument, NULL, 'n'}, {"gw", required_argument, NULL, 'g'},
        {"mac", required_argument, NULL, 'm'},    {"console", required_argument, NULL, 'c'},
        {"pty-link", required_argument, NULL, 'l'}, {"help", no_argument, NULL, 'h'},
        {"wifi-sim-ssid", required_argument, NULL, 'w'}, {"wifi-sim-psk-env", required_argument, NULL, 'p'},
        {"bridge-taps", required_argument, NULL, 'b'}, {"personality", required_argument, NULL, 'P'},
        {"wifi-air", required_argument, NULL, 'a'}, {"wifi-air-notch-db", required_argument, NULL, 'N'},
        {"wifi-link", no_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const char *tap = NULL;
    const char *console_kind = "pty";
    const char *link = NULL;
    const char *sim_ssid = NULL;
    int wifi_link = 0;
    const char *sim_psk_env = NULL;
    const char *air_file = NULL;
    int notch_db = WIFI_AIR_NOTCH_OFF;
    uint32_t ip = 0;
    uint32_t mask = 0xffffff00u;
    uint32_t gw = 0;
    int have_ip = 0;
    uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
    static struct tapif taps[HOST_MAX_TAPS];
    size_t tap_count = 0;
    const char *bridge_taps = NULL;
    const struct fw_personality *personality = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 't': tap = optarg; break;
        case 'i':
            if (!fw_parse_ipv4(optarg, &ip)) return fail("bad --ip %s", optarg);
            have_ip = 1;
            break;
        case 'n':
            if (!fw_parse_ipv4(optarg, &mask)) return fail("bad --netmask %s", optarg);
            break;
        case 'g':
            if (!fw_parse_ipv4(optarg, &gw)) return fail("bad --gw %s", optarg);
            break;
        case 'm':
            if (!parse_mac(optarg, mac)) return fail("bad --mac %s (unicast XX:XX:XX:XX:XX:XX)", optarg);
            break;
        case 'c':
            if (strcmp(optarg, "pty") != 0 && strcmp(optarg, "stdio") != 0) return fail("bad --console %s (pty or stdio)", optarg);
            console_kind = optarg;
            break;
        case 'l': link = optarg; break;
        case 'w': sim_ssid = optarg; break;
        case 'L': wifi_link = 1; break;
        case 'p': sim_psk_env = optarg; break;
        case 'b': bridge_taps = optarg; break;
        case 'a': air_file = optarg; break;
        case 'N': {
            uint32_t v = 0;
            if (!fw_parse_u32(optarg, 0, WIFI_SIM_AIR_ATTEN_MAX_DB, &v)) return fail("bad --wifi-air-notch-db %s (0..200)", optarg);
            notch_db = (int)v;
            break;
        }
        case 'P':
            if ((personality = personality_find(optarg)) == NULL) {
                fprintf(stderr, "hil-fw-host: bad --personality %s (one of: %s)\n", optarg, personality_names());
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: return fail("unknown or incomplete option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) return fail("unexpected argument %s", argv[optind]);
    if (bridge_taps != NULL && !BUILD_HAS_BRIDGE) {
        return fail("%s", "--bridge-taps needs the bridge build (preset host-bridge)");
    }
    if (bridge_taps == NULL && BUILD_HAS_BRIDGE) return fail("%s", "this is the bridge build: --bridge-taps is required");
    if (bridge_taps != NULL) {
        tap_count = parse_tap_list(bridge_taps, taps, HOST_MAX_TAPS);
        if (tap_count < 2) {
            fprintf(stderr, "hil-fw-host: bad --bridge-taps %s (2..%u distinct tap names, comma-separated)\n",
                    bridge_taps, (unsigned)HOST_MAX_TAPS);
            return 2;
        }
        int listed = tap == NULL;
        for (size_t i = 0; i < tap_count && !listed; i++) {
            listed = strcmp(taps[i].ifname, tap) == 0;
        }
        if (!listed) return fail("--tap %s is not one of --bridge-taps", tap);
        if (sim_ssid != NULL) return fail("%s", "--wifi-sim-ssid does not go with --bridge-taps");
    } else {
        if (tap == NULL) return fail("%s", "--tap is required");
        taps[0].ifname = tap;
        tap_count = 1;
    }
    if (wifi_link && (sim_ssid != NULL || bridge_taps != NULL)) {
        return fail("%s", "--wifi-link goes with neither --wifi-sim-ssid nor --bridge-taps");
    }
    if (wifi_link && personality != NULL && strcmp(personality->name, "espressif-v4") != 0) {
        return fail("%s", "--wifi-link with a personality: only espressif-v4 has the example's `ap` (its SoftAP)");
    }
    if (wifi_link && personality == NULL && have_ip) {
        return fail("%s", "--ip does not go with --wifi-link: the address comes from `wifi ap` or `wifi connect`");
    }
    if (wifi_link && personality != NULL && !have_ip) {
        return fail("%s", "--ip is required with --personality and --wifi-link: the SoftAP's address, or the station's lease");
    }
    const int wifi_on = sim_ssid != NULL || wifi_link;
    if (!wifi_on && !have_ip) return fail("%s", "--ip is required");
    if (sim_ssid != NULL && have_ip && personality == NULL) {
        return fail("%s", "--ip does not go with --wifi-sim-ssid: the address comes from `wifi connect`");
    }
    if (sim_ssid != NULL && personality != NULL && !have_ip) {
        return fail("%s", "--ip is required with --personality and --wifi-sim-ssid: the address the simulated AP's DHCP leases");
    }
    if (sim_psk_env != NULL && sim_ssid == NULL) return fail("%s", "--wifi-sim-psk-env needs --wifi-sim-ssid");
    if (air_file != NULL && !wifi_on) return fail("%s", "--wifi-air needs --wifi-sim-ssid or --wifi-link");
    if (notch_db != WIFI_AIR_NOTCH_OFF && air_file == NULL) return fail("%s", "--wifi-air-notch-db needs --wifi-air");
    if (personality != NULL && bridge_taps != NULL) return fail("%s", "--personality is an endpoint: not with --bridge-taps");
    if (personality != NULL && sim_ssid != NULL && strncmp(personality->name, "espressif", 9) != 0) {
        return fail("%s", "--wifi-sim-ssid with a personality: only the Espressif ones have Wi-Fi commands");
    }
    const char *sim_psk = "";
    if (sim_psk_env != NULL && (sim_psk = getenv(sim_psk_env)) == NULL) return fail("--wifi-sim-psk-env: %s is not set", sim_psk_env);
    if (wifi_on && personality == NULL && !fw_app_add_commands(wifi_sim_commands, WIFI_SIM_COMMAND_COUNT)) {
        return fail("%s", "no room for the wifi commands (FW_APP_MAX_COMMANDS)");
    }
    if (wifi_on && personality != NULL && !esp_wifi_personality_install(personality->name, ip, mask, gw)) {
        return fail("%s", "no room for the personality's Wi-Fi commands");
    }

    struct host_console con = {STDIN_FILENO, STDOUT_FILENO, -1};
    if (!inherit_console(&con) && strcmp(console_kind, "pty") == 0 && open_pty_console(&con, link) != 0) {
        return 1;
    }
    host_platform_init(&con, argv);

    for (size_t i = 0; i < tap_count; i++) {
        if (tapif_open(&taps[i]) < 0) {
            return 1;
        }
        host_platform_add_tap_fd(taps[i].fd);
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    lwip_init();
    ip4_addr_t a_ip, a_mask, a_gw;
    set_ip(&a_ip, ip);
    set_ip(&a_mask, mask);
    set_ip(&a_gw, gw);
    /* the stack's netif (the one with the address) and the netif that reads each tap */
    struct netif *app_netif;
    struct netif *tap_netifs[HOST_MAX_TAPS];
#ifdef FW_BRIDGE
    app_netif = host_bridge_add(taps, tap_count, mac, &a_ip, &a_mask, &a_gw);
    if (app_netif == NULL) {
        return 1;
    }
    for (size_t i = 0; i < tap_count; i++) {
        tap_netifs[i] = host_bridge_port(i);
    }
#else
    static struct netif netif;
    memcpy(taps[0].mac, mac, sizeof mac);
    if (netif_add(&netif, &a_ip, &a_mask, &a_gw, &taps[0], tapif_init, ethernet_input) == NULL) {
        fprintf(stderr, "hil-fw-host: netif_add failed\n");
        return 1;
    }
    netif_set_default(&netif);
    netif_set_up(&netif);
    app_netif = &netif;
    tap_netifs[0] = &netif;
#endif
    /* unsolicited ARP never re-points the stack's ARP entries (fw_arp_guard.h); before the delay line,
     * which then delays frames into it */
    if (!fw_arp_guard_attach(app_netif)) {
        fprintf(stderr, "hil-fw-host: cannot put the ARP guard on the netif\n");
        return 1;
    }
    if (!link_delay_install(app_netif)) {
        fprintf(stderr, "hil-fw-host: no room for the link delay line (FW_APP_MAX_COMMANDS, FW_APP_MAX_PORT_POLLS)\n");
        return 1;
    }
    if (!fault_inject_install()) {
        fprintf(stderr, "hil-fw-host: no room for the fault command (FW_APP_MAX_COMMANDS, FW_APP_MAX_PORT_POLLS)\n");
        return 1;
    }
    if (sim_ssid != NULL && !wifi_sim_init(app_netif, sim_ssid, sim_psk)) {
        /* names the variable, never the value */
        fprintf(stderr, "hil-fw-host: --wifi-sim-ssid must be 1..32 bytes and %s empty or 8..63 printable characters\n",
                sim_psk_env != NULL ? sim_psk_env : "the passphrase");
        return 2;
    }
    if (wifi_link) {
        wifi_sim_init_link(app_netif);
        wifi_link_tap = &taps[0];
        wifi_link_init(app_netif, wifi_link_write);
        taps[0].side_input = wifi_link_input;
    }
    if (air_file != NULL) {
        if (!wifi_sim_use_air(air_file, notch_db)) return fail("--wifi-air %s: path too long", air_file);
        taps[0].air = wifi_link ? &linked_station_air : &station_air;
    }
    fw_app_set_personality(personality);
    fw_app_init(app_netif);

    /* the taps first, the console last */
    struct pollfd fds[HOST_MAX_TAPS + 1];
    const nfds_t nfds = (nfds_t)tap_count + 1;
    for (size_t i = 0; i < tap_count; i++) {
        fds[i] = (struct pollfd){taps[i].fd, POLLIN, 0};
    }
    struct pollfd *con_pfd = &fds[tap_count];
    *con_pfd = (struct pollfd){con.in_fd, POLLIN, 0};
    char buf[512];
    int stdin_closed = 0;
    while (!stop_requested) {
        uint64_t wait_us = MAX_SLEEP_US;
        u32_t lw = sys_timeouts_sleeptime();
        if (lw != SYS_TIMEOUTS_SLEEPTIME_INFINITE && (uint64_t)lw * 1000u < wait_us) {
            wait_us = (uint64_t)lw * 1000u;
        }
        uint64_t app = fw_app_poll_delay_us();
        if (app < wait_us) {
            wait_us = app;
        }
        uint64_t air = wifi_on ? wifi_sim_poll_delay_us() : UINT64_MAX;
        if (air < wait_us) {
            wait_us = air;
        }
        uint64_t beacon = wifi_link ? wifi_link_poll_delay_us() : UINT64_MAX;
        if (beacon < wait_us) {
            wait_us = beacon;
        }
        for (size_t i = 0; i < tap_count; i++) { /* a tap whose air is busy is read when it is free */
            uint64_t busy = tapif_air_wait_us(&taps[i]);
            fds[i].events = busy > 0 ? 0 : POLLIN;
            wait_us = busy > 0 && busy < wait_us ? busy : wait_us;
        }
        struct timespec ts = {(time_t)(wait_us / 1000000u), (long)(wait_us % 1000000u) * 1000L};
        int n = ppoll(fds, nfds, &ts, NULL);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "hil-fw-host: poll failed: %s\n", strerror(errno));
            return 1;
        }
        for (size_t i = 0; i < tap_count; i++) {
            /* with an air: whenever it is free (the AP's queue, what the air carried meanwhile: air_queue.h) */
            bool air_turn = taps[i].air != NULL && (tapif_air_wait_us(&taps[i]) == 0 || tapif_air_carried(&taps[i]));
            if ((n > 0 && (fds[i].revents & POLLIN)) || air_turn) {
                tapif_poll(tap_netifs[i], MAX_FRAMES_PER_POLL);
            }
        }
        /* the application runs under the core lock, as the ESP32 port's app task does */
        host_core_lock();
        if (n > 0 && (con_pfd->revents & (POLLIN | POLLHUP))) {
            ssize_t r = read(con.in_fd, buf, sizeof buf);
            if (r > 0) {
                fw_app_console_input(buf, (size_t)r);
            } else if ((r == 0 || (errno != EAGAIN && errno != EINTR)) && con.pty_slave_fd < 0) {
                con_pfd->fd = -1; /* stdin closed: finish the running test, then exit */
                stdin_closed = 1;
            }
        }
        sys_check_timeouts();
        fw_app_poll();
        host_core_unlock();
        if (wifi_on) { /* the Wi-Fi work runs without the lock (it takes it to print) */
            wifi_sim_poll();
            if (wifi_link) {
                wifi_link_poll();
            }
            if (personality != NULL) {
                esp_wifi_personality_service();
            } else {
                wifi_cmd_service();
            }
        }
        if (stdin_closed && !fw_test_running()) {
            break;
        }
    }
    return 0;
}
