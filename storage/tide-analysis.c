/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Summaries built once when a capture ends, so that reports and the timeline
 * never scan the allocations table again:
 *
 *  - step_series: live bytes and count per (stack, scope, device) at the end
 *    of every step, written only where the value changed.  It comes from one
 *    sweep per process over two index-ordered streams, the allocation times
 *    and the free times, merged with the step ends: O(n log n) for n
 *    allocations instead of O(n * steps).
 *  - step_stats: per step, live heap/mapped/device bytes at its end, bytes
 *    allocated in the step and still live at its end, RSS at its end, and how
 *    much of it recorded allocations explain (from step_residency).
 *  - counter_lod: min/max/last per time bucket at TIDE_LOD_LEVELS zoom levels.
 */
#include "config.h"

#include <string.h>

#include "tide-analysis.h"
#include "tide-schema.h"
#include "tide-storage-error.h"

/* Same numbering as TideAllocKind in capture/tide-wire.h. */
enum { KIND_MALLOC = 1, KIND_MMAP = 2, KIND_BRK = 3, KIND_DEVICE = 4, KIND_PINNED = 5 };

typedef struct
{
  gint64 stack_id;
  gint64 scope_id;
  gint   device;
} SeriesKey;

typedef struct
{
  SeriesKey key;
  double    live_bytes;
  double    live_count;
  gint64    written_bytes;
  gint64    written_count;
  gboolean  dirty;
} Series;

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
  gint64 stack_id;
  gint64 scope_id;
  gint   device;
  gint   kind;
  double bytes;     /* size * weight */
  double count;     /* weight */
} Event;

typedef struct
{
  sqlite3      *db;
  sqlite3_stmt *insert_series;
  sqlite3_stmt *insert_stats;
  GHashTable   *series;      /* SeriesKey* -> Series* */
  GPtrArray    *dirty;       /* Series* changed since the last step end */
  double        heap_live;
  double        mapped_live;
  double        device_live;
  double        born_bytes;  /* allocated in the current step, still live */
  double        born_count;
} Sweep;

static guint
series_key_hash (gconstpointer p)
{
  const SeriesKey *k = p;

  return (guint) (k->stack_id * 2654435761u) ^ (guint) (k->scope_id * 40503u) ^ (guint) k->device;
}

static gboolean
series_key_equal (gconstpointer a,
                  gconstpointer b)
{
  const SeriesKey *x = a, *y = b;

  return x->stack_id == y->stack_id && x->scope_id == y->scope_id && x->device == y->device;
}

static gboolean
prepare (sqlite3       *db,
         const char    *sql,
         sqlite3_stmt **stmt,
         GError       **error)
{
  if (sqlite3_prepare_v2 (db, sql, -1, stmt, NULL) != SQLITE_OK)
    {
      tide_sqlite_set_error (error, db, "cannot summarize the trace");
      return FALSE;
    }
  return TRUE;
}

