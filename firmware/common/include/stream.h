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

#include "fw_module.h"

/** The `stream` command with its poll and deadline (fw_modules.c). */
extern const struct fw_module stream_module;

#endif /* STREAM_H */
