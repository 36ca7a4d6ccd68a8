/*
 * Unit tests: the application runs registered modules (fw_module.h) the same way: a port module's
 * commands join the table after the common ones (in help order), its poll runs from fw_app_poll
 * and its deadline joins fw_app_poll_delay_us; the test-slot lock (fw_test_slot.c) lets an iperf
 * server and client run together and refuses anything else while they run.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fw_app.h"
#include "fw_config.h"
#include "fw_console.h"
#include "fw_out.h"
#include "fw_test_slot.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "test_platform.h"

static uint64_t polled_at;
static int polls;
static uint64_t due_us = UINT64_MAX;

static void tick_poll(uint64_t now_us)
{
    polls++;
    polled_at = now_us;
}

static uint64_t tick_deadline(void)
{
    return due_us;
}

static void cmd_tick(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fw_printf("RESULT tick polls=%d\r\n", polls);
}

static void feed(const char *s)
{
    fw_app_console_input(s, strlen(s));
}

int main(void)
{
    static const struct fw_cmd tick_cmds[] = {{"tick", "", "a port module's command", cmd_tick}};
    static const struct fw_module tick = {tick_cmds, 1, tick_poll, tick_deadline};
    static const struct fw_module no_deadline = {NULL, 0, tick_poll, NULL};
    static const struct fw_module poll_only = {NULL, 0, tick_poll, tick_deadline};
    static const struct fw_cmd clash_cmds[] = {{"iperf", "", "a common module's name", cmd_tick}};
    static const struct fw_module clash = {clash_cmds, 1, NULL, NULL};

    CHECK(!fw_app_add_module(NULL));
    CHECK(!fw_app_add_module(&no_deadline)); /* a poll needs its deadline */
    CHECK(!fw_app_add_module(&clash));       /* a common module's command name */
    CHECK(fw_app_add_module(&tick));
    CHECK(!fw_app_add_module(&tick));        /* its command name is taken now */
    for (int i = 1; i < FW_APP_MAX_PORT_POLLS; i++) {
        CHECK(fw_app_add_module(&poll_only));
    }
    CHECK(!fw_app_add_module(&poll_only));   /* FW_APP_MAX_PORT_POLLS */

    lwip_init();
    static struct netif netif;
    test_netif_add(&netif, 0x0a4d0002u, 0xffffff00u);
    fw_app_init(&netif);

    /* the table: the application's, the common modules' (fw_modules.c), the port's */
    static const char *const order[] = {"help", "version", "iperf", "ping", "stream", "serial", "stats", "restart", "tick"};
    size_t n = 0;
    const struct fw_cmd *table = fw_console_commands(&n);
    CHECK(n == sizeof order / sizeof order[0]);
    for (size_t i = 0; i < n && i < sizeof order / sizeof order[0]; i++) {
        CHECK(strcmp(table[i].name, order[i]) == 0);
    }

    /* the port module's poll and deadline; nothing else is due while no test runs */
    CHECK(fw_app_poll_delay_us() == UINT64_MAX);
    due_us = test_now_us + 7000u;
    CHECK(fw_app_poll_delay_us() == 7000u);
    polls = 0;
    test_now_us += 10000u;
    fw_app_poll();
    CHECK(polls == FW_APP_MAX_PORT_POLLS && polled_at == test_now_us);
    CHECK(fw_app_poll_delay_us() == 0);
    due_us = UINT64_MAX;
    test_output_reset();
    feed("tick\r\n");
    CHECK(strstr(test_output, "RESULT tick polls=") != NULL);

    /* test slots: an iperf server and client together, a ping beside them, nothing else */
    test_output_reset();
    feed("iperf -s -t 2\r\n");
    CHECK(strstr(test_output, "iperf: TCP server listening on port 5001\r\n") != NULL);
    CHECK(fw_test_running());
    CHECK(fw_app_poll_delay_us() == 2000000u); /* the server's -t */
    test_output_reset();
    feed("iperf -s -u -p 5002\r\n");
    CHECK(strcmp(test_output, "ERR iperf busy: iperf-server running (abort it with iperf -a)\r\n") == 0);
    test_output_reset();
    feed("iperf -c 10.77.0.9 -u -t 1 -b 1M\r\n");
    CHECK(strstr(test_output, "iperf: UDP client sending to 10.77.0.9:5001\r\n") != NULL);
    CHECK(strstr(test_output, "[ ID] Interval        Transfer     Bandwidth\r\n") != NULL);
    test_output_reset();
    feed("ping 10.77.0.9 -c 50 -i 0.05\r\n"); /* the probe of latency under load */
    CHECK(strstr(test_output, "ERR ping") == NULL);
    CHECK(fw_test_claim(NULL, "ping", "ping") == false); /* one ping at a time */
    test_output_reset();
    feed("ping 10.77.0.9\r\n");
    CHECK(strstr(test_output, "ERR ping busy: ping running (abort it with ping -a)") != NULL);
    CHECK(fw_test_claim(NULL, "stream", "stream") == false); /* nothing else beside them */
    test_output_reset();
    feed("ping -a\r\n");
    CHECK(strstr(test_output, "RESULT ping status=aborted") != NULL);
    test_output_reset();
    feed("iperf -a\r\n");
    CHECK(strstr(test_output, "RESULT iperf role=server proto=tcp status=aborted peer=- bytes=0 duration_us=0 ") != NULL);
    CHECK(strstr(test_output, "RESULT iperf role=client proto=udp status=aborted peer=10.77.0.9:5001 ") != NULL);
    CHECK(strstr(test_output, " target_mbps=") != NULL && strstr(test_output, " server_report=0\r\n") != NULL);
    CHECK(strstr(test_output, "RESULT iperf action=abort stopped=2\r\n") != NULL);
    CHECK(!fw_test_running());

    /* a server's -t without a client: status=timeout, and the UDP server's loss fields */
    test_output_reset();
    feed("iperf -s -u -t 1\r\n");
    CHECK(strstr(test_output, "iperf: UDP server listening on port 5001\r\n") != NULL);
    test_now_us += 1000000u;
    fw_app_poll();
    CHECK(strstr(test_output, "RESULT iperf role=server proto=udp status=timeout peer=- bytes=0 duration_us=0 ") != NULL);
    CHECK(strstr(test_output, " datagrams=0 lost=0 loss_pct=") != NULL);
    CHECK(!fw_test_running());
    test_output_reset();
    feed("iperf -a\r\n");
    CHECK(strcmp(test_output, "RESULT iperf action=abort stopped=0\r\n") == 0);

    return check_summary("test_app_modules");
}
