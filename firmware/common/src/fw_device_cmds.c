#include "fw_device_cmds.h"

#include <string.h>

#include "fw_out.h"
#include "fw_platform.h"
#include "fw_stats.h"

static void cmd_stats(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "reset") == 0) {
        fw_stats_reset();
        fw_printf("RESULT stats action=reset\r\n");
        return;
    }
    if (argc == 2 && strcmp(argv[1], "mark") == 0) { /* the counters, then the marks restart from here */
        fw_stats_print();
        fw_stats_mark();
        return;
    }
    if (argc > 1) {
        fw_err("stats", "usage: stats [reset|mark]");
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

static const struct fw_cmd device_cmds[] = {
    {"stats", "[reset|mark]",
     "lwIP counters, TCP segments resent and out of sequence, CPU busy time, heap and pools with high-water "
     "marks (mark: print, then restart the marks)",
     cmd_stats},
    {"restart", "", "reboot the device", cmd_restart},
};

const struct fw_module fw_device_module = {device_cmds, sizeof device_cmds / sizeof device_cmds[0], NULL, NULL};
