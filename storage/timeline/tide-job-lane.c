/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The job lane's data: see tide-job-lane.h.  A process that has not started
 * yet, or has ended, adds nothing to a column: its last value is carried
 * only up to its own last sample, as its own lane draws it.
 *
 * Each band is a query, so the lane draws at most TIDE_JOB_LANE_MAX_BANDS
 * processes, the first to start: a job of more (or a damaged trace that
 * claims millions) still draws in bounded time.
 */
#include "config.h"

#include "tide-job-lane.h"

#include "tide-processes.h"
#include "tide-report.h"
#include "tide-saturate.h"
#include "tide-schema.h"

static void
band_free (TideJobBand *band)
{
  g_free (band->label);
  g_free (band->last);
  g_free (band);
}

void
tide_job_lane_free (TideJobLane *lane)
{
  if (lane == NULL)
    return;
  g_clear_pointer (&lane->bands, g_ptr_array_unref);
  g_clear_pointer (&lane->deaths, g_array_unref);
  g_free (lane);
}

/* A process's PSS where the job is told by PSS (tide_report_job_by_pss():
 * a process with no PSS reading then lived at no moment read, and has no
 * band), else its RSS (an older trace, a kernel without smaps_rollup). */
static TideJobBand *
band_new (TideTrace            *trace,
          TideTimelineCache    *cache,
          gint64                process_id,
          const char           *label,
          const TideTimeWindow *window,
          gboolean              by_pss,
          GError              **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(TideLaneData) lane = tide_timeline_data_query_lane (trace, cache, process_id,
                                                                by_pss ? TIDE_COUNTER_PSS
                                                                       : TIDE_COUNTER_RSS,
                                                                -1, window, &local_error);
  TideJobBand *band;

  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  band = g_new0 (TideJobBand, 1);
  band->process_id = process_id;
  band->label = g_strdup (label);
  band->last = g_new0 (gint64, window->n_columns);
  for (guint c = 0; lane != NULL && c < window->n_columns && c < lane->n_columns; c++)
    {
      gint64 value;

      /* Memory is never negative; a damaged trace's value must not make
       * the stack shrink below the bands under it. */
      if (tide_lane_data_value_at (lane, c, &value))
        band->last[c] = MAX (value, 0);
    }
  return band;
}

/* The trace's memory_limit, checked: the file is untrusted. */
static gint64
read_limit (TideTrace *trace)
{
  g_autofree char *text = tide_trace_dup_meta (trace, "memory_limit");
  gint64 limit;

  if (text == NULL || !g_ascii_string_to_signed (text, 10, 1, G_MAXINT64 / 4, &limit, NULL))
    return 0;
  return limit;
}

/**
 * tide_job_lane_query:
 * @cache: (nullable): LOD rows kept from earlier queries, as the view's
 *   (tide_timeline_data_query_cached())
 * @processes: (element-type TideProcess): the processes, bottom first, as
 *   tide_trace_list_processes() gives them; each band is called by its label
 *
 * Each process's PSS (or RSS) over @window, and the peak of their sum,
 * for at most TIDE_JOB_LANE_MAX_BANDS processes.
 */
TideJobLane *
tide_job_lane_query (TideTrace            *trace,
                     TideTimelineCache    *cache,
                     GPtrArray            *processes,
                     const TideTimeWindow *window,
                     GError              **error)
{
  g_autoptr(TideJobLane) lane = g_new0 (TideJobLane, 1);
  guint n_processes = MIN (processes->len, TIDE_JOB_LANE_MAX_BANDS);

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  g_return_val_if_fail (window != NULL && window->n_columns > 0, NULL);
  lane->window = *window;
  lane->bands = g_ptr_array_new_with_free_func ((GDestroyNotify) band_free);
  if (!tide_report_job_by_pss (trace, &lane->by_pss, error))
    return NULL;
  for (guint i = 0; i < n_processes; i++)
    {
      const TideProcess *p = g_ptr_array_index (processes, i);
      TideJobBand *band = band_new (trace, cache, p->id, p->label, window, lane->by_pss, error);
      if (band == NULL)
        return NULL;
      g_ptr_array_add (lane->bands, band);
    }
  for (guint c = 0; c < window->n_columns; c++)
    lane->peak = MAX (lane->peak, tide_job_lane_total_below (lane, lane->bands->len, c));
  lane->limit = read_limit (trace);
  lane->scale = lane->limit > 0 && lane->limit / 2 <= lane->peak ? MAX (lane->peak, lane->limit)
                                                                  : lane->peak;
  lane->deaths = g_array_new (FALSE, FALSE, sizeof (TideJobDeath));
  for (guint i = 0; i < n_processes; i++)
    {
      const TideProcess *p = g_ptr_array_index (processes, i);
      /* The lane's times count from the trace's start, as the columns do. */
      TideJobDeath death = { .ns = p->end_ns - tide_trace_get_start_ns (trace), .band = i,
                             .end = p->end };

      if (tide_process_end_is_death (&p->end) && death.ns >= window->begin_ns &&
          death.ns <= window->end_ns)
        g_array_append_val (lane->deaths, death);
    }
  return g_steal_pointer (&lane);
}

/**
 * tide_job_lane_query_job:
 *
 * tide_job_lane_query() for the processes of the trace in the order they
 * started, each labelled by its role, without a cache: for one drawing,
 * as export makes.
 */
TideJobLane *
tide_job_lane_query_job (TideTrace            *trace,
                         const TideTimeWindow *window,
                         GError              **error)
{
  g_autoptr(GPtrArray) processes = tide_trace_list_processes (trace, error);

  if (processes == NULL)
    return NULL;
  /* In the app's order (its session's tables), so that an export stacks
   * the job's processes as the window does. */
  tide_processes_sort_by_host (processes);
  return tide_job_lane_query (trace, NULL, processes, window, error);
}

/* The sum of the bands under @band at @column (saturating: the values
 * come from a file). */
gint64
tide_job_lane_total_below (const TideJobLane *lane,
                           guint              band,
                           guint              column)
{
  gint64 total = 0;

  g_return_val_if_fail (column < lane->window.n_columns, 0);
  for (guint i = 0; i < band && i < lane->bands->len; i++)
    {
      const TideJobBand *b = g_ptr_array_index (lane->bands, i);

      total = tide_sat_add (total, b->last[column]);
    }
  return total;
}

/* The process whose band holds @value at @column (what a click picks), or
 * 0 above the stack. */
gint64
tide_job_lane_process_at (const TideJobLane *lane,
                          guint              column,
                          gint64             value)
{
  if (column >= lane->window.n_columns || value < 0)
    return 0;
  for (guint i = 0; i < lane->bands->len; i++)
    if (value < tide_job_lane_total_below (lane, i + 1, column))
      return ((const TideJobBand *) g_ptr_array_index (lane->bands, i))->process_id;
  return 0;
}
