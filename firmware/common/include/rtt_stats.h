/*
 * rtt_stats.h - round-trip time summary of a ping run in integer microseconds: count, min, max,
 * mean and ping(8)'s mdev (the population standard deviation), without floating point.
 */
#ifndef RTT_STATS_H
#define RTT_STATS_H

#include <stdint.h>

struct rtt_stats {
    uint32_t count;
    uint64_t min_us;
    uint64_t max_us;
    uint64_t sum_us;
    uint64_t sum_sq_us2; /* saturates at UINT64_MAX: then mdev is unknown (reported as 0) */
};

void rtt_stats_reset(struct rtt_stats *s);
void rtt_stats_add(struct rtt_stats *s, uint64_t rtt_us);

/** Mean in µs, rounded down (0 with no sample). */
uint64_t rtt_stats_mean_us(const struct rtt_stats *s);

/** Population standard deviation in µs, rounded to the nearest µs (0 with no sample or after
 *  sum_sq saturated). Exact to the rounding: the mean's fraction is kept, not truncated. */
uint64_t rtt_stats_mdev_us(const struct rtt_stats *s);

#endif /* RTT_STATS_H */
