/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Summaries built once when a capture ends, so that reports and the timeline
 * never scan the allocations table again:
 *
 *  - step_series and step_stats (TideStepAccumulator): the recorder writes
 *    them at every step as it goes.  For a process without them (a trace
 *    written by other means) they come from one sweep over two ordered
 *    streams, the allocation times and the free times, merged with the step
 *    ends: O(n log n) for n allocations instead of O(n * steps).
 *  - step_stats also gets RSS at each step end, and how much of it recorded
 *    allocations explain (from step_residency).
 *  - counter_lod: min/max/last per time bucket at TIDE_LOD_LEVELS zoom levels.
 *  - live_at_end: bytes and blocks still live when the trace ends, per
 *    (process, stack, scope, device), for the retained report without a
 *    step, which otherwise reads every allocation of a process.
 *  - indexes whose absence made a query read a whole table for each step
 *    or window (counters and transfers by time, the block ranges by
 *    max_alloc_ns, tide-alloc-ranges.h).  They are made here, once, and
 *    not as rows arrive: each would cost the writer a B-tree insert per
 *    row, and the first two already exist in traces from the recorder.
 */
#include "config.h"

#include <string.h>

#include "tide-analysis.h"
#include "tide-processes.h"
#include "tide-schema.h"
#include "tide-step-accumulator.h"
#include "tide-storage-error.h"


typedef struct
{
  gint64 id;
  gint64 start_ns;
  gint64 end_ns;
} Step;

typedef struct
{
  gint64 ts;
  gint64 alloc_ns;
  TideSeriesKey key;
  gint   kind;
  double bytes;     /* size * weight, negative for a free */
  double count;     /* weight, negative for a free */
} Event;

typedef struct
{
  sqlite3      *db;
  sqlite3_stmt *insert_series;
  sqlite3_stmt *insert_stats;
  gboolean      failed;
} Sweep;

#define WHAT "cannot summarize the trace"

static gboolean
read_event (sqlite3_stmt *stmt,
            gboolean      is_free,
            Event        *ev)
{
  if (sqlite3_step (stmt) != SQLITE_ROW)
    return FALSE;
  ev->ts = sqlite3_column_int64 (stmt, is_free ? 1 : 0);
  ev->alloc_ns = sqlite3_column_int64 (stmt, 0);
  ev->key.stack_id = sqlite3_column_int64 (stmt, 2);
  ev->key.scope_id = sqlite3_column_int64 (stmt, 3);
  ev->key.device = sqlite3_column_int (stmt, 4);
  ev->kind = sqlite3_column_int (stmt, 5);
  ev->bytes = sqlite3_column_double (stmt, 6);
  ev->count = sqlite3_column_double (stmt, 7);
  if (is_free)
    {
      ev->bytes = -ev->bytes;
      ev->count = -ev->count;
    }
  return TRUE;
}

static void
write_series (const TideSeriesRow *row,
              gpointer             user_data)
{
  Sweep *sweep = user_data;
  sqlite3_stmt *ins = sweep->insert_series;

  sqlite3_bind_int64 (ins, 1, row->step_id);
  if (row->stack_id) sqlite3_bind_int64 (ins, 2, row->stack_id); else sqlite3_bind_null (ins, 2);
  if (row->scope_id) sqlite3_bind_int64 (ins, 3, row->scope_id); else sqlite3_bind_null (ins, 3);
  sqlite3_bind_int (ins, 4, row->device);
  sqlite3_bind_int64 (ins, 5, row->live_bytes);
  sqlite3_bind_int64 (ins, 6, row->live_count);
  if (!sweep->failed && !tide_sqlite_step_done (sweep->db, ins, WHAT, NULL))
    sweep->failed = TRUE;
}

static gboolean
sweep_close_step (Sweep               *sweep,
                  TideStepAccumulator *acc,
                  const Step          *step,
                  GError             **error)
{
  sqlite3_stmt *ins = sweep->insert_stats;
  TideStepTotals totals;

  tide_step_accumulator_close_step (acc, step->id, write_series, sweep, &totals);
  if (sweep->failed)
    {
      tide_sqlite_set_error (error, sweep->db, WHAT);
      return FALSE;
    }
  sqlite3_bind_int64 (ins, 1, totals.step_id);
  sqlite3_bind_int64 (ins, 2, totals.heap_live);
  sqlite3_bind_int64 (ins, 3, totals.mapped_live);
  sqlite3_bind_int64 (ins, 4, totals.device_live);
  sqlite3_bind_int64 (ins, 5, totals.retained_bytes);
  sqlite3_bind_int64 (ins, 6, totals.retained_count);
  return tide_sqlite_step_done (sweep->db, ins, WHAT, error);
}

