/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The lane query: what the timeline draws of each counter, one
 * min/max/last triple per pixel column, and which lanes a process has
 * (lane discovery).  The LOD rows come through tide-lod-cache.c, the step
 * bands and series through tide-timeline-series.c.
 *
 * A view of W columns over [begin, end) reads the
 * coarsest LOD level whose buckets are no wider than one column, so each
 * lane costs about W..4W primary-key rows whatever the trace size; the raw
 * counters table is never scanned.  Zoomed in past the finest level, one
 * bucket spans several columns and is repeated across them.
 *
 * Gaps between buckets are carried forward (a counter keeps its value until
 * the next sample), but never past the lane's last sample, so a trace still
 * being written does not draw into the future.  "All processes" sums the
 * carried values of every process column by column; min and max are then
 * the sums of the per-process extremes, an envelope rather than the exact
 * extremes of the sum.
 */
#include "config.h"

#include "tide-timeline-lanes.h"

#include <math.h>
#include <string.h>

#include "tide-analysis.h"
#include "tide-lod-cache-private.h"
#include "tide-saturate.h"
#include "tide-schema.h"
#include "tide-trace-private.h"

#define WHAT "cannot query the timeline"

static const struct
{
  gint        counter;
  const char *name;
} host_lanes[] = {
  { TIDE_COUNTER_RSS,       "Host RSS" },
  { TIDE_COUNTER_HEAP_LIVE, "Live heap" },
  { TIDE_COUNTER_MAPPED,    "Mapped" },
  { TIDE_COUNTER_PINNED,    "Pinned" },
  { TIDE_COUNTER_PY_ARENAS, "Python allocator's arenas" },
};

typedef struct
{
  sqlite3 *db;
  gint64   offset_ns;    /* LOD origin minus trace start */
  TideTimeWindow window;
  gint     level;
  gint64   bucket_ns;
  gint64   limit_ns;     /* the trace's end: values are carried up to it */
  TideTimelineCache *cache; /* nullable */
} Query;

typedef struct
{
  gint counter;
  gint device;
  char *name;
} LaneSpec;

gint
tide_timeline_data_pick_level (gint64 column_ns)
{
  gint level = 0;

  while (level + 1 < TIDE_LOD_LEVELS &&
         ((gint64) TIDE_LOD_BASE_NS << (2 * (level + 1))) <= column_ns)
    level++;
  return level;
}

void
tide_lane_data_free (TideLaneData *lane)
{
  if (lane == NULL)
    return;
  g_free (lane->name);
  g_free (lane->min);
  g_free (lane->max);
  g_free (lane->last);
  g_free (lane->has);
  g_free (lane);
}

void
tide_timeline_data_free (TideTimelineData *data)
{
  if (data == NULL)
    return;
  g_ptr_array_unref (data->lanes);
  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    tide_lane_data_free (data->rss_classes[i]);
  g_free (data);
}

/* An empty lane of @n columns: none has a value yet. */
TideLaneData *
tide_lane_data_new (gint        counter,
                    gint        device,
                    const char *name,
                    guint       n)
{
  TideLaneData *lane = g_new0 (TideLaneData, 1);

  lane->counter = counter;
  lane->device = device;
  lane->name = g_strdup (name);
  lane->n_columns = n;
  lane->min = g_new0 (gint64, n);
  lane->max = g_new0 (gint64, n);
  lane->last = g_new0 (gint64, n);
  lane->has = g_new0 (guint8, n);
  return lane;
}

/* Whether @window spans time and has a column: what every query asks. */
gboolean
tide_time_window_is_valid (const TideTimeWindow *window)
{
  return window != NULL && window->n_columns > 0 && window->end_ns > window->begin_ns;
}

/* The column that time @t falls in, as a fraction and not clamped: below 0
 * left of @window, n_columns or more right of it. */
double
tide_time_window_column (const TideTimeWindow *window,
                         gint64                t)
{
  gint64 span = MAX (window->end_ns - window->begin_ns, 1);

  return (double) (t - window->begin_ns) * window->n_columns / span;
}

