/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark merge A.tide B.tide ... -o job.tide`: the traces of a job's
 * nodes (or ranks) as one trace, which every report and the app read as
 * any other.  A merged trace has two tables more:
 *
 *   merge_sources    one row per input: its path, host, boot id, launcher
 *                    rank, real-time offset, the shift applied to its times
 *                    and the residual skew that its step ends show
 *   merge_processes  the source of each process (so its host)
 *
 * Times are those of the first input's CLOCK_MONOTONIC: each input's are
 * shifted by the difference of the real-time offsets its recorder measured
 * (none between traces of one boot, which share one clock).  The step ends
 * cross-check it: the median of (end of step n, shifted) less (end of step
 * n in the first input) over the steps both have is stored as skew_ns.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Called after each input with the bytes of input read so far. */
typedef void (*TideMergeProgress) (guint        index,
                                   guint        n_inputs,
                                   const char  *path,
                                   guint64      bytes_done,
                                   guint64      bytes_total,
                                   gpointer     user_data);

typedef struct
{
  gboolean           allow_incomplete;  /* merge traces whose recording did not finish */
  gboolean           force;             /* replace an existing output */
  TideMergeProgress  progress;          /* nullable */
  gpointer           progress_data;
} TideMergeOptions;

gboolean tide_trace_merge (const char * const      *inputs,
                           const char              *output,
                           const TideMergeOptions  *options,
                           GError                 **error);

G_END_DECLS