static void
sweep_apply (TideStepAccumulator *acc,
             const Event         *ev,
             gint64               step_start_ns)
{
  /* Only what was born in this step counts as retained by it. */
  tide_step_accumulator_apply (acc, &ev->key, ev->kind, ev->bytes, ev->count,
                               ev->alloc_ns > step_start_ns);
}

static void
read_step (sqlite3_stmt *stmt,
           gpointer      row,
           gpointer      user_data)
{
  *(Step *) row = (Step) { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                           sqlite3_column_int64 (stmt, 2) };
}

static GArray *
load_steps (sqlite3  *db,
            gint64    process_id,
            GError  **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, "SELECT id, start_ns, end_ns FROM steps"
                                                " WHERE process_id = ?1 ORDER BY number",
                                            WHAT, error);

  if (stmt != NULL)
    sqlite3_bind_int64 (stmt, 1, process_id);
  return tide_sqlite_read_rows (db, stmt, sizeof (Step), read_step, NULL, "cannot read steps",
                                error);
}

#define EVENT_COLUMNS "alloc_ns, free_ns, stack_id, scope_id, device, kind, size * weight, weight"

static gboolean
sweep_process (Sweep   *sweep,
               gint64   process_id,
               GError **error)
{
  g_autoptr(GArray) steps = load_steps (sweep->db, process_id, error);
  g_autoptr(TideStepAccumulator) acc = tide_step_accumulator_new ();
  sqlite3_stmt *allocs = NULL, *frees = NULL;
  Event a, f;
  gboolean have_a, have_f, ok = TRUE;

  if (steps == NULL)
    return FALSE;
  if (steps->len == 0)
    return TRUE;

  if ((allocs = tide_sqlite_prepare (sweep->db, "SELECT " EVENT_COLUMNS " FROM allocations"
                                     " WHERE process_id = ?1 ORDER BY alloc_ns",
                                     WHAT, error)) == NULL ||
      (frees = tide_sqlite_prepare (sweep->db, "SELECT " EVENT_COLUMNS " FROM allocations"
                                    " WHERE process_id = ?1 AND free_ns IS NOT NULL"
                                    " ORDER BY free_ns", WHAT, error)) == NULL)
    {
      sqlite3_finalize (allocs);
      return FALSE;
    }
  sqlite3_bind_int64 (allocs, 1, process_id);
  sqlite3_bind_int64 (frees, 1, process_id);

  have_a = read_event (allocs, FALSE, &a);
  have_f = read_event (frees, TRUE, &f);

  for (guint i = 0; i < steps->len && ok; i++)
    {
      const Step *step = &g_array_index (steps, Step, i);

      /* A block allocated at the step end belongs to the step; one freed at
       * the step end is not live at it. */
      for (;;)
        {
          gboolean take_free = have_f && f.ts <= step->end_ns && (!have_a || f.ts < a.ts);

          if (take_free)
            {
              sweep_apply (acc, &f, step->start_ns);
              have_f = read_event (frees, TRUE, &f);
            }
          else if (have_a && a.ts <= step->end_ns)
            {
              sweep_apply (acc, &a, step->start_ns);
              have_a = read_event (allocs, FALSE, &a);
            }
          else
            break;
        }
      ok = sweep_close_step (sweep, acc, step, error);
    }

  sqlite3_finalize (allocs);
  sqlite3_finalize (frees);
  return ok;
}

