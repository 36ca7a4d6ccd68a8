/*
 * fw_module.h - what a module of the application brings: its console commands and, optionally,
 * periodic work with a deadline. The application (fw_app.c) runs every registered module the
 * same way: commands join the console table, polls run from fw_app_poll, deadlines join
 * fw_app_poll_delay_us. The common modules are listed in fw_modules.c; a port adds its own with
 * fw_app_add_module.
 */
#ifndef FW_MODULE_H
#define FW_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "fw_console.h"

struct fw_module {
    const struct fw_cmd *cmds; /* the module's console commands, in help order */
    size_t cmd_count;
    void (*poll)(uint64_t now_us);       /* NULL: nothing periodic */
    uint64_t (*next_deadline_us)(void);  /* absolute; UINT64_MAX: nothing due; NULL with poll NULL */
};

/** The common application's modules, in console (help) order; fw_app.c adds its own around them. */
extern const struct fw_module *const fw_common_modules[];
extern const size_t fw_common_module_count;

#endif /* FW_MODULE_H */