/* Column of a time, clamped to the view. */
static gint64
column_of (const Query *q,
           gint64       t)
{
  double c = tide_time_window_column (&q->window, t);

  return (gint64) CLAMP (c, -1.0, (double) q->window.n_columns);
}

typedef struct
{
  const Query  *q;
  TideLaneData *lane;
} Merge;

/* Spreads one LOD row over the columns its bucket covers. */
static void
merge_bucket (gint64        bucket,
              const gint64  v[3],
              gpointer      user_data)
{
  const Merge *m = user_data;
  const Query *q = m->q;
  TideLaneData *lane = m->lane;
  gint64 t0 = bucket * q->bucket_ns + q->offset_ns;
  gint64 c0 = MAX (column_of (q, t0), 0);
  gint64 c1 = MIN (column_of (q, t0 + q->bucket_ns - 1), (gint64) q->window.n_columns - 1);

  for (gint64 c = c0; c <= c1; c++)
    {
      if (!lane->has[c])
        {
          lane->min[c] = v[0];
          lane->max[c] = v[1];
          lane->has[c] = 1;
        }
      lane->min[c] = MIN (lane->min[c], v[0]);
      lane->max[c] = MAX (lane->max[c], v[1]);
      lane->last[c] = v[2];
    }
}

/* Fills gaps with the value in force, up to the last sample or the end of
 * the trace, whichever is later. */
static void
lane_carry (const Query  *q,
            TideLaneData *lane,
            gboolean      after)
{
  gint64 end = lane->n_columns;
  gboolean known = lane->has_before;
  gint64 value = lane->before;

  if (!after)
    {
      while (end > 0 && !lane->has[end - 1])
        end--;
      end = MAX (end, MIN (column_of (q, q->limit_ns - 1) + 1, (gint64) lane->n_columns));
    }
  for (gint64 c = 0; c < end; c++)
    {
      if (lane->has[c])
        {
          known = TRUE;
          value = lane->last[c];
        }
      else if (known)
        {
          lane->min[c] = lane->max[c] = lane->last[c] = value;
          lane->has[c] = 1;
        }
    }
}

static void
lane_spec_clear (gpointer p)
{
  g_free (((LaneSpec *) p)->name);
}

static void
lane_specs_free (GArray *lanes)
{
  g_array_unref (lanes);
}

/* One process's lane, read from its LOD level and carried forward. */
static TideLaneData *
lane_read (const Query   *q,
           gint64         process_id,
           gint           counter,
           gint           device,
           GError       **error)
{
  g_autoptr(TideLaneData) lane = tide_lane_data_new (counter, device, NULL, q->window.n_columns);
  TideLodLane key = { process_id, counter, device, q->level };
  gint64 lo = (q->window.begin_ns - q->offset_ns) / q->bucket_ns;
  gint64 hi = (q->window.end_ns - q->offset_ns) / q->bucket_ns;
  Merge merge = { q, lane };
  TideLodEdges edges = { 0 };

  if (q->window.begin_ns - q->offset_ns < 0)
    lo = -1;
  if (!_tide_lod_read (q->cache, q->db, &key, lo, hi, merge_bucket, &merge, &edges, error))
    return NULL;
  lane->has_before = edges.has_before;
  lane->before = edges.before;
  lane_carry (q, lane, edges.has_after);
  return g_steal_pointer (&lane);
}

static void
lane_add (TideLaneData       *sum,
          const TideLaneData *part)
{
  if (part->has_before)
    sum->before = tide_sat_add (sum->before, part->before);
  sum->has_before |= part->has_before;
  for (guint c = 0; c < sum->n_columns; c++)
    if (part->has[c])
      {
        sum->min[c] = tide_sat_add (sum->min[c], part->min[c]);
        sum->max[c] = tide_sat_add (sum->max[c], part->max[c]);
        sum->last[c] = tide_sat_add (sum->last[c], part->last[c]);
        sum->has[c] = 1;
      }
}

/* The largest value the lane shows, or had just left of it. */
void
tide_lane_data_set_peak (TideLaneData *lane)
{
  lane->peak = lane->has_before ? lane->before : 0;
  for (guint c = 0; c < lane->n_columns; c++)
    if (lane->has[c])
      lane->peak = MAX (lane->peak, lane->max[c]);
}