static gboolean
build_series_and_stats (sqlite3  *db,
                        GError  **error)
{
  Sweep sweep = { .db = db };
  sqlite3_stmt *procs = NULL;
  gboolean ok = FALSE;
  int rc;

  if ((sweep.insert_series = tide_sqlite_prepare (db,
         "INSERT INTO step_series (step_id, stack_id, scope_id, device, live_bytes,"
         " live_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", WHAT, error)) == NULL ||
      (sweep.insert_stats = tide_sqlite_prepare (db,
         "INSERT INTO step_stats (step_id, heap_live_end, mapped_live_end,"
         " device_live_end, retained_bytes, retained_count) VALUES"
         " (?1, ?2, ?3, ?4, ?5, ?6)", WHAT, error)) == NULL ||
      /* Processes with steps whose summaries the recorder did not write. */
      (procs = tide_sqlite_prepare (db,
         "SELECT p.id FROM processes p WHERE EXISTS (SELECT 1 FROM steps s"
         " WHERE s.process_id = p.id AND NOT EXISTS (SELECT 1 FROM step_stats st"
         " WHERE st.step_id = s.id)) ORDER BY p.id", WHAT, error)) == NULL)
    goto out;

  while ((rc = sqlite3_step (procs)) == SQLITE_ROW)
    if (!sweep_process (&sweep, sqlite3_column_int64 (procs, 0), error))
      goto out;
  if (rc != SQLITE_DONE)
    {
      tide_sqlite_set_error (error, db, "cannot read processes");
      goto out;
    }

  /* RSS at each step end is the last sample at or before it; the part of
   * it that recorded blocks explain was measured by the recorder: its total
   * where it wrote one, else the sum of the step's rows. */
  ok = tide_sqlite_exec (db,
    "UPDATE step_stats SET"
    "  rss_end = (SELECT c.value FROM counters c, steps s"
    "             WHERE s.id = step_stats.step_id AND c.process_id = s.process_id"
    "               AND c.counter = " TIDE_SQL_COUNTER_RSS " AND c.ts_ns <= s.end_ns"
    "             ORDER BY c.ts_ns DESC LIMIT 1);",
    error) &&
    tide_sqlite_exec (db, tide_sqlite_has (db, "table", "step_residency_totals")
                          ? "UPDATE step_stats SET resident_explained = coalesce ("
                            " (SELECT t.resident_bytes FROM step_residency_totals t"
                            "  WHERE t.step_id = step_stats.step_id),"
                            " (SELECT sum (r.resident_bytes) FROM step_residency r"
                            "  WHERE r.step_id = step_stats.step_id));"
                          : "UPDATE step_stats SET resident_explained ="
                            " (SELECT sum (r.resident_bytes) FROM step_residency r"
                            "  WHERE r.step_id = step_stats.step_id);",
                      error);

out:
  sqlite3_finalize (sweep.insert_series);
  sqlite3_finalize (sweep.insert_stats);
  sqlite3_finalize (procs);
  return ok;
}

typedef struct
{
  gint64 bucket;
  gint64 min_value;
  gint64 max_value;
  gint64 last_value;
  gboolean used;
} Bucket;

static gboolean
flush_bucket (sqlite3_stmt  *ins,
              sqlite3       *db,
              const gint64   series[3],
              int            level,
              Bucket        *b,
              GError       **error)
{
  if (!b->used)
    return TRUE;
  b->used = FALSE;
  sqlite3_bind_int64 (ins, 1, series[0]);
  sqlite3_bind_int64 (ins, 2, series[1]);
  sqlite3_bind_int64 (ins, 3, series[2]);
  sqlite3_bind_int (ins, 4, level);
  sqlite3_bind_int64 (ins, 5, b->bucket);
  sqlite3_bind_int64 (ins, 6, b->min_value);
  sqlite3_bind_int64 (ins, 7, b->max_value);
  sqlite3_bind_int64 (ins, 8, b->last_value);
  return tide_sqlite_step_done (db, ins, WHAT, error);
}

