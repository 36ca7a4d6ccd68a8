#include "fw_app.h"

#include "fw_inttypes.h"
#include <string.h>

#include "fw_config.h"
#include "fw_console.h"
#include "fw_module.h"
#include "fw_out.h"
#include "fw_platform.h"
#include "fw_stack_info.h"
#include "fw_test_slot.h"
#include "fw_version.h"
#include "lwip/netif.h"
#include "lwip/init.h"
#include "lwip/opt.h"

static struct netif *app_netif;
static const struct fw_app_report *port_report;
static const struct fw_personality *personality;

void fw_app_set_personality(const struct fw_personality *p)
{
    personality = p;
}

struct netif *fw_app_netif(void)
{
    return app_netif;
}

void fw_app_set_report(const struct fw_app_report *report)
{
    port_report = report;
}

const struct fw_app_report *fw_app_report(void)
{
    return port_report;
}

/* The identity and stack configuration, as key=value pairs (banner and version). */
static void print_identity_fields(void)
{
    char ipbuf[IP4ADDR_STRLEN_MAX];
    char maskbuf[IP4ADDR_STRLEN_MAX];
    char gwbuf[IP4ADDR_STRLEN_MAX];
    const uint8_t *m = app_netif->hwaddr;
    fw_printf("name=%s version=%s target=%s variant=%s role=%s tcp_mss=%u tcp_wnd=%u tcp_snd_buf=%u"
              " pbuf_pool_size=%u mem_size=%u memp_num_tcp_seg=%u memp_num_pbuf=%u"
              " ip=%s netmask=%s gw=%s mac=%02x:%02x:%02x:%02x:%02x:%02x",
              FW_NAME, FW_VERSION, fw_platform_target(), FW_VARIANT,
              port_report != NULL && port_report->role != NULL ? port_report->role : "endpoint",
              (unsigned)FW_STACK_TCP_MSS,
              (unsigned)FW_STACK_TCP_WND, (unsigned)FW_STACK_TCP_SND_BUF, (unsigned)FW_STACK_PBUF_POOL_SIZE,
              (unsigned)FW_STACK_MEM_SIZE, (unsigned)FW_STACK_MEMP_NUM_TCP_SEG, (unsigned)FW_STACK_MEMP_NUM_PBUF,
              ip4addr_ntoa_r(netif_ip4_addr(app_netif), ipbuf, sizeof ipbuf),
              ip4addr_ntoa_r(netif_ip4_netmask(app_netif), maskbuf, sizeof maskbuf),
              ip4addr_ntoa_r(netif_ip4_gw(app_netif), gwbuf, sizeof gwbuf), m[0], m[1], m[2], m[3], m[4], m[5]);
    if (port_report != NULL && port_report->identity != NULL) {
        port_report->identity();
    }
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

/* The application's own commands, first in the table; the common modules follow (fw_modules.c). */
static const struct fw_cmd app_cmds[] = {
    {"help", "", "list the commands", cmd_help},
    {"version", "", "print firmware name, version, target, stack configuration, IP and MAC", cmd_version},
};
#define APP_CMD_COUNT (sizeof app_cmds / sizeof app_cmds[0])

/* The ports' modules: commands copied, modules with a poll kept by pointer. */
static struct fw_cmd port_commands[FW_APP_MAX_COMMANDS];
static size_t port_command_count;
static const struct fw_module *port_polls[FW_APP_MAX_PORT_POLLS];
static size_t port_poll_count;

/* The console's table: the application's, the common modules', the ports' commands. */
static struct fw_cmd commands[FW_APP_MAX_COMMANDS];
static size_t command_count;

static bool name_in(const struct fw_cmd *cmds, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(cmds[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

static bool command_known(const char *name)
{
    if (name_in(app_cmds, APP_CMD_COUNT, name) || name_in(port_commands, port_command_count, name)) {
        return true;
    }
    for (size_t m = 0; m < fw_common_module_count; m++) {
        if (name_in(fw_common_modules[m]->cmds, fw_common_modules[m]->cmd_count, name)) {
            return true;
        }
    }
    return false;
}

static size_t common_command_count(void)
{
    size_t n = APP_CMD_COUNT;
    for (size_t m = 0; m < fw_common_module_count; m++) {
        n += fw_common_modules[m]->cmd_count;
    }
    return n;
}

static bool commands_fit(const struct fw_cmd *cmds, size_t count)
{
    if (count == 0) {
        return true;
    }
    if (cmds == NULL || count > FW_APP_MAX_COMMANDS - common_command_count() - port_command_count) {
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        if (cmds[i].name == NULL || cmds[i].fn == NULL || command_known(cmds[i].name) ||
            name_in(cmds, i, cmds[i].name)) {
            return false;
        }
    }
    return true;
}

bool fw_app_add_module(const struct fw_module *module)
{
    if (module == NULL || !commands_fit(module->cmds, module->cmd_count)) {
        return false;
    }
    if (module->poll != NULL && (module->next_deadline_us == NULL || port_poll_count == FW_APP_MAX_PORT_POLLS)) {
        return false;
    }
    if (module->cmd_count > 0) {
        memcpy(&port_commands[port_command_count], module->cmds, module->cmd_count * sizeof module->cmds[0]);
        port_command_count += module->cmd_count;
    }
    if (module->poll != NULL) {
        port_polls[port_poll_count++] = module;
    }
    return true;
}

bool fw_app_add_commands(const struct fw_cmd *cmds, size_t count)
{
    const struct fw_module module = {cmds, count, NULL, NULL};
    return fw_app_add_module(&module);
}

/* A port's commands for a personality (e.g. the Espressif example's Wi-Fi commands): the
 * personality's console has them after its own, and no other port command. */
static const struct fw_cmd *personality_extra;
static size_t personality_extra_count;

bool fw_app_add_personality_commands(const struct fw_cmd *cmds, size_t count)
{
    if (personality_extra != NULL || count > FW_APP_MAX_COMMANDS / 2) {
        return false;
    }
    personality_extra = cmds;
    personality_extra_count = count;
    return true;
}

static void table_append(const struct fw_cmd *cmds, size_t n)
{
    if (n == 0) {
        return;
    }
    if (n > FW_APP_MAX_COMMANDS - command_count) {
        n = FW_APP_MAX_COMMANDS - command_count; /* the common modules alone overflow (help shows it) */
    }
    memcpy(&commands[command_count], cmds, n * sizeof cmds[0]);
    command_count += n;
}

/* The modules whose commands and polls run: the personality's, or the common ones. */
static size_t module_count(void)
{
    return personality != NULL ? personality->module_count : fw_common_module_count;
}

static const struct fw_module *module_at(size_t i)
{
    return personality != NULL ? personality->modules[i] : fw_common_modules[i];
}

static void personality_init(void)
{
    command_count = 0;
    for (size_t m = 0; m < personality->module_count; m++) {
        table_append(personality->modules[m]->cmds, personality->modules[m]->cmd_count);
    }
    table_append(personality_extra, personality_extra_count);
    fw_console_init(commands, command_count);
    fw_console_set_style(personality->console);
    personality->banner();
    fw_console_prompt();
}

void fw_app_init(struct netif *netif)
{
    app_netif = netif;
    fw_test_slots_reset();
    fw_app_console_release();
    fw_out_release(); /* a restart in the middle of a transfer: nothing stays held */
    if (personality != NULL) {
        personality_init();
        return;
    }
    command_count = 0;
    table_append(app_cmds, APP_CMD_COUNT);
    for (size_t m = 0; m < fw_common_module_count; m++) {
        table_append(fw_common_modules[m]->cmds, fw_common_modules[m]->cmd_count);
    }
    table_append(port_commands, port_command_count);
    fw_console_init(commands, command_count);
    print_banner_text();
    fw_printf("BOOT ");
    print_identity_fields();
    fw_printf("\r\n");
}

/* the module that took the console's bytes (a transfer), NULL: the command line has them */
static fw_console_owner_fn console_owner;
static bool owner_skip_lf; /* the owner's line ended with CR: an LF right after it is the line's */

bool fw_app_console_take(fw_console_owner_fn owner)
{
    if (owner == NULL || console_owner != NULL) {
        return false;
    }
    console_owner = owner;
    owner_skip_lf = fw_console_stop_after_line();
    return true;
}

void fw_app_console_release(void)
{
    console_owner = NULL;
    owner_skip_lf = false;
}

void fw_app_console_input(const char *data, size_t len)
{
    while (len > 0) {
        size_t n;
        if (console_owner != NULL) {
            if (owner_skip_lf) {
                owner_skip_lf = false;
                if (data[0] == '\n') {
                    data++;
                    len--;
                    continue;
                }
            }
            fw_console_owner_fn owner = console_owner;
            n = owner(data, len);
            if (n == 0 && console_owner == owner) {
                return; /* an owner that takes nothing and keeps the console: the rest is lost */
            }
        } else {
            n = fw_console_feed(data, len);
        }
        data += n < len ? n : len;
        len -= n < len ? n : len;
    }
}

/* Every module with periodic work: the common (or the personality's) ones in order, then the ports'. */
static const struct fw_module *polled_module(size_t i)
{
    return i < module_count() ? module_at(i) : port_polls[i - module_count()];
}

void fw_app_poll(void)
{
    uint64_t now = fw_platform_time_us();
    for (size_t i = 0; i < module_count() + port_poll_count; i++) {
        const struct fw_module *m = polled_module(i);
        if (m->poll != NULL) {
            m->poll(now);
        }
    }
}

uint64_t fw_app_poll_delay_us(void)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < module_count() + port_poll_count; i++) {
        const struct fw_module *m = polled_module(i);
        if (m->next_deadline_us != NULL) {
            uint64_t t = m->next_deadline_us();
            next = t < next ? t : next;
        }
    }
    if (next == UINT64_MAX) {
        return UINT64_MAX;
    }
    uint64_t now = fw_platform_time_us();
    return next > now ? next - now : 0;
}
