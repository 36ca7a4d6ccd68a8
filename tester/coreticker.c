/* coreticker - a finer scheduler tick on the DUT's core of the virtual bench.
 *
 * The DUT's program (the host firmware, QEMU's vCPU) spins on its core at nice -20. Another job's
 * busy loop at nice 0 still gets about 1 % of that core, but the scheduler hands it the core for
 * whole ticks: with the kernel's 250 Hz tick it held the DUT off for 4 ms about three times a
 * second, longer than the emulated LAN9118's receive FIFO lasts at 20 Mbit/s (seven 1400-byte
 * frames, 4.1 ms), and the board lost datagrams of the stress profile's bursts that no board of
 * its own CPU would lose. This program wakes on that core every PERIOD_US microseconds and sleeps
 * again at once; with a scheduling slice of SLICE_US (sched_setattr, SCHED_OTHER: Linux 6.12 and
 * later) each wake ends another job's turn there, so the DUT waits at most about one period. The
 * other job keeps its share; it gets it in shorter turns.
 *
 * Usage: coreticker CPU PERIOD_US SLICE_US. It prints "ready" once placed, then runs until it is
 * stopped or its parent ends (PR_SET_PDEATHSIG). Exit 2: bad arguments; 3: it could not be placed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NICE_BENCH (-20)
#define PERIOD_MIN_US 100L
#define PERIOD_MAX_US 100000L
#define SLICE_MIN_US 100L /* the kernel's own bounds for a custom slice: 0.1 to 100 ms */
#define SLICE_MAX_US 100000L

struct sched_attr_v1 { /* struct sched_attr as sched_setattr(2) documents it (size 56) */
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
    uint32_t sched_util_min;
    uint32_t sched_util_max;
};

static long number(const char *text, long lo, long hi, const char *what)
{
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < lo || value > hi) {
        fprintf(stderr, "coreticker: %s must be a whole number from %ld to %ld (got '%s')\n", what, lo, hi, text);
        exit(2);
    }
    return value;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: coreticker CPU PERIOD_US SLICE_US\n");
        return 2;
    }
    long cpu = number(argv[1], 0, CPU_SETSIZE - 1, "CPU");
    long period_us = number(argv[2], PERIOD_MIN_US, PERIOD_MAX_US, "PERIOD_US");
    long slice_us = number(argv[3], SLICE_MIN_US, SLICE_MAX_US, "SLICE_US");
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
        return 3; /* the parent is already gone */
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "coreticker: cannot run on CPU %ld: %s\n", cpu, strerror(errno));
        return 3;
    }
    if (setpriority(PRIO_PROCESS, 0, NICE_BENCH) != 0) {
        fprintf(stderr, "coreticker: cannot take nice %d: %s\n", NICE_BENCH, strerror(errno));
        return 3;
    }
    /* its session (started in one of its own) at the same priority: with autogroups the kernel
     * shares a CPU between sessions first (hil/plumbing/cpu_plan.py raise_session) */
    FILE *group = fopen("/proc/self/autogroup", "w");
    if (group != NULL) {
        int failed = fprintf(group, "%d\n", NICE_BENCH) < 0;
        failed |= fclose(group) != 0;
        if (failed) {
            fprintf(stderr, "coreticker: cannot set its session's priority: %s\n", strerror(errno));
            return 3;
        }
    }
    struct sched_attr_v1 attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.sched_policy = SCHED_OTHER;
    attr.sched_nice = NICE_BENCH;
    attr.sched_runtime = (uint64_t)slice_us * 1000u;
    const char *slice = "custom slice";
    if (syscall(SYS_sched_setattr, 0, &attr, 0u) != 0) {
        slice = "the kernel's slice (no custom slice before Linux 6.12)";
    }
    printf("ready: CPU %ld, every %ld us, %s\n", cpu, period_us, slice);
    fflush(stdout);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        next.tv_nsec += period_us * 1000L;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        if (rc != 0 && rc != EINTR) {
            fprintf(stderr, "coreticker: clock_nanosleep: %s\n", strerror(rc));
            return 3;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec + 1) { /* suspended or starved: no catch-up burst of wakes */
            next = now;
        }
    }
}
