#include "fw_app.h"

#include "fw_inttypes.h"
#include <string.h>

#include "fw_config.h"
#include "fw_console.h"
#include "fw_out.h"
#include "fw_platform.h"
#include "fw_stack_info.h"
#include "fw_stats.h"
#include "fw_version.h"
#include "iperf.h"
#include "lwip/netif.h"
#include "lwip/init.h"
#include "lwip/opt.h"
#include "ping.h"
#include "stream.h"

static struct netif *app_netif;
#define TEST_SLOTS 2

static struct {
    const char *name;
    const char *group;
} slots[TEST_SLOTS];

bool fw_test_claim(const char *cmd, const char *name, const char *group)
{
    int free_slot = -1;
    for (int i = 0; i < TEST_SLOTS; i++) {
        if (slots[i].name == NULL) {
            free_slot = free_slot < 0 ? i : free_slot;
        } else if (strcmp(slots[i].group, group) != 0 || strcmp(slots[i].name, name) == 0) {
            fw_err(cmd, "busy: %s running (abort it with %s -a)", slots[i].name, slots[i].group);
            return false;
        }
    }
    if (free_slot < 0) {
        fw_err(cmd, "busy: %s and %s running", slots[0].name, slots[1].name);
        return false;
    }
    slots[free_slot].name = name;
    slots[free_slot].group = group;
    return true;
}

void fw_test_release(const char *name)
{
    for (int i = 0; i < TEST_SLOTS; i++) {
        if (slots[i].name != NULL && strcmp(slots[i].name, name) == 0) {
            slots[i].name = NULL;
            slots[i].group = NULL;
        }
    }
}

bool fw_test_running(void)
{
    for (int i = 0; i < TEST_SLOTS; i++) {
        if (slots[i].name != NULL) {
            return true;
        }
    }
    return false;
}

/* The identity and stack configuration, as key=value pairs (banner and version). */
static void print_identity_fields(void)
{
    char ipbuf[IP4ADDR_STRLEN_MAX];
    char maskbuf[IP4ADDR_STRLEN_MAX];
    char gwbuf[IP4ADDR_STRLEN_MAX];
    const uint8_t *m = app_netif->hwaddr;
    fw_printf("name=%s version=%s target=%s variant=%s tcp_mss=%u tcp_wnd=%u tcp_snd_buf=%u"
              " pbuf_pool_size=%u mem_size=%u memp_num_tcp_seg=%u"
              " ip=%s netmask=%s gw=%s mac=%02x:%02x:%02x:%02x:%02x:%02x",
              FW_NAME, FW_VERSION, fw_platform_target(), FW_VARIANT, (unsigned)FW_STACK_TCP_MSS,
              (unsigned)FW_STACK_TCP_WND, (unsigned)FW_STACK_TCP_SND_BUF, (unsigned)FW_STACK_PBUF_POOL_SIZE,
              (unsigned)FW_STACK_MEM_SIZE, (unsigned)FW_STACK_MEMP_NUM_TCP_SEG,
              ip4addr_ntoa_r(netif_ip4_addr(app_netif), ipbuf, sizeof ipbuf),
              ip4addr_ntoa_r(netif_ip4_netmask(app_netif), maskbuf, sizeof maskbuf),
              ip4addr_ntoa_r(netif_ip4_gw(app_netif), gwbuf, sizeof gwbuf), m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void print_banner_text(void)
{
    fw_printf("\r\n%s %s (target %s, variant %s), lwIP %s\r\n", FW_NAME, FW_VERSION, fw_platform_target(),
              FW_VARIANT, LWIP_VERSION_STRING);
    fw_printf("stack: TCP_MSS=%u TCP_WND=%u TCP_SND_BUF=%u PBUF_POOL_SIZE=%u MEM_SIZE=%u\r\n",
              (unsigned)FW_STACK_TCP_MSS, (unsigned)FW_STACK_TCP_WND, (unsigned)FW_STACK_TCP_SND_BUF,
              (unsigned)FW_STACK_PBUF_POOL_SIZE, (unsigned)FW_STACK_MEM_SIZE);
}

static void cmd_help(int argc, char **argv)
{
    (void)argv;
    size_t n;
    const struct fw_cmd *cmds = fw_console_commands(&n);
    if (argc > 1) {
        fw_err("help", "takes no arguments");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        fw_printf("  %-8s %s\r\n           %s\r\n", cmds[i].name, cmds[i].usage, cmds[i].help);
    }
    fw_printf("RESULT help commands=%u\r\n", (unsigned)n);
}

static void cmd_version(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fw_err("version", "takes no arguments");
        return;
    }
    print_banner_text();
    fw_printf("RESULT version ");
    print_identity_fields();
    fw_printf("\r\n");
}

static void cmd_stats(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "reset") == 0) {
        fw_stats_reset();
        fw_printf("RESULT stats action=reset\r\n");
        return;
    }
    if (argc > 1) {
        fw_err("stats", "usage: stats [reset]");
        return;
    }
    fw_stats_print();
}

