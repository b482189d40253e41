/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The job lane: every process of the job on one axis, each process's
 * memory stacked on the ones below it, one band per process, so that the
 * process that grows is seen before any process is chosen.  A process's
 * memory is its PSS, so that pages that forked processes share are counted
 * once and the stack is the job's real footprint; a trace without PSS
 * samples falls back to RSS.  Each band costs one lane query
 * (tide_timeline_data_query_lane): it follows the pixels, not the samples.
 */
#pragma once

#include "tide-timeline-lanes.h"

G_BEGIN_DECLS

#define TIDE_JOB_LANE_MAX_BANDS 64

typedef struct
{
  gint64  process_id;
  char   *label;        /* "rank 1", "DataLoader worker 0", "pid 4242" */
  gint64 *last;         /* per column: its PSS (or RSS), carried forward; 0 before its first sample */
} TideJobBand;

typedef struct
{
  gint64     begin_ns;
  gint64     end_ns;
  guint      n_columns;
  GPtrArray *bands;     /* TideJobBand*, stacked from the bottom up */
  gint64     peak;      /* max over the columns of the stacked total */
  gboolean   by_pss;    /* every band is PSS; else RSS (an older trace) */
} TideJobLane;

void         tide_job_lane_free        (TideJobLane        *lane);
TideJobLane *tide_job_lane_query       (TideTrace          *trace,
                                        TideTimelineCache  *cache,
                                        GPtrArray          *processes,
                                        gint64              begin_ns,
                                        gint64              end_ns,
                                        guint               n_columns,
                                        GError            **error);
TideJobLane *tide_job_lane_query_job   (TideTrace          *trace,
                                        gint64              begin_ns,
                                        gint64              end_ns,
                                        guint               n_columns,
                                        GError            **error);
gint64       tide_job_lane_total_below (const TideJobLane  *lane,
                                        guint               band,
                                        guint               column);
gint64       tide_job_lane_process_at  (const TideJobLane  *lane,
                                        guint               column,
                                        gint64              value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideJobLane, tide_job_lane_free)

G_END_DECLS
