/* rtt_stats.c - see rtt_stats.h. */
#include "rtt_stats.h"

void rtt_stats_reset(struct rtt_stats *s)
{
    *s = (struct rtt_stats){0};
}

void rtt_stats_add(struct rtt_stats *s, uint64_t rtt_us)
{
    s->count++;
    s->sum_us += rtt_us;
    uint64_t sq = rtt_us < UINT32_MAX ? rtt_us * rtt_us : UINT64_MAX;
    s->sum_sq_us2 = sq > UINT64_MAX - s->sum_sq_us2 ? UINT64_MAX : s->sum_sq_us2 + sq;
    if (s->count == 1 || rtt_us < s->min_us) {
        s->min_us = rtt_us;
    }
    if (rtt_us > s->max_us) {
        s->max_us = rtt_us;
    }
}

uint64_t rtt_stats_mean_us(const struct rtt_stats *s)
{
    return s->count ? s->sum_us / s->count : 0;
}

/* floor(sqrt(v)) */
static uint64_t isqrt64(uint64_t v)
{
    uint64_t r = 0;
    for (uint64_t bit = (uint64_t)1 << 62; bit != 0; bit >>= 2) {
        if (v >= r + bit) {
            v -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
    }
    return r;
}

uint64_t rtt_stats_mdev_us(const struct rtt_stats *s)
{
    if (s->count == 0 || s->sum_sq_us2 == UINT64_MAX) {
        return 0;
    }
    /* With n samples, sum S = n m + r (0 <= r < n) and sum of squares Q:
     * n * variance = Q - S^2 / n = Q - n m^2 - 2 m r - r^2 / n, where Q >= S^2 / n, so the first
     * three terms cannot underflow. Truncating the mean to m instead (mean of squares minus m^2)
     * overstates the variance by up to 2 m r / n: with a mean of about 80 us, a 17 us spread
     * read 20. */
    uint64_t n = s->count;
    uint64_t m = s->sum_us / n;
    uint64_t r = s->sum_us % n;
    uint64_t n_var = s->sum_sq_us2 - n * m * m - 2u * m * r;
    uint64_t r2_over_n = (r * r + n / 2u) / n;
    n_var = n_var > r2_over_n ? n_var - r2_over_n : 0;
    uint64_t var = (n_var + n / 2u) / n;
    uint64_t root = isqrt64(var);
    return var - root * root > root ? root + 1u : root; /* nearest: (root + 1/2)^2 = root^2 + root + 1/4 */
}
