/* host_platform.c - fw_platform.h for Linux: clock, console writes, restart by re-exec. */
#define _GNU_SOURCE
#include "host_platform.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fw_platform.h"

#define CONSOLE_WRITE_WAIT_MS 20 /* a console nobody reads loses output instead of stalling the stack */

static struct host_console console = {0, 1, -1};
static char **saved_argv;
static int tap_fds[HOST_MAX_TAPS];
static int tap_fd_count;

void host_platform_init(const struct host_console *c, char **argv)
{
    console = *c;
    saved_argv = argv;
}

void host_platform_add_tap_fd(int fd)
{
    if (tap_fd_count < HOST_MAX_TAPS) {
        tap_fds[tap_fd_count++] = fd;
    }
}

uint64_t fw_platform_time_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void fw_platform_console_write(const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(console.out_fd, data, len);
        if (n > 0) {
            data += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {console.out_fd, POLLOUT, 0};
            if (poll(&p, 1, CONSOLE_WRITE_WAIT_MS) > 0) {
                continue;
            }
        }
        return; /* console gone or full: drop, like a UART nobody listens to */
    }
}

void fw_platform_restart(void)
{
    char fds[64];
    fflush(NULL);
    for (int i = 0; i < tap_fd_count; i++) {
        close(tap_fds[i]);
    }
    /* keep the console open across the re-exec, as a board's USB serial port stays */
    snprintf(fds, sizeof fds, "%d,%d,%d", console.in_fd, console.out_fd, console.pty_slave_fd);
    setenv("HILFW_CONSOLE_FDS", fds, 1);
    execv("/proc/self/exe", saved_argv);
    fprintf(stderr, "restart: execv failed: %s\n", strerror(errno));
    _exit(70);
}

unsigned int fw_platform_random(void)
{
    unsigned int r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        r = (unsigned int)fw_platform_time_us() * 2654435761u;
    }
    return r;
}

uint64_t fw_platform_busy_us(void)
{
    /* the process's CPU time: every thread of the DUT's program, user and kernel (its tap reads and
     * writes included), against the monotonic clock of fw_platform_time_us */
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) {
        return FW_PLATFORM_BUSY_UNKNOWN;
    }
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

const char *fw_platform_target(void)
{
    return "host";
}
