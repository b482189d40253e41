/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A process's live heap at a time that is not its own step end: another
 * process's step end, or its exit reading.  The recorder's live-heap
 * counter cannot give it: the counter is the recorder's sum when it polls,
 * of the records the process had sent by then.  Its records come when its
 * flusher sends them, so the counter lags the process by up to a flush,
 * and a block allocated and freed between two polls is never in it at
 * all, however long it lived.  The allocation rows hold each block's own
 * times, so the heap at t is the rows made by t and not freed by t.
 *
 * Reading every row of the process for every time would cost the trace's
 * rows times the steps.  So each row is read once and adds its bytes to
 * the run of times it was live at (prefix sums over the sorted times):
 * the rows that may live longer than a short-lived row
 * (tide-alloc-ranges.h) through long_lived_allocations, the short-lived
 * ones through the block ranges that lie near a time, each range once.
 * A window query per time, as the drill-down makes for one step, read
 * the same ranges again for every time near them: on a recording of
 * every allocation, a millisecond per time.
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sqlite3.h>

#include "tide-alloc-ranges.h"
#include "tide-kinds.h"
#include "tide-live-at.h"
#include "tide-saturate.h"
#include "tide-sorted.h"
#include "tide-sqlite.h"
#include "tide-trace-private.h"

#define WHAT "cannot read the trace"
#define ROW_COLUMNS "alloc_ns, free_ns, kind, size * weight"

typedef struct
{
  gint64 ts;
  guint  index;       /* into the request's times */
  double heap;        /* at first the change at this time, then the sum */
  double mapped;
} Probe;

/* One request's times, sorted. */
typedef struct
{
  TideLiveAtRequest *request;
  Probe             *probes;
  guint              n;
} ProbeSet;

static gint
compare_probes (gconstpointer a,
                gconstpointer b)
{
  const Probe *x = a, *y = b;

  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static guint
count_below (const ProbeSet *set,
             gint64          ts)
{
  return tide_sorted_count_below (set->probes, set->n, sizeof (Probe),
                                  G_STRUCT_OFFSET (Probe, ts), ts);
}

/* Adds @bytes of @kind to @probe's heap or mapped sum; FALSE for a kind
 * that is neither, or bytes that are no number (a damaged row). */
static gboolean
add_to (Probe  *probe,
        gint    kind,
        double  bytes,
        double  sign)
{
  if (!isfinite (bytes))
    return FALSE;
  if (tide_kind_is_heap (kind))
    probe->heap += sign * bytes;
  else if (tide_kind_is_mapped (kind))
    probe->mapped += sign * bytes;
  else
    return FALSE;
  return TRUE;
}

/* A row of @kind and @bytes live from @made until @freed (0: never freed,
 * as a trace's free_ns of 0 says too)
 * adds its bytes at the first probe from @made on and takes them off at
 * the first from @freed on: the prefix sums then hold them where it
 * lived. */
static void
add_row (ProbeSet *set,
         gint64    made,
         gint64    freed,
         gint      kind,
         double    bytes)
{
  guint lo = count_below (set, made);
  guint hi = freed != 0 ? count_below (set, freed) : set->n;

  if (lo < hi && add_to (&set->probes[lo], kind, bytes, 1) && hi < set->n)
    add_to (&set->probes[hi], kind, bytes, -1);
}

/* @stmt's row from column @col on: alloc_ns, free_ns, kind, bytes. */
static void
add_stmt_row (ProbeSet     *set,
              sqlite3_stmt *stmt,
              int           col)
{
  gint64 freed = sqlite3_column_type (stmt, col + 1) == SQLITE_NULL
                 ? 0 : sqlite3_column_int64 (stmt, col + 1);

  add_row (set, sqlite3_column_int64 (stmt, col), freed, sqlite3_column_int (stmt, col + 2),
           sqlite3_column_double (stmt, col + 3));
}

/* The rows of @set's process that may outlive a short-lived row (where
 * the trace keeps no short-lived rows apart, every row). */
static gboolean
add_long_lived (TideTrace  *trace,
                ProbeSet   *set,
                GError    **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  g_autofree char *sql = _tide_trace_long_lived_rows_sql (trace, ROW_COLUMNS);
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, WHAT, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, set->request->process_id);
  sqlite3_bind_int64 (stmt, 2, set->probes[set->n - 1].ts);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    add_stmt_row (set, stmt, 0);
  return tide_sqlite_finish (db, stmt, rc, WHAT, error);
}

