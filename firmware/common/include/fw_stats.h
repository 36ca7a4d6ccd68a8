/* fw_stats.h - the `stats` command: lwIP counters, heap and pool usage with high-water marks. */
#ifndef FW_STATS_H
#define FW_STATS_H

/** Prints human-readable lines and one "RESULT stats key=value ..." line. */
void fw_stats_print(void);

/** Sets the heap's and the pools' high-water marks to their current usage (the counters go on):
 * the next `stats` shows the most used, so the least free, since this moment. */
void fw_stats_mark(void);

/** Zeroes the protocol counters and resets the high-water marks to the current usage. */
void fw_stats_reset(void);

#endif /* FW_STATS_H */
