/* fw_stats.h - the `stats` command: lwIP counters, heap and pool usage with high-water marks. */
#ifndef FW_STATS_H
#define FW_STATS_H

/** Prints human-readable lines and one "RESULT stats key=value ..." line. */
void fw_stats_print(void);

/** Zeroes the protocol counters and resets the high-water marks to the current usage. */
void fw_stats_reset(void);

#endif /* FW_STATS_H */
