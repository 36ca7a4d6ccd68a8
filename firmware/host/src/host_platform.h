/* host_platform.h - state of the Linux host port shared between its modules. */
#ifndef HOST_PLATFORM_H
#define HOST_PLATFORM_H

#include <stdbool.h>

/** Console file descriptors: reads come from in_fd, output goes to out_fd. */
struct host_console {
    int in_fd;
    int out_fd;
    int pty_slave_fd; /* held open so the master never sees a hang-up; -1 without a pty */
};

/** Sets up the console and the program's argv for fw_platform_restart(). */
void host_platform_init(const struct host_console *console, char **argv);

/** Closes every descriptor that must not survive a restart (the tap). */
void host_platform_set_tap_fd(int fd);

#endif /* HOST_PLATFORM_H */