/* Whether a probe of any set lies in [@from, @to). */
static gboolean
any_probe_in (GPtrArray *sets,
              gint64     from,
              gint64     to)
{
  for (guint s = 0; s < sets->len; s++)
    {
      const ProbeSet *set = g_ptr_array_index (sets, s);
      guint i = count_below (set, from);

      if (i < set->n && set->probes[i].ts < to)
        return TRUE;
    }
  return FALSE;
}

/* The short-lived rows of one block range, each to its process's set. */
static gboolean
add_range_rows (sqlite3_stmt *rows,
                gint64        first_id,
                gint64        last_id,
                GHashTable   *by_process)
{
  int rc;

  sqlite3_reset (rows);
  sqlite3_bind_int64 (rows, 1, first_id);
  sqlite3_bind_int64 (rows, 2, last_id);
  while ((rc = sqlite3_step (rows)) == SQLITE_ROW)
    {
      gint64 process_id = sqlite3_column_int64 (rows, 0);
      ProbeSet *set = g_hash_table_lookup (by_process, &process_id);

      if (set != NULL)
        add_stmt_row (set, rows, 1);
    }
  return rc == SQLITE_DONE;
}

/* "1, 4, 7": the sets' processes, for SQL. */
static char *
list_processes (GPtrArray *sets)
{
  GString *out = g_string_new (NULL);

  for (guint s = 0; s < sets->len; s++)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT, s > 0 ? ", " : "",
                            ((ProbeSet *) g_ptr_array_index (sets, s))->request->process_id);
  return g_string_free (out, FALSE);
}

/* The short-lived rows, which only the block ranges find: a range whose
 * rows were made in [min, max] holds rows live at a probe only where one
 * lies in [min, max + short_lived_ns).  Each such range is read once for
 * every set, however many probes it serves. */
static gboolean
add_short_lived (TideTrace  *trace,
                 gint64      short_lived_ns,
                 GPtrArray  *sets,
                 GHashTable *by_process,
                 gint64      first_ts,
                 gint64      last_ts,
                 GError    **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  gint64 span_ns = _tide_trace_get_range_span_ns (trace);
  g_autofree char *near = tide_alloc_ranges_made_in_sql ("r", "?1", "?2", span_ns);
  g_autofree char *ranges_sql = g_strdup_printf (
    "SELECT first_id, last_id, min_alloc_ns, max_alloc_ns FROM allocation_ranges r WHERE %s",
    near);
  g_autofree char *processes = list_processes (sets);
  /* The process first, so that SQLite reads no other column of the rows
   * of the processes that were not asked about, most of them. */
  g_autofree char *rows_sql = g_strdup_printf (
    "SELECT process_id, " ROW_COLUMNS " FROM allocations WHERE id BETWEEN ?1 AND ?2"
    " AND +process_id IN (%s) AND free_ns - alloc_ns <= %" G_GINT64_FORMAT,
    processes, short_lived_ns);
  sqlite3_stmt *ranges = tide_sqlite_prepare (db, ranges_sql, WHAT, error);
  sqlite3_stmt *rows = ranges != NULL ? tide_sqlite_prepare (db, rows_sql, WHAT, error) : NULL;
  gboolean ok = rows != NULL;
  int rc = SQLITE_DONE;

  if (ok)
    {
      sqlite3_bind_int64 (ranges, 1, tide_sat_sub (first_ts, short_lived_ns));
      sqlite3_bind_int64 (ranges, 2, last_ts);
    }
  while (ok && (rc = sqlite3_step (ranges)) == SQLITE_ROW)
    if (any_probe_in (sets, sqlite3_column_int64 (ranges, 2),
                      tide_sat_add (sqlite3_column_int64 (ranges, 3), short_lived_ns)))
      ok = add_range_rows (rows, sqlite3_column_int64 (ranges, 0),
                           sqlite3_column_int64 (ranges, 1), by_process);
  if (ok && rc != SQLITE_DONE)
    ok = FALSE;
  if (!ok && error != NULL && *error == NULL)
    tide_sqlite_set_error (error, db, WHAT);
  sqlite3_finalize (ranges);
  sqlite3_finalize (rows);
  return ok;
}

