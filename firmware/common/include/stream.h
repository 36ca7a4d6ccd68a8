/*
 * stream.h - bursty multi-stream UDP (the thesis's "Network Stream Service"): each stream is a
 * UDP flow of fixed-size packets sent in bursts every period, with a gap inside the burst.
 *   stream add tx ID IP PORT SIZE BURST PERIOD_MS GAP_US
 *   stream add rx ID PORT SIZE BURST PERIOD_MS THRESHOLD_MS
 *   stream start SECONDS        run every configured stream; ends with per-stream STREAM lines
 *   stream clear | stream -a
 * Receivers print "STREAMLOSS id= burst= lost=" for every burst that closed incomplete (a burst
 * closes once a packet FW_STREAM_RX_WINDOW bursts later arrives, or at the end; at most
 * FW_STREAM_LOSS_LINES lines at a time), and end with
 *   STREAM id= dir=rx received= outoforder= late= last_burst= lost= lossy_bursts= losses_capped=
 *          duplicates= stale= invalid=
 * received: distinct packets (a duplicate never counts); lost: packets missing from bursts
 * 0..last_burst, lossy_bursts: those bursts with loss, losses_capped: how many of them got no
 * STREAMLOSS line; stale: packets of a burst already closed (counted lost); see stream_wire.h.
 */
#ifndef STREAM_H
#define STREAM_H

#include "fw_module.h"

/** The `stream` command with its poll and deadline (fw_modules.c). */
extern const struct fw_module stream_module;

#endif /* STREAM_H */
