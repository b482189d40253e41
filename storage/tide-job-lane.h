/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The job lane: every process of the job on one axis, each process's
 * resident memory stacked on the ones below it, one band per process, so
 * that the process that grows is seen before any process is chosen.  Each
 * process's column values come from its own RSS lane
 * (tide_timeline_data_query), so the cost is that of one timeline query
 * per process: it follows the pixels, not the samples.
 */
#pragma once

#include "tide-timeline-data.h"

G_BEGIN_DECLS

typedef struct
{
  gint64  process_id;
  char   *label;        /* "rank 1", "DataLoader worker 0", "pid 4242" */
  gint64 *last;         /* per column: its RSS, carried forward; 0 before its first sample */
} TideJobBand;

/* A process of the job, as the process picker lists it. */
typedef struct
{
  gint64  process_id;
  gint64  pid;
  char   *role;         /* "rank 1", else "pid 4242" */
  char   *label;        /* "rank 1 · python3 train.py" */
  guint   n_suspects;   /* leak suspects of this process */
} TideJobProcess;

typedef struct
{
  gint64     begin_ns;
  gint64     end_ns;
  guint      n_columns;
  GPtrArray *bands;     /* TideJobBand*, stacked from the bottom up */
  gint64     peak;      /* max over the columns of the stacked total */
} TideJobLane;

void         tide_job_process_free     (TideJobProcess     *process);
GPtrArray   *tide_job_processes        (TideTrace          *trace,
                                        GPtrArray          *suspects,
                                        GError            **error);
void         tide_job_lane_free        (TideJobLane        *lane);
TideJobLane *tide_job_lane_query       (TideTrace          *trace,
                                        const gint64       *process_ids,
                                        const char * const *labels,
                                        guint               n_processes,
                                        gint64              begin_ns,
                                        gint64              end_ns,
                                        guint               n_columns,
                                        GError            **error);
TideJobLane *tide_job_lane_query_job   (TideTrace          *trace,
                                        gint64              begin_ns,
                                        gint64              end_ns,
                                        guint               n_columns,
                                        GError            **error);
gint64       tide_job_default_process  (TideTrace          *trace,
                                        GError            **error);
gint64       tide_job_find_process     (TideTrace          *trace,
                                        const char         *spec,
                                        GError            **error);
gint64       tide_job_lane_total_below (const TideJobLane  *lane,
                                        guint               band,
                                        guint               column);
gint64       tide_job_lane_process_at  (const TideJobLane  *lane,
                                        guint               column,
                                        gint64              value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideJobLane, tide_job_lane_free)

G_END_DECLS
