/* host_platform.h - state of the Linux host port shared between its modules. */
#ifndef HOST_PLATFORM_H
#define HOST_PLATFORM_H

#include <stdbool.h>

#include "fw_config.h"

#define HOST_MAX_TAPS FW_BRIDGE_PORTS /* the bridge variant's ports; one tap otherwise */

/** Console file descriptors: reads come from in_fd, output goes to out_fd. */
struct host_console {
    int in_fd;
    int out_fd;
    int pty_slave_fd; /* held open so the master never sees a hang-up; -1 without a pty */
};

/** Sets up the console and the program's argv for fw_platform_restart(). */
void host_platform_init(const struct host_console *console, char **argv);

/** Registers a tap's descriptor: closed before a restart (at most HOST_MAX_TAPS). */
void host_platform_add_tap_fd(int fd);

#endif /* HOST_PLATFORM_H */
