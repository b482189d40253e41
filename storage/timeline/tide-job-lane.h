/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The job lane: every process of the job on one axis, each process's
 * memory stacked on the ones below it, one band per process, so that the
 * process that grows is seen before any process is chosen.  A process's
 * memory is its PSS, so that pages that forked processes share are counted
 * once and the stack is the job's real footprint; a trace without PSS
 * samples falls back to RSS.  The lane also holds the memory limit the
 * job ran under, and where processes of the job died.  Each band costs one lane query
 * (tide_timeline_data_query_lane): it follows the pixels, not the samples.
 */
#pragma once

#include "tide-process-end.h"
#include "tide-timeline-lanes.h"

G_BEGIN_DECLS

#define TIDE_JOB_LANE_MAX_BANDS 64

typedef struct
{
  gint64  process_id;
  char   *label;        /* "rank 1", "DataLoader worker 0", "pid 4242" */
  gint64 *last;         /* per column: its PSS (or RSS), carried forward; 0 before its first sample */
} TideJobBand;

/* A process of the job that a signal killed, or that exited with an
 * error: where the lane marks its end. */
typedef struct
{
  gint64          ns;    /* from the trace's start, as the lane's range */
  guint           band;  /* its band's index */
  TideProcessEnd  end;
} TideJobDeath;

typedef struct
{
  TideTimeWindow window; /* the window it was read for */
  GPtrArray *bands;     /* TideJobBand*, stacked from the bottom up */
  gint64     peak;      /* max over the columns of the stacked total */
  gboolean   by_pss;    /* every band is PSS; else RSS (an older trace) */
  gint64     limit;     /* the memory limit the job ran under (meta memory_limit), 0: unknown */
  gint64     scale;     /* the lane's top: the peak, or the limit where it is
                         * near enough (at most twice the peak) to draw */
  GArray    *deaths;    /* TideJobDeath, in the visible range, by band */
} TideJobLane;

void         tide_job_lane_free        (TideJobLane        *lane);
TideJobLane *tide_job_lane_query       (TideTrace            *trace,
                                        TideTimelineCache    *cache,
                                        GPtrArray            *processes,
                                        const TideTimeWindow *window,
                                        GError              **error);
TideJobLane *tide_job_lane_query_job   (TideTrace            *trace,
                                        const TideTimeWindow *window,
                                        GError              **error);
gint64       tide_job_lane_total_below (const TideJobLane  *lane,
                                        guint               band,
                                        guint               column);
gint64       tide_job_lane_process_at  (const TideJobLane  *lane,
                                        guint               column,
                                        gint64              value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideJobLane, tide_job_lane_free)

G_END_DECLS