static gboolean
step_done (sqlite3_stmt  *stmt,
           sqlite3       *db,
           GError       **error)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      tide_sqlite_set_error (error, db, "cannot summarize the trace");
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_event (sqlite3_stmt *stmt,
            gboolean      is_free,
            Event        *ev)
{
  if (sqlite3_step (stmt) != SQLITE_ROW)
    return FALSE;
  ev->ts = sqlite3_column_int64 (stmt, is_free ? 1 : 0);
  ev->alloc_ns = sqlite3_column_int64 (stmt, 0);
  ev->stack_id = sqlite3_column_int64 (stmt, 2);
  ev->scope_id = sqlite3_column_int64 (stmt, 3);
  ev->device = sqlite3_column_int (stmt, 4);
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
sweep_apply (Sweep       *sweep,
             const Event *ev,
             gint64       step_start_ns)
{
  SeriesKey key = { ev->stack_id, ev->scope_id, ev->device };
  Series *s = g_hash_table_lookup (sweep->series, &key);

  if (s == NULL)
    {
      s = g_new0 (Series, 1);
      s->key = key;
      g_hash_table_insert (sweep->series, &s->key, s);
    }
  s->live_bytes += ev->bytes;
  s->live_count += ev->count;
  if (!s->dirty)
    {
      s->dirty = TRUE;
      g_ptr_array_add (sweep->dirty, s);
    }

  if (ev->kind == KIND_DEVICE)
    sweep->device_live += ev->bytes;
  else if (ev->kind == KIND_MMAP || ev->kind == KIND_BRK)
    sweep->mapped_live += ev->bytes;
  else
    sweep->heap_live += ev->bytes;

  /* Only what was born in this step counts as retained by it. */
  if (ev->alloc_ns > step_start_ns)
    {
      sweep->born_bytes += ev->bytes;
      sweep->born_count += ev->count;
    }
}

static gboolean
sweep_close_step (Sweep       *sweep,
                  const Step  *step,
                  GError     **error)
{
  sqlite3_stmt *ins = sweep->insert_series;

  for (guint i = 0; i < sweep->dirty->len; i++)
    {
      Series *s = g_ptr_array_index (sweep->dirty, i);
      gint64 bytes = (gint64) (s->live_bytes + 0.5);
      gint64 count = (gint64) (s->live_count + 0.5);

      s->dirty = FALSE;
      if (bytes == s->written_bytes && count == s->written_count)
        continue;
      s->written_bytes = bytes;
      s->written_count = count;
      sqlite3_bind_int64 (ins, 1, step->id);
      if (s->key.stack_id) sqlite3_bind_int64 (ins, 2, s->key.stack_id); else sqlite3_bind_null (ins, 2);
      if (s->key.scope_id) sqlite3_bind_int64 (ins, 3, s->key.scope_id); else sqlite3_bind_null (ins, 3);
      sqlite3_bind_int (ins, 4, s->key.device);
      sqlite3_bind_int64 (ins, 5, bytes);
      sqlite3_bind_int64 (ins, 6, count);
      if (!step_done (ins, sweep->db, error))
        return FALSE;
    }
  g_ptr_array_set_size (sweep->dirty, 0);

  sqlite3_bind_int64 (sweep->insert_stats, 1, step->id);
  sqlite3_bind_int64 (sweep->insert_stats, 2, (gint64) (sweep->heap_live + 0.5));
  sqlite3_bind_int64 (sweep->insert_stats, 3, (gint64) (sweep->mapped_live + 0.5));
  sqlite3_bind_int64 (sweep->insert_stats, 4, (gint64) (sweep->device_live + 0.5));
  sqlite3_bind_int64 (sweep->insert_stats, 5, (gint64) (sweep->born_bytes + 0.5));
  sqlite3_bind_int64 (sweep->insert_stats, 6, (gint64) (sweep->born_count + 0.5));
  sweep->born_bytes = 0;
  sweep->born_count = 0;
  return step_done (sweep->insert_stats, sweep->db, error);
}

static GArray *
load_steps (sqlite3  *db,
            gint64    process_id,
            GError  **error)
{
  g_autoptr(GArray) steps = g_array_new (FALSE, FALSE, sizeof (Step));
  sqlite3_stmt *stmt = NULL;
  int rc;

  if (!prepare (db, "SELECT id, start_ns, end_ns FROM steps WHERE process_id = ?1"
                    " ORDER BY number", &stmt, error))
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Step s = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                 sqlite3_column_int64 (stmt, 2) };
      g_array_append_val (steps, s);
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    {
      tide_sqlite_set_error (error, db, "cannot read steps");
      return NULL;
    }
  return g_steal_pointer (&steps);
}

#define EVENT_COLUMNS "alloc_ns, free_ns, stack_id, scope_id, device, kind, size * weight, weight"

