#include "test_wifi_loop.h"

#include <stdio.h>
#include <string.h>

#include "core_lock.h"
#include "fw_app.h"
#include "test_platform.h"
#include "wifi_cmd.h"
#include "wifi_link.h"
#include "wifi_sim.h"

void wifi_loop_once(const char *input)
{
    host_core_lock();
    if (input != NULL) {
        fw_app_console_input(input, strlen(input));
    }
    fw_app_poll();
    host_core_unlock();
    wifi_sim_poll();
    wifi_link_poll();
    wifi_cmd_service();
}

void wifi_run_ms(unsigned ms)
{
    for (unsigned t = 0; t < ms; t += 10) {
        test_now_us += 10000u;
        wifi_loop_once(NULL);
    }
}

void wifi_command_line(const char *line)
{
    char buf[300];
    snprintf(buf, sizeof buf, "%s\r\n", line);
    wifi_loop_once(buf);
}

bool wifi_output_has(const char *text)
{
    return strstr(test_output, text) != NULL;
}
