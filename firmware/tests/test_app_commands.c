/*
 * Unit tests: a port's own console commands (fw_app_add_commands) join the built-in ones in one
 * table: help lists them, they dispatch, and a full table or a taken name is refused.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_console.h"
#include "fw_netif.h"
#include "fw_out.h"
#include "fw_platform.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "netif/ethernet.h"

static char output[16384];
static size_t output_len;
static int port_calls;
static int port_argc;

uint64_t fw_platform_time_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void fw_platform_console_write(const char *data, size_t len)
{
    if (output_len + len < sizeof output) {
        memcpy(output + output_len, data, len);
        output_len += len;
        output[output_len] = '\0';
    }
}

void fw_platform_restart(void)
{
}

unsigned int fw_platform_random(void)
{
    return 7;
}

const char *fw_platform_target(void)
{
    return "test";
}

static void reset_output(void)
{
    output_len = 0;
    output[0] = '\0';
}

static void cmd_port(int argc, char **argv)
{
    (void)argv;
    port_calls++;
    port_argc = argc;
    fw_printf("RESULT portcmd argc=%d\r\n", argc);
}

static err_t discard_output(struct netif *n, struct pbuf *p)
{
    (void)n;
    (void)p;
    return ERR_OK;
}

static err_t test_netif_init(struct netif *n)
{
    static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x33};
    fw_netif_ethernet_setup(n, 't', 't', discard_output, mac);
    return ERR_OK;
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
    ip4_addr_t ip;
    ip4_addr_t mask;
    ip4_addr_t gw;
    IP4_ADDR(&ip, 10, 77, 0, 2);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    netif_add(&netif, &ip, &mask, &gw, NULL, test_netif_init, ethernet_input);
    netif_set_up(&netif);
    fw_app_init(&netif);
    CHECK(strstr(output, "BOOT name=hil-fw ") != NULL);

    size_t n = 0;
    const struct fw_cmd *table = fw_console_commands(&n);
    CHECK(n == 8);
    CHECK(strcmp(table[0].name, "help") == 0);
    CHECK(strcmp(table[n - 1].name, "portcmd") == 0);

    reset_output();
    feed("help\r\n");
    CHECK(strstr(output, "  portcmd  [ARG...]") != NULL);
    CHECK(strstr(output, "RESULT help commands=8\r\n") != NULL);

    reset_output();
    feed("portcmd a b\r\n");
    CHECK(port_calls == 1 && port_argc == 3);
    CHECK(strcmp(output, "RESULT portcmd argc=3\r\n") == 0);

    /* the table fills up to FW_APP_MAX_COMMANDS, then refuses; a restart keeps the commands */
    size_t room = FW_APP_MAX_COMMANDS - n;
    CHECK(fw_app_add_commands(many, room));
    CHECK(!fw_app_add_commands(&many[room], 1));
    fw_app_init(&netif);
    fw_console_commands(&n);
    CHECK(n == FW_APP_MAX_COMMANDS);
    reset_output();
    feed("version\r\n");
    CHECK(strstr(output, "RESULT version name=hil-fw ") != NULL);
    CHECK(strstr(output, " tcp_mss=") != NULL && strstr(output, " memp_num_tcp_seg=") != NULL);

    return check_summary("test_app_commands");
}