static gboolean
build_lod (sqlite3  *db,
           gint64    t0,
           GError  **error)
{
  sqlite3_stmt *read = NULL, *ins = NULL;
  Bucket buckets[TIDE_LOD_LEVELS] = { 0 };
  gint64 series[3] = { -1, -1, -1 };
  gboolean ok = FALSE;
  int rc;

  if ((read = tide_sqlite_prepare (db, "SELECT process_id, counter, device, ts_ns, value"
                                      " FROM counters ORDER BY process_id, counter, device, ts_ns",
                                   WHAT, error)) == NULL ||
      (ins = tide_sqlite_prepare (db, "INSERT INTO counter_lod VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
                                      " ?7, ?8)", WHAT, error)) == NULL)
    goto out;

  while ((rc = sqlite3_step (read)) == SQLITE_ROW)
    {
      gint64 row[3] = { sqlite3_column_int64 (read, 0), sqlite3_column_int64 (read, 1),
                        sqlite3_column_int64 (read, 2) };
      gint64 ts = sqlite3_column_int64 (read, 3) - t0;
      gint64 value = sqlite3_column_int64 (read, 4);
      gboolean new_series = memcmp (row, series, sizeof row) != 0;

      for (int l = 0; l < TIDE_LOD_LEVELS; l++)
        {
          gint64 bucket = MAX (ts, 0) / ((gint64) TIDE_LOD_BASE_NS << (2 * l));
          Bucket *b = &buckets[l];

          if (b->used && (new_series || b->bucket != bucket) &&
              !flush_bucket (ins, db, series, l, b, error))
            goto out;
          if (!b->used)
            *b = (Bucket) { bucket, value, value, value, TRUE };
          b->min_value = MIN (b->min_value, value);
          b->max_value = MAX (b->max_value, value);
          b->last_value = value;
        }
      memcpy (series, row, sizeof row);
    }
  if (rc != SQLITE_DONE)
    {
      tide_sqlite_set_error (error, db, "cannot read counters");
      goto out;
    }
  for (int l = 0; l < TIDE_LOD_LEVELS; l++)
    if (!flush_bucket (ins, db, series, l, &buckets[l], error))
      goto out;
  ok = TRUE;

out:
  sqlite3_finalize (read);
  sqlite3_finalize (ins);
  return ok;
}

static gint64
trace_start_ns (sqlite3 *db)
{
  return tide_sqlite_meta_int (db, "start_ns");
}

/* The writer's short-lived bound when it kept allocation_ranges, else 0. */
gint64
tide_analysis_get_short_lived_ns (sqlite3 *db)
{
  return MAX (tide_sqlite_meta_int (db, "short_lived_ns"), 0);
}

/* Ranges are found through their largest alloc_ns, bounded above by the
 * window end plus the widest range (tide-alloc-ranges.h). */
static gboolean
build_range_index (sqlite3  *db,
                   GError  **error)
{
  if (!tide_sqlite_has (db, "table", "allocation_ranges"))
    return TRUE;
  return tide_schema_ensure (db, "allocation_ranges_by_max", error) &&
         tide_sqlite_exec (db,
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('range_span_ns',"
    "  (SELECT coalesce (max (max_alloc_ns - min_alloc_ns), 0) FROM allocation_ranges));",
    error);
}

/* Blocks never freed are long-lived, so a recorder's trace finds them in
 * long_lived_allocations without reading the short-lived rows. */
static gboolean
build_live_at_end (sqlite3  *db,
                   GError  **error)
{
  g_autofree char *sql = g_strdup_printf (
    "DELETE FROM live_at_end;"
    "INSERT INTO live_at_end SELECT process_id, stack_id, scope_id, device,"
    "  sum (size * weight), sum (weight) FROM allocations"
    " WHERE %s free_ns IS NULL GROUP BY process_id, stack_id, scope_id, device;",
    tide_sqlite_has (db, "table", "long_lived_allocations")
      ? "id IN (SELECT id FROM long_lived_allocations) AND" : "");

  /* The index after the rows: one sort, not an insert into it per row. */
  return tide_schema_ensure (db, "live_at_end", error) &&
         tide_sqlite_exec (db, sql, error) &&
         tide_schema_ensure (db, "live_at_end_by_process", error);
}

gboolean
tide_analysis_build (sqlite3  *db,
                     GError  **error)
{
  if (!tide_sqlite_exec (db,
        "BEGIN;"
        "DELETE FROM counter_lod;",
        error))
    return FALSE;
  if (!tide_schema_ensure (db, "series_by_step", error) ||
      !tide_schema_ensure (db, "residency_by_step", error) ||
      !tide_schema_ensure (db, "counters_by_time", error) ||
      !tide_schema_ensure (db, "transfers_by_time", error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  /* For the retained-by-step queries of reports and the drill-down, in
   * traces whose writer kept no allocation_ranges (tide-alloc-ranges.h). */
  if (tide_analysis_get_short_lived_ns (db) == 0 &&
      !tide_schema_ensure (db, "allocations_by_alloc", error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }

  if (!build_series_and_stats (db, error) ||
      !build_lod (db, trace_start_ns (db), error) ||
      !build_range_index (db, error) ||
      !build_live_at_end (db, error) ||
      !tide_processes_store_roles (db, error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return tide_sqlite_exec (db, "COMMIT", error);
}
