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
 * rows times the steps.  So the times are found in one pass: rows that
 * may live longer than a short-lived row (tide-alloc-ranges.h) are read
 * once, each adding its bytes to the run of times it was live at, and a
 * row made within a short-lived row's life before t is found by the
 * window query the drill-down uses, for (t - short_lived_ns, t], with
 * its process filter: given "process_id = ?1" instead, SQLite built an
 * index of every allocation for each time.
 */
#include "config.h"

#include <math.h>
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
  guint  index;       /* into the caller's times */
  double heap;        /* at first the change at this time, then the sum */
  double mapped;
} Probe;

static gint
compare_probes (gconstpointer a,
                gconstpointer b)
{
  const Probe *x = a, *y = b;

  return x->ts < y->ts ? -1 : x->ts > y->ts;
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

/* Adds @bytes of @kind to the probes from @lo on, and takes them off
 * again from @hi on: the prefix sums then hold them where they lived. */
static void
add_over (Probe  *probes,
          guint   n,
          guint   lo,
          guint   hi,
          gint    kind,
          double  bytes)
{
  if (lo < hi && add_to (&probes[lo], kind, bytes, 1) && hi < n)
    add_to (&probes[hi], kind, bytes, -1);
}

/* The rows that may outlive a short-lived row, each at the probes that it
 * was live at and that came at least @short_lived_ns after it was made:
 * those before are the window query's. */
static gboolean
add_long_lived (TideTrace  *trace,
                gint64      process_id,
                gint64      short_lived_ns,
                Probe      *probes,
                guint       n,
                GError    **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  g_autofree char *sql = _tide_trace_long_lived_rows_sql (trace, ROW_COLUMNS);
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, WHAT, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int64 (stmt, 2, probes[n - 1].ts);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 made = tide_sat_add (sqlite3_column_int64 (stmt, 0), short_lived_ns);
      gboolean freed = sqlite3_column_type (stmt, 1) != SQLITE_NULL;
      guint lo = tide_sorted_count_below (probes, n, sizeof (Probe), G_STRUCT_OFFSET (Probe, ts),
                                          made);
      guint hi = freed ? tide_sorted_count_below (probes, n, sizeof (Probe),
                                                  G_STRUCT_OFFSET (Probe, ts),
                                                  sqlite3_column_int64 (stmt, 1))
                       : n;

      add_over (probes, n, lo, hi, sqlite3_column_int (stmt, 2), sqlite3_column_double (stmt, 3));
    }
  return tide_sqlite_finish (db, stmt, rc, WHAT, error);
}

/* The rows made within @short_lived_ns before each probe and live at it,
 * added to each probe's own sums, after the prefix sums. */
static gboolean
add_recent (TideTrace  *trace,
            gint64      process_id,
            gint64      short_lived_ns,
            Probe      *probes,
            guint       n,
            GError    **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  g_autofree char *rows = _tide_trace_retained_rows_sql (trace, TIDE_PROCESS_FILTER_ANY);
  g_autofree char *sql = g_strdup_printf ("SELECT kind, sum (size * weight) FROM (%s)"
                                          " GROUP BY kind", rows);
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, WHAT, error);
  gboolean ok = TRUE;

  if (stmt == NULL)
    return FALSE;
  for (guint i = 0; i < n && ok; i++)
    {
      int rc;

      sqlite3_reset (stmt);
      sqlite3_bind_int64 (stmt, 1, process_id);
      sqlite3_bind_int64 (stmt, 2, tide_sat_sub (probes[i].ts, short_lived_ns));
      sqlite3_bind_int64 (stmt, 3, probes[i].ts);
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        add_to (&probes[i], sqlite3_column_int (stmt, 0), sqlite3_column_double (stmt, 1), 1);
      if (rc != SQLITE_DONE)
        {
          tide_sqlite_set_error (error, db, WHAT);
          ok = FALSE;
        }
    }
  sqlite3_finalize (stmt);
  return ok;
}

/**
 * tide_trace_live_at:
 * @process_id: whose rows
 * @times: (array length=n_times): trace times, in any order
 * @live: (out caller-allocates) (array length=n_times): the heap and
 *   mapped bytes of @process_id's live recorded blocks at each of @times
 *
 * A block made at t is live at t; one freed at t is not.
 *
 * Returns: %FALSE with @error set when the trace cannot be read
 */
gboolean
tide_trace_live_at (TideTrace     *trace,
                    gint64         process_id,
                    const gint64  *times,
                    guint          n_times,
                    TideLiveBytes *live,
                    GError       **error)
{
  gint64 short_lived_ns = _tide_trace_get_short_lived_ns (trace);
  g_autofree Probe *probes = NULL;

  if (n_times == 0)
    return TRUE;
  probes = g_new0 (Probe, n_times);
  for (guint i = 0; i < n_times; i++)
    probes[i] = (Probe) { .ts = times[i], .index = i };
  qsort (probes, n_times, sizeof (Probe), compare_probes);

  if (!add_long_lived (trace, process_id, short_lived_ns, probes, n_times, error))
    return FALSE;
  for (guint i = 1; i < n_times; i++)
    {
      probes[i].heap += probes[i - 1].heap;
      probes[i].mapped += probes[i - 1].mapped;
    }
  if (short_lived_ns > 0 &&
      !add_recent (trace, process_id, short_lived_ns, probes, n_times, error))
    return FALSE;

  for (guint i = 0; i < n_times; i++)
    live[probes[i].index] = (TideLiveBytes) { tide_sat_from_double (probes[i].heap),
                                              tide_sat_from_double (probes[i].mapped) };
  return TRUE;
}