static gboolean
sweep_process (Sweep   *sweep,
               gint64   process_id,
               GError **error)
{
  g_autoptr(GArray) steps = load_steps (sweep->db, process_id, error);
  sqlite3_stmt *allocs = NULL, *frees = NULL;
  Event a, f;
  gboolean have_a, have_f, ok = TRUE;

  if (steps == NULL)
    return FALSE;
  if (steps->len == 0)
    return TRUE;

  if (!prepare (sweep->db, "SELECT " EVENT_COLUMNS " FROM allocations"
                " WHERE process_id = ?1 ORDER BY alloc_ns", &allocs, error) ||
      !prepare (sweep->db, "SELECT " EVENT_COLUMNS " FROM allocations"
                " WHERE process_id = ?1 AND free_ns IS NOT NULL ORDER BY free_ns", &frees, error))
    {
      sqlite3_finalize (allocs);
      return FALSE;
    }
  sqlite3_bind_int64 (allocs, 1, process_id);
  sqlite3_bind_int64 (frees, 1, process_id);

  sweep->heap_live = sweep->mapped_live = sweep->device_live = 0;
  sweep->born_bytes = sweep->born_count = 0;
  g_hash_table_remove_all (sweep->series);

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
              sweep_apply (sweep, &f, step->start_ns);
              have_f = read_event (frees, TRUE, &f);
            }
          else if (have_a && a.ts <= step->end_ns)
            {
              sweep_apply (sweep, &a, step->start_ns);
              have_a = read_event (allocs, FALSE, &a);
            }
          else
            break;
        }
      ok = sweep_close_step (sweep, step, error);
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

  sweep.series = g_hash_table_new_full (series_key_hash, series_key_equal, NULL, g_free);
  sweep.dirty = g_ptr_array_new ();

  if (!prepare (db, "INSERT INTO step_series (step_id, stack_id, scope_id, device, live_bytes,"
                    " live_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &sweep.insert_series, error) ||
      !prepare (db, "INSERT INTO step_stats (step_id, heap_live_end, mapped_live_end,"
                    " device_live_end, retained_bytes, retained_count) VALUES"
                    " (?1, ?2, ?3, ?4, ?5, ?6)", &sweep.insert_stats, error) ||
      !prepare (db, "SELECT id FROM processes ORDER BY id", &procs, error))
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
   * it that recorded blocks explain was measured by the recorder. */
  ok = tide_sqlite_exec (db,
    "UPDATE step_stats SET"
    "  rss_end = (SELECT c.value FROM counters c, steps s"
    "             WHERE s.id = step_stats.step_id AND c.process_id = s.process_id"
    "               AND c.counter = 1 AND c.ts_ns <= s.end_ns"
    "             ORDER BY c.ts_ns DESC LIMIT 1),"
    "  resident_explained = (SELECT sum (r.resident_bytes) FROM step_residency r"
    "                        WHERE r.step_id = step_stats.step_id);",
    error);

out:
  sqlite3_finalize (sweep.insert_series);
  sqlite3_finalize (sweep.insert_stats);
  sqlite3_finalize (procs);
  g_hash_table_unref (sweep.series);
  g_ptr_array_unref (sweep.dirty);
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
  return step_done (ins, db, error);
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

  if (!prepare (db, "SELECT process_id, counter, device, ts_ns, value FROM counters"
                    " ORDER BY process_id, counter, device, ts_ns", &read, error) ||
      !prepare (db, "INSERT INTO counter_lod VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                &ins, error))
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
  sqlite3_stmt *stmt = NULL;
  gint64 t0 = 0;

  if (sqlite3_prepare_v2 (db, "SELECT value FROM meta WHERE key = 'start_ns'", -1,
                          &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    t0 = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return t0;
}

gboolean
tide_analysis_build (sqlite3  *db,
                     GError  **error)
{
  if (!tide_sqlite_exec (db,
        "BEGIN;"
        "DELETE FROM step_series; DELETE FROM step_stats; DELETE FROM counter_lod;"
        "CREATE INDEX IF NOT EXISTS allocations_by_alloc ON allocations (process_id, alloc_ns);"
        "CREATE INDEX IF NOT EXISTS allocations_by_free ON allocations (process_id, free_ns)"
        "  WHERE free_ns IS NOT NULL;"
        "CREATE INDEX IF NOT EXISTS allocations_by_stack ON allocations (stack_id);"
        "CREATE INDEX IF NOT EXISTS series_by_step ON step_series (step_id);"
        "CREATE INDEX IF NOT EXISTS residency_by_step ON step_residency (step_id);",
        error))
    return FALSE;

  if (!build_series_and_stats (db, error) ||
      !build_lod (db, trace_start_ns (db), error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return tide_sqlite_exec (db, "COMMIT", error);
}
