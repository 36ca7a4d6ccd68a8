/*
 * stream.h - bursty multi-stream UDP (the thesis's "Network Stream Service"): each stream is a
 * UDP flow of fixed-size packets sent in bursts every period, with a gap inside the burst.
 *   stream add tx ID IP PORT SIZE BURST PERIOD_MS GAP_US
 *   stream add rx ID PORT SIZE BURST PERIOD_MS THRESHOLD_MS
 *   stream start SECONDS        run every configured stream; ends with per-stream STREAM lines
 *   stream clear | stream -a
 * Receivers print "STREAMLOSS id= burst= lost=" for every burst that arrived incomplete.
 */
#ifndef STREAM_H
#define STREAM_H

#include <stdint.h>

void stream_command(int argc, char **argv);
void stream_poll(uint64_t now_us);
uint64_t stream_next_deadline_us(void);

#endif /* STREAM_H */