static void
read_process_id (sqlite3_stmt *stmt,
                 gpointer      row,
                 gpointer      user_data)
{
  *(gint64 *) row = sqlite3_column_int64 (stmt, 0);
}

/* The processes whose counters the lanes of @process_id sum: that one,
 * or every process for 0. */
static GArray *
load_process_ids (sqlite3     *db,
                  gint64       process_id,
                  GError     **error)
{
  sqlite3_stmt *stmt;
  GArray *ids;

  if (process_id == 0)
    {
      stmt = tide_sqlite_prepare (db, "SELECT id FROM processes ORDER BY id", WHAT, error);
      return tide_sqlite_read_rows (db, stmt, sizeof (gint64), read_process_id, NULL, WHAT, error);
    }
  ids = g_array_sized_new (FALSE, FALSE, sizeof (gint64), 1);
  g_array_append_val (ids, process_id);
  return ids;
}

/* The (counter, device) pair after @pair, in two primary-key seeks: the
 * next device of this counter, else the first device of the next counter.
 * (A row-value comparison would seek on the counter only and then scan.) */
static int
next_pair (sqlite3_stmt *same_counter,
           sqlite3_stmt *next_counter,
           gint64        process_id,
           gint          pair[2])
{
  int rc;

  sqlite3_reset (same_counter);
  sqlite3_bind_int64 (same_counter, 1, process_id);
  sqlite3_bind_int (same_counter, 2, pair[0]);
  sqlite3_bind_int (same_counter, 3, pair[1]);
  if ((rc = sqlite3_step (same_counter)) == SQLITE_ROW)
    {
      pair[1] = sqlite3_column_int (same_counter, 0);
      return rc;
    }
  if (rc != SQLITE_DONE)
    return rc;
  sqlite3_reset (next_counter);
  sqlite3_bind_int64 (next_counter, 1, process_id);
  sqlite3_bind_int (next_counter, 2, pair[0]);
  if ((rc = sqlite3_step (next_counter)) == SQLITE_ROW)
    {
      pair[0] = sqlite3_column_int (next_counter, 0);
      pair[1] = sqlite3_column_int (next_counter, 1);
    }
  return rc;
}

static void
add_pair (GArray     *pairs,
          const gint  pair[2])
{
  for (guint j = 0; j < pairs->len; j++)
    if (memcmp (&g_array_index (pairs, gint, 2 * j), pair, 2 * sizeof (gint)) == 0)
      return;
  g_array_append_vals (pairs, pair, 1);
}

/* Appends the device (counter, device) pairs to @pairs without scanning. */
static gboolean
probe_device_pairs (const Query  *q,
                    GArray       *process_ids,
                    GArray       *pairs,
                    GError      **error)
{
  sqlite3_stmt *same = NULL, *next = NULL;
  int rc = SQLITE_DONE;

  same = tide_sqlite_prepare (q->db, "SELECT device FROM counter_lod WHERE process_id = ?1"
                                     " AND counter = ?2 AND device > ?3 ORDER BY device LIMIT 1",
                              WHAT, error);
  if (same != NULL)
    next = tide_sqlite_prepare (q->db, "SELECT counter, device FROM counter_lod WHERE process_id = ?1"
                                       " AND counter > ?2 ORDER BY counter, device LIMIT 1",
                                WHAT, error);
  if (next == NULL)
    {
      sqlite3_finalize (same);
      return FALSE;
    }
  for (guint i = 0; i < process_ids->len && rc == SQLITE_DONE; i++)
    {
      gint pair[2] = { G_MININT, G_MININT };
      gint before[2];

      /* Each seek must move forward: in a damaged file (rows out of key
       * order, a counter that is text) it may not, and would never end. */
      while (memcpy (before, pair, sizeof pair),
             (rc = next_pair (same, next, g_array_index (process_ids, gint64, i), pair)) ==
             SQLITE_ROW)
        {
          if (pair[0] < before[0] || (pair[0] == before[0] && pair[1] <= before[1]))
            {
              sqlite3_finalize (same);
              sqlite3_finalize (next);
              g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_DAMAGED,
                           "the trace is damaged: its timeline summary (counter_lod) is out "
                           "of order");
              return FALSE;
            }
          if (pair[1] >= 0)
            add_pair (pairs, pair);
        }
    }
  sqlite3_finalize (same);
  return tide_sqlite_finish (q->db, next, rc, WHAT, error);
}