static void
probe_set_free (ProbeSet *set)
{
  g_free (set->probes);
  g_free (set);
}

static ProbeSet *
probe_set_new (TideLiveAtRequest *request)
{
  ProbeSet *set = g_new0 (ProbeSet, 1);

  set->request = request;
  set->n = request->n_times;
  set->probes = g_new0 (Probe, set->n);
  for (guint i = 0; i < set->n; i++)
    set->probes[i] = (Probe) { .ts = request->times[i], .index = i };
  qsort (set->probes, set->n, sizeof (Probe), compare_probes);
  return set;
}

/* The prefix sums, into the request's order. */
static void
probe_set_finish (ProbeSet *set)
{
  for (guint i = 1; i < set->n; i++)
    {
      set->probes[i].heap += set->probes[i - 1].heap;
      set->probes[i].mapped += set->probes[i - 1].mapped;
    }
  for (guint i = 0; i < set->n; i++)
    set->request->live[set->probes[i].index] = (TideLiveBytes) {
      tide_sat_from_double (set->probes[i].heap), tide_sat_from_double (set->probes[i].mapped)
    };
}

/**
 * tide_trace_live_at:
 * @requests: (array length=n_requests): for each, a process and trace
 *   times in any order; its @live (of @n_times) is set to the heap and
 *   mapped bytes of the process's live recorded blocks at each time
 *
 * A block made at t is live at t; one freed at t is not.  All the
 * requests are answered together: the short-lived rows are read once for
 * them all.
 *
 * Returns: %FALSE with @error set when the trace cannot be read
 */
gboolean
tide_trace_live_at (TideTrace         *trace,
                    TideLiveAtRequest *requests,
                    guint              n_requests,
                    GError           **error)
{
  gint64 short_lived_ns = _tide_trace_get_short_lived_ns (trace);
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func ((GDestroyNotify) probe_set_free);
  g_autoptr(GHashTable) by_process = g_hash_table_new (g_int64_hash, g_int64_equal);
  gint64 first_ts = G_MAXINT64, last_ts = G_MININT64;

  for (guint r = 0; r < n_requests; r++)
    {
      ProbeSet *set;

      /* The callers ask once per process (processes.id is the trace's
       * key); a second request would read the short-lived rows twice, so
       * it gets nothing. */
      if (g_hash_table_contains (by_process, &requests[r].process_id))
        memset (requests[r].live, 0, requests[r].n_times * sizeof *requests[r].live);
      if (requests[r].n_times == 0 ||
          g_hash_table_contains (by_process, &requests[r].process_id))
        continue;
      set = probe_set_new (&requests[r]);
      g_ptr_array_add (sets, set);
      g_hash_table_insert (by_process, &requests[r].process_id, set);
      first_ts = MIN (first_ts, set->probes[0].ts);
      last_ts = MAX (last_ts, set->probes[set->n - 1].ts);
      if (!add_long_lived (trace, set, error))
        return FALSE;
    }
  if (sets->len > 0 && short_lived_ns > 0 &&
      !add_short_lived (trace, short_lived_ns, sets, by_process, first_ts, last_ts, error))
    return FALSE;
  for (guint s = 0; s < sets->len; s++)
    probe_set_finish (g_ptr_array_index (sets, s));
  return TRUE;
}