static void cmd_restart(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fw_err("restart", "takes no arguments");
        return;
    }
    fw_printf("RESULT restart status=restarting\r\n");
    fw_platform_restart();
}

static const struct fw_cmd builtin_commands[] = {
    {"help", "", "list the commands", cmd_help},
    {"version", "", "print firmware name, version, target, stack configuration, IP and MAC", cmd_version},
    {"iperf", "-s | -c IP [-u] [-p port] [-t s | -n bytes] [-l len] [-b bw[kKmMgG]] [-i s] [-S tos] | -a",
     "iperf 2 client/server (TCP, UDP); -a/--abort stops the running test", iperf_command},
    {"ping", "IP [-c count] [-i s] [-s size] [-W s] [-q] | -a", "ICMP echo; -i 0 sends on each reply, -q prints only the result",
     ping_command},
    {"stream", "add tx ID IP PORT SIZE BURST PERIOD_MS GAP_US | add rx ID PORT SIZE BURST PERIOD_MS THRESHOLD_MS | start S | clear | -a",
     "bursty multi-stream UDP: configure streams, run them, report per-stream counts and lost bursts", stream_command},
    {"stats", "[reset]", "lwIP counters: link/IP/ICMP/UDP/TCP, heap and pools with high-water marks", cmd_stats},
    {"restart", "", "reboot the device", cmd_restart},
};

#define BUILTIN_COUNT (sizeof builtin_commands / sizeof builtin_commands[0])
_Static_assert(BUILTIN_COUNT < FW_APP_MAX_COMMANDS, "FW_APP_MAX_COMMANDS leaves no room for a port's commands");

/* The port's commands (fw_app_add_commands) and the table the console uses: built-ins first. */
static struct fw_cmd port_commands[FW_APP_MAX_COMMANDS - BUILTIN_COUNT];
static size_t port_command_count;
static struct fw_cmd commands[FW_APP_MAX_COMMANDS];

static bool command_known(const char *name)
{
    for (size_t i = 0; i < BUILTIN_COUNT; i++) {
        if (strcmp(builtin_commands[i].name, name) == 0) {
            return true;
        }
    }
    for (size_t i = 0; i < port_command_count; i++) {
        if (strcmp(port_commands[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

bool fw_app_add_commands(const struct fw_cmd *cmds, size_t count)
{
    if (count == 0) {
        return true;
    }
    if (cmds == NULL || count > sizeof port_commands / sizeof port_commands[0] - port_command_count) {
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        if (cmds[i].name == NULL || cmds[i].fn == NULL || command_known(cmds[i].name)) {
            return false;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(cmds[i].name, cmds[j].name) == 0) {
                return false;
            }
        }
    }
    memcpy(&port_commands[port_command_count], cmds, count * sizeof cmds[0]);
    port_command_count += count;
    return true;
}

static const struct fw_poller *pollers[FW_APP_MAX_POLLERS];
static size_t poller_count;

bool fw_app_add_poller(const struct fw_poller *poller)
{
    if (poller == NULL || poller->poll == NULL || poller->next_deadline_us == NULL || poller_count == FW_APP_MAX_POLLERS) {
        return false;
    }
    pollers[poller_count++] = poller;
    return true;
}

void fw_app_init(struct netif *netif)
{
    app_netif = netif;
    memset(slots, 0, sizeof slots);
    memcpy(commands, builtin_commands, sizeof builtin_commands);
    memcpy(&commands[BUILTIN_COUNT], port_commands, port_command_count * sizeof port_commands[0]);
    fw_console_init(commands, BUILTIN_COUNT + port_command_count);
    print_banner_text();
    fw_printf("BOOT ");
    print_identity_fields();
    fw_printf("\r\n");
}

void fw_app_console_input(const char *data, size_t len)
{
    fw_console_feed(data, len);
}

void fw_app_poll(void)
{
    uint64_t now = fw_platform_time_us();
    iperf_poll(now);
    ping_poll(now);
    stream_poll(now);
    for (size_t i = 0; i < poller_count; i++) {
        pollers[i]->poll(now);
    }
}

uint64_t fw_app_poll_delay_us(void)
{
    uint64_t next = iperf_next_deadline_us();
    uint64_t p = ping_next_deadline_us();
    if (p < next) {
        next = p;
    }
    p = stream_next_deadline_us();
    if (p < next) {
        next = p;
    }
    for (size_t i = 0; i < poller_count; i++) {
        p = pollers[i]->next_deadline_us();
        if (p < next) {
            next = p;
        }
    }
    if (next == UINT64_MAX) {
        return UINT64_MAX;
    }
    uint64_t now = fw_platform_time_us();
    return next > now ? next - now : 0;
}