static char *
counter_kind_name (sqlite3 *db,
                   gint     counter)
{
  sqlite3_stmt *stmt = NULL;
  char *kind = NULL;

  /* No name is no error: the lane is named by its id. */
  if ((stmt = tide_sqlite_prepare (db, "SELECT name FROM counter_kinds WHERE id = ?1", WHAT,
                                   NULL)) != NULL)
    {
      sqlite3_bind_int (stmt, 1, counter);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        kind = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
    }
  sqlite3_finalize (stmt);
  return kind;
}

/* "cuda:0 used", "cuda:0 torch reserved": the counter's name without its
 * "device_" prefix.  NULL for counters that are not a lane: the device's
 * size is a constant, not memory in use. */
static char *
device_lane_name (sqlite3 *db,
                  gint     counter,
                  gint     device)
{
  g_autofree char *kind = counter_kind_name (db, counter);
  const char *label;

  if (kind == NULL)
    return g_strdup_printf ("cuda:%d counter %d", device, counter);
  if (g_str_equal (kind, "device_total"))
    return NULL;
  label = g_str_has_prefix (kind, "device_") ? kind + strlen ("device_") : kind;
  return g_strdelimit (g_strdup_printf ("cuda:%d %s", device, label), "_", ' ');
}

/* Reads one lane over all the processes; NULL with no error: no data. */
static TideLaneData *
lane_query (const Query   *q,
            GArray        *process_ids,
            gint           counter,
            gint           device,
            const char    *name,
            GError       **error)
{
  TideLaneData *sum = tide_lane_data_new (counter, device, name, q->window.n_columns);
  gboolean any = FALSE;

  for (guint i = 0; i < process_ids->len; i++)
    {
      TideLaneData *part = lane_read (q, g_array_index (process_ids, gint64, i), counter,
                                      device, error);
      if (part == NULL)
        {
          tide_lane_data_free (sum);
          return NULL;
        }
      for (guint c = 0; c < q->window.n_columns && !any; c++)
        any = part->has[c];
      any |= part->has_before;
      lane_add (sum, part);
      tide_lane_data_free (part);
    }
  if (!any)
    {
      tide_lane_data_free (sum);
      return NULL;
    }
  tide_lane_data_set_peak (sum);
  return sum;
}

static gint64
lod_origin (sqlite3 *db)
{
  /* The origin tide-analysis.c used for the buckets. */
  return tide_sqlite_meta_int (db, "start_ns");
}

/* The lanes a view may have: the host lanes, then each device counter
 * that is memory in use, named. */
static GArray *
lane_specs_load (const Query  *q,
                 GArray       *process_ids,
                 GError      **error)
{
  g_autoptr(GArray) pairs = g_array_new (FALSE, FALSE, 2 * sizeof (gint));
  GArray *specs = g_array_new (FALSE, FALSE, sizeof (LaneSpec));

  g_array_set_clear_func (specs, lane_spec_clear);
  for (guint i = 0; i < G_N_ELEMENTS (host_lanes); i++)
    {
      LaneSpec spec = { host_lanes[i].counter, -1, g_strdup (host_lanes[i].name) };
      g_array_append_val (specs, spec);
    }
  if (!probe_device_pairs (q, process_ids, pairs, error))
    {
      lane_specs_free (specs);
      return NULL;
    }
  for (guint i = 0; i < pairs->len; i++)
    {
      const gint *pair = &g_array_index (pairs, gint, 2 * i);
      LaneSpec spec = { pair[0], pair[1], device_lane_name (q->db, pair[0], pair[1]) };

      if (spec.name != NULL)
        g_array_append_val (specs, spec);
    }
  return specs;
}

static gboolean
add_lanes (const Query       *q,
           GArray            *process_ids,
           GArray            *specs,
           TideTimelineData  *data,
           GError           **error)
{
  for (guint i = 0; i < specs->len; i++)
    {
      g_autoptr(GError) local_error = NULL;
      const LaneSpec *spec = &g_array_index (specs, LaneSpec, i);
      TideLaneData *lane = lane_query (q, process_ids, spec->counter, spec->device, spec->name,
                                       &local_error);

      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (lane != NULL)
        g_ptr_array_add (data->lanes, lane);
    }
  return TRUE;
}

