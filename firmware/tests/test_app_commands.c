/*
 * Unit tests: a port's own console commands (fw_app_add_commands) join the built-in ones in one
 * table: help lists them, they dispatch, and a full table or a taken name is refused.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_console.h"
#include "fw_out.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "test_platform.h"

static int port_calls;
static int port_argc;

static void cmd_port(int argc, char **argv)
{
    (void)argv;
    port_calls++;
    port_argc = argc;
    fw_printf("RESULT portcmd argc=%d\r\n", argc);
}

static void feed(const char *s)
{
    fw_app_console_input(s, strlen(s));
}

int main(void)
{
    static const struct fw_cmd port[] = {{"portcmd", "[ARG...]", "a port's own command", cmd_port}};
    static const struct fw_cmd clash[] = {{"version", "", "shadows a built-in", cmd_port}};
    static const struct fw_cmd twice[] = {{"dup", "", "", cmd_port}, {"dup", "", "", cmd_port}};
    static const struct fw_cmd no_fn[] = {{"nofn", "", "", NULL}};
    static struct fw_cmd many[FW_APP_MAX_COMMANDS];
    static char names[FW_APP_MAX_COMMANDS][8];

    CHECK(fw_app_add_commands(NULL, 0));
    CHECK(fw_app_add_commands(port, 1));
    CHECK(!fw_app_add_commands(port, 1));   /* the same name again */
    CHECK(!fw_app_add_commands(clash, 1));  /* a built-in's name */
    CHECK(!fw_app_add_commands(twice, 2));  /* a duplicate within one call */
    CHECK(!fw_app_add_commands(no_fn, 1));  /* no function */
    for (int i = 0; i < FW_APP_MAX_COMMANDS; i++) {
        names[i][0] = 'x';
        names[i][1] = (char)('a' + i);
        many[i] = (struct fw_cmd){names[i], "", "", cmd_port};
    }
    CHECK(!fw_app_add_commands(many, FW_APP_MAX_COMMANDS)); /* more than the table holds */

    lwip_init();
    static struct netif netif;
    test_netif_add(&netif, 0x0a4d0002u, 0xffffff00u);
    fw_app_init(&netif);
    CHECK(strstr(test_output, "BOOT name=hil-fw ") != NULL);

    size_t n = 0;
    const struct fw_cmd *table = fw_console_commands(&n);
    CHECK(n == 9);
    CHECK(strcmp(table[0].name, "help") == 0);
    CHECK(strcmp(table[n - 1].name, "portcmd") == 0);

    test_output_reset();
    feed("help\r\n");
    CHECK(strstr(test_output, "  portcmd  [ARG...]") != NULL);
    CHECK(strstr(test_output, "RESULT help commands=9\r\n") != NULL);

    test_output_reset();
    feed("portcmd a b\r\n");
    CHECK(port_calls == 1 && port_argc == 3);
    CHECK(strcmp(test_output, "RESULT portcmd argc=3\r\n") == 0);

    /* the table fills up to FW_APP_MAX_COMMANDS, then refuses; a restart keeps the commands */
    size_t room = FW_APP_MAX_COMMANDS - n;
    CHECK(fw_app_add_commands(many, room));
    CHECK(!fw_app_add_commands(&many[room], 1));
    fw_app_init(&netif);
    fw_console_commands(&n);
    CHECK(n == FW_APP_MAX_COMMANDS);
    test_output_reset();
    feed("version\r\n");
    CHECK(strstr(test_output, "RESULT version name=hil-fw ") != NULL);
    CHECK(strstr(test_output, " tcp_mss=") != NULL && strstr(test_output, " memp_num_tcp_seg=") != NULL);

    return check_summary("test_app_commands");
}
