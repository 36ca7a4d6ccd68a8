#include "esp_cmd.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "console_ping.h"
#include "esp32_config.h"
#include "esp_console.h"
#include "fw_out.h"
#include "hil_lock.h"
#include "iperf_cmd.h"

static char pending_line[HIL_ESP_CMDLINE_MAX];
static bool pending;

esp_err_t esp_cmd_init(void)
{
    esp_console_config_t cfg = ESP_CONSOLE_CONFIG_DEFAULT();
    cfg.max_cmdline_length = HIL_ESP_CMDLINE_MAX;
    cfg.max_cmdline_args = HIL_ESP_CMDLINE_ARGS;
    esp_err_t err = esp_console_init(&cfg);
    if (err == ESP_OK) {
        err = esp_console_register_help_command();
    }
    if (err == ESP_OK) {
        err = iperf_cmd_register_iperf();
    }
    if (err == ESP_OK) {
        err = console_cmd_ping_register();
    }
    return err;
}

void esp_command(int argc, char **argv)
{
    if (argc < 2) {
        fw_err("esp", "usage: esp %s", ESP_CMD_USAGE);
        return;
    }
    if (pending) {
        fw_err("esp", "busy: %s running", pending_line);
        return;
    }
    size_t len = 0;
    for (int i = 1; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (len + n + 2 > sizeof pending_line) {
            fw_err("esp", "line too long (max %u bytes)", (unsigned)sizeof pending_line - 1u);
            return;
        }
        if (i > 1) {
            pending_line[len++] = ' ';
        }
        memcpy(&pending_line[len], argv[i], n);
        len += n;
    }
    pending_line[len] = '\0';
    pending = true;
}

void esp_cmd_service(void)
{
    if (!pending) {
        return;
    }
    char name[32];
    size_t n = strcspn(pending_line, " ");
    if (n >= sizeof name) {
        n = sizeof name - 1;
    }
    memcpy(name, pending_line, n);
    name[n] = '\0';

    int ret = 0;
    esp_err_t err = esp_console_run(pending_line, &ret);
    fflush(stdout); /* the command's own output before the final line */
    pending = false;

    hil_lock();
    if (err == ESP_OK) {
        fw_printf("RESULT esp ret=%d\r\n", ret);
    } else if (err == ESP_ERR_NOT_FOUND) {
        fw_err("esp", "not found: %s (try esp help)", name);
    } else if (err == ESP_ERR_INVALID_ARG) {
        fw_err("esp", "invalid arguments");
    } else {
        fw_err("esp", "%s", esp_err_to_name(err));
    }
    hil_unlock();
}