/* The class counters that split the RSS lane, when the trace has them. */
static gboolean
add_rss_classes (const Query       *q,
                 GArray            *process_ids,
                 TideTimelineData  *data,
                 GError           **error)
{
  static const gint counters[TIDE_RSS_N_CLASSES] = {
    [TIDE_RSS_CLASS_FILE] = TIDE_COUNTER_RSS_FILE,
    [TIDE_RSS_CLASS_SHMEM] = TIDE_COUNTER_RSS_SHMEM,
    [TIDE_RSS_CLASS_ANON] = TIDE_COUNTER_RSS_ANON,
    [TIDE_RSS_CLASS_ALLOC_FREE] = TIDE_COUNTER_ALLOC_FREE,
  };

  if (tide_timeline_data_find_lane (data, TIDE_COUNTER_RSS, -1) == NULL)
    return TRUE;
  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    {
      g_autoptr(GError) local_error = NULL;

      data->rss_classes[i] = lane_query (q, process_ids, counters[i], -1, NULL, &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }
  return TRUE;
}

static GArray *
query_lanes (Query       *q,
             TideTrace   *trace,
             gint64       process_id,
             GArray     **process_ids,
             GError     **error)
{
  GArray *specs;

  if (q->cache != NULL &&
      _tide_lod_cache_get_lanes (q->cache, trace, process_id, &specs, process_ids, &q->offset_ns))
    return specs;
  q->offset_ns = lod_origin (q->db) - tide_trace_get_start_ns (trace);
  if ((*process_ids = load_process_ids (q->db, process_id, error)) == NULL ||
      (specs = lane_specs_load (q, *process_ids, error)) == NULL)
    return NULL;
  if (q->cache != NULL)
    _tide_lod_cache_set_lanes (q->cache, trace, process_id, specs, *process_ids, q->offset_ns);
  return specs;
}

static void
query_init (Query                *q,
            TideTrace            *trace,
            TideTimelineCache    *cache,
            const TideTimeWindow *window)
{
  q->db = _tide_trace_get_db (trace);
  q->cache = cache != NULL && tide_trace_is_complete (trace) ? cache : NULL;
  q->window = *window;
  q->level = tide_timeline_data_pick_level ((window->end_ns - window->begin_ns) /
                                            window->n_columns);
  q->bucket_ns = (gint64) TIDE_LOD_BASE_NS << (2 * q->level);
  q->limit_ns = tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace);
}

/**
 * tide_timeline_data_query_lane:
 * @cache: (nullable): rows kept from earlier queries, as for
 *   tide_timeline_data_query_cached()
 * @process_id: a processes.id
 * @counter: any TideCounter, a host lane's or not
 *
 * One counter of one process over @window, as tide_timeline_data_query()
 * reads a lane.
 *
 * Returns: (transfer full) (nullable): the lane, or %NULL when the process
 *   has no such counter (with @error unset) or on error
 */
TideLaneData *
tide_timeline_data_query_lane (TideTrace            *trace,
                               TideTimelineCache    *cache,
                               gint64                process_id,
                               gint                  counter,
                               gint                  device,
                               const TideTimeWindow *window,
                               GError              **error)
{
  g_autoptr(GArray) process_ids = NULL;
  Query q;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  g_return_val_if_fail (tide_time_window_is_valid (window) && process_id > 0, NULL);

  query_init (&q, trace, cache, window);
  if (q.cache != NULL)
    _tide_lod_cache_bind (q.cache, trace);
  q.offset_ns = lod_origin (q.db) - tide_trace_get_start_ns (trace);
  if ((process_ids = load_process_ids (q.db, process_id, error)) == NULL)
    return NULL;
  return lane_query (&q, process_ids, counter, device, NULL, error);
}

/**
 * tide_timeline_data_query:
 * @process_id: a processes.id, or 0 for all processes summed
 * @window: the times and columns to read
 *
 * Returns: (transfer full) (nullable): the lanes that have data
 */
