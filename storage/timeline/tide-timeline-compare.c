/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The column edges of the shown window are mapped into the compared
 * trace, which is read once over the span they cover at OVERSAMPLE times
 * the columns; each shown column then gathers the compared columns
 * between its two mapped edges (min of mins, max of maxes, the last
 * value), so a compared step shorter or longer than the shown one is
 * squeezed or stretched onto it, and the cost stays O(columns).
 */
#include "config.h"

#include "tide-timeline-compare.h"

#define OVERSAMPLE  4
#define MAX_COLUMNS 65536

/* The compared column that time @t falls in, clamped to the query. */
static guint
source_column (const TideTimelineData *source,
               gint64                  t)
{
  double c = tide_time_window_column (&source->window, t);

  return (guint) CLAMP (c, 0.0, (double) source->window.n_columns - 1);
}

/* Column @c of @lane gathers the source columns @from to @to. */
static void
gather (TideLaneData       *lane,
        const TideLaneData *source,
        guint               c,
        guint               from,
        guint               to)
{
  for (guint s = from; s <= to; s++)
    {
      if (!source->has[s])
        continue;
      lane->min[c] = lane->has[c] ? MIN (lane->min[c], source->min[s]) : source->min[s];
      lane->max[c] = lane->has[c] ? MAX (lane->max[c], source->max[s]) : source->max[s];
      lane->last[c] = source->last[s];
      lane->has[c] = TRUE;
    }
}

static TideLaneData *
map_lane (const TideLaneData     *source,
          const TideTimelineData *query,
          const gint64           *edges,
          guint                   n_columns)
{
  TideLaneData *lane = tide_lane_data_new (source->counter, source->device, source->name,
                                           n_columns);

  for (guint c = 0; c < n_columns; c++)
    {
      gint64 a = MIN (edges[c], edges[c + 1]), b = MAX (edges[c], edges[c + 1]);
      guint from = source_column (query, a);
      guint to = b > a ? source_column (query, b - 1) : from;

      gather (lane, source, c, from, MAX (from, to));
    }
  tide_lane_data_set_peak (lane);
  return lane;
}

/**
 * tide_timeline_compare_query:
 * @compared: the trace drawn over the one shown
 * @cache: (nullable): the compared trace's own LOD cache
 * @process_id: the compared process
 * @pairs: (array length=n_pairs): tide_trace_diff_step_pairs()
 * @window: the shown window, in the shown trace's time
 *
 * Returns: (transfer full): the compared lanes in the columns of @window,
 *   or %NULL with @error set
 */
TideTimelineData *
tide_timeline_compare_query (TideTrace            *compared,
                             TideTimelineCache    *cache,
                             gint64                process_id,
                             const TideStepPair   *pairs,
                             guint                 n_pairs,
                             const TideTimeWindow *window,
                             GError              **error)
{
  g_autofree gint64 *edges = NULL;
  g_autoptr(TideTimelineData) query = NULL;
  TideTimelineData *data;
  TideTimeWindow read;
  guint n_columns;
  double span;
  gint64 lo = G_MAXINT64, hi = G_MININT64;

  g_return_val_if_fail (TIDE_IS_TRACE (compared), NULL);
  g_return_val_if_fail (tide_time_window_is_valid (window), NULL);

  n_columns = window->n_columns;
  span = (double) (window->end_ns - window->begin_ns);
  edges = g_new (gint64, n_columns + 1);
  for (guint c = 0; c <= n_columns; c++)
    {
      gint64 t = window->begin_ns + (gint64) (span * c / n_columns);

      edges[c] = tide_step_pairs_map (pairs, n_pairs, t);
      lo = MIN (lo, edges[c]);
      hi = MAX (hi, edges[c]);
    }
  /* At least one nanosecond, inside gint64 whatever a damaged trace says. */
  if (hi <= lo)
    {
      lo = MIN (lo, G_MAXINT64 - 1);
      hi = lo + 1;
    }
  /* The span the edges cover, in the compared trace's time. */
  read = (TideTimeWindow) { lo, hi, MIN (n_columns * OVERSAMPLE, MAX_COLUMNS) };
  query = tide_timeline_data_query_cached (compared, cache, process_id, &read, error);
  if (query == NULL)
    return NULL;
  data = g_new0 (TideTimelineData, 1);
  data->window = *window;
  data->level = query->level;
  data->bucket_ns = query->bucket_ns;
  data->lanes = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_lane_data_free);
  for (guint i = 0; i < query->lanes->len; i++)
    g_ptr_array_add (data->lanes, map_lane (g_ptr_array_index (query->lanes, i), query, edges,
                                            n_columns));
  return data;
}