TideTimelineData *
tide_timeline_data_query (TideTrace            *trace,
                          gint64                process_id,
                          const TideTimeWindow *window,
                          GError              **error)
{
  return tide_timeline_data_query_cached (trace, NULL, process_id, window, error);
}

/**
 * tide_timeline_data_query_cached:
 * @cache: (nullable): rows kept from earlier queries; used only for a
 *   complete trace, whose summaries no longer change
 *
 * tide_timeline_data_query() that reads the LOD rows through @cache: the
 * same result, with no query for the rows already read.
 */
TideTimelineData *
tide_timeline_data_query_cached (TideTrace            *trace,
                                 TideTimelineCache    *cache,
                                 gint64                process_id,
                                 const TideTimeWindow *window,
                                 GError              **error)
{
  g_autoptr(TideTimelineData) data = NULL;
  g_autoptr(GArray) process_ids = NULL;
  g_autoptr(GArray) specs = NULL;
  Query q;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  g_return_val_if_fail (tide_time_window_is_valid (window), NULL);

  query_init (&q, trace, cache, window);
  data = g_new0 (TideTimelineData, 1);
  data->window = *window;
  data->level = q.level;
  data->bucket_ns = q.bucket_ns;
  data->lanes = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_lane_data_free);

  if ((specs = query_lanes (&q, trace, process_id, &process_ids, error)) == NULL ||
      !add_lanes (&q, process_ids, specs, data, error) ||
      !add_rss_classes (&q, process_ids, data, error))
    return NULL;
  return g_steal_pointer (&data);
}

const TideLaneData *
tide_timeline_data_find_lane (const TideTimelineData *data,
                              gint                    counter,
                              gint                    device)
{
  for (guint i = 0; data != NULL && i < data->lanes->len; i++)
    {
      const TideLaneData *lane = g_ptr_array_index (data->lanes, i);
      if (lane->counter == counter && lane->device == device)
        return lane;
    }
  return NULL;
}

gboolean
tide_lane_data_value_at (const TideLaneData *lane,
                         guint               column,
                         gint64             *value)
{
  if (lane == NULL || column >= lane->n_columns || !lane->has[column])
    return FALSE;
  *value = lane->last[column];
  return TRUE;
}

/**
 * tide_timeline_data_rss_split:
 * @rss: the RSS lane's value at @column
 * @split: (out): the part of @rss in each class, adding up to @rss
 *
 * Splits the RSS at @column in the proportions of its classes there.  The
 * classes are read less often than the RSS, and from another file, so they
 * are scaled to the RSS that the lane draws: the stack fills the curve
 * exactly.  The allocator's free bytes are taken out of anon, never more
 * than it holds.
 *
 * Returns: whether the classes are known at @column
 */
gboolean
tide_timeline_data_rss_split (const TideTimelineData *data,
                              guint                   column,
                              gint64                  rss,
                              gint64                  split[TIDE_RSS_N_CLASSES])
{
  gint64 raw[TIDE_RSS_N_CLASSES] = { 0 };
  double total = 0, done = 0;
  gint64 given = 0;

  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    if (tide_lane_data_value_at (data->rss_classes[i], column, &raw[i]))
      raw[i] = MAX (raw[i], 0);
    else if (i != TIDE_RSS_CLASS_ALLOC_FREE)
      return FALSE;
  raw[TIDE_RSS_CLASS_ALLOC_FREE] = MIN (raw[TIDE_RSS_CLASS_ALLOC_FREE], raw[TIDE_RSS_CLASS_ANON]);
  raw[TIDE_RSS_CLASS_ANON] -= raw[TIDE_RSS_CLASS_ALLOC_FREE];
  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    total += (double) raw[i];
  if (total <= 0 || rss <= 0)
    return FALSE;
  /* Cumulative rounding, so that the parts add up to @rss exactly. */
  for (guint i = 0; i < TIDE_RSS_N_CLASSES; i++)
    {
      gint64 upto;

      done += (double) raw[i];
      upto = (gint64) llround ((double) rss * (done / total));
      split[i] = upto - given;
      given = upto;
    }
  return TRUE;
}
