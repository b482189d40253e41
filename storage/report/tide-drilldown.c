/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <math.h>
#include <sqlite3.h>

#include "tide-drilldown.h"

#include "tide-alloc-ranges.h"
#include "tide-report-private.h"
#include "tide-saturate.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-trace-private.h"

#define READ_WHAT "cannot read the trace"

static gint
compare_by_bytes (gconstpointer a,
                  gconstpointer b)
{
  const TideGroup *x = *(TideGroup **) a, *y = *(TideGroup **) b;

  if (x->bytes != y->bytes)
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
  return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static TideGroup *
group_from_row (sqlite3_stmt *stmt)
{
  TideGroup *group = _tide_group_new (sqlite3_column_int64 (stmt, 0),
                                      sqlite3_column_int64 (stmt, 1),
                                      sqlite3_column_int (stmt, 4));

  group->scope_id = sqlite3_column_int64 (stmt, 2);
  group->stack_id = sqlite3_column_int64 (stmt, 3);
  group->bytes = tide_sat_from_double (sqlite3_column_double (stmt, 5));
  group->count = tide_sat_from_double (sqlite3_column_double (stmt, 6));
  group->scope_path = _tide_report_column_dup (stmt, 7);
  return group;
}

/**
 * tide_drilldown_retained:
 * @process_id: a process row id, or 0 for every process
 * @begin_ns: (exclusive) from the trace start
 * @end_ns: (inclusive) from the trace start
 *
 * Bytes allocated in (@begin_ns, @end_ns] and still live at @end_ns, per
 * (process, scope, stack, device), with frames and scope paths.  The
 * process list comes from a subquery so that each process is a range
 * search of the index on (process_id, alloc_ns) (tide-alloc-ranges.h);
 * "?1 = 0 OR process_id = ?1" would scan the whole index instead.
 *
 * Returns: (transfer full): #TideGroup rows, largest first
 */
GPtrArray *
tide_drilldown_retained (TideTrace  *trace,
                         gint64      process_id,
                         gint64      begin_ns,
                         gint64      end_ns,
                         GError    **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_group_free);
  sqlite3 *db;
  g_autofree char *rows = NULL;
  g_autofree char *sql = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 t0;
  int rc;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);

  db = _tide_trace_get_db (trace);
  t0 = tide_trace_get_start_ns (trace);
  rows = _tide_trace_retained_rows_sql (trace, TIDE_PROCESS_FILTER_ANY);
  sql = g_strdup_printf ("SELECT a.process_id, p.pid, coalesce (a.scope_id, 0),"
                         "  coalesce (a.stack_id, 0), a.device, sum (a.size * a.weight),"
                         "  sum (a.weight), s.path"
                         " FROM (%s) a JOIN processes p ON p.id = a.process_id"
                         " LEFT JOIN scopes s ON s.id = a.scope_id"
                         " GROUP BY 1, 3, 4, 5", rows);
  if ((stmt = tide_sqlite_prepare (db, sql, "cannot query the trace", error)) == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int64 (stmt, 2, begin_ns + t0);
  sqlite3_bind_int64 (stmt, 3, end_ns + t0);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (out, group_from_row (stmt));
  if (!tide_sqlite_finish (db, stmt, rc, "cannot query the trace", error))
    return NULL;
  if (!_tide_report_load_group_frames (trace, out, error))
    return NULL;
  g_ptr_array_sort (out, compare_by_bytes);
  return g_steal_pointer (&out);
}

typedef struct
{
  gint64 process_id;
  gint64 begin_ns;
  gint64 end_ns;
} RetainedRequest;

static void
retained_worker (GTask        *task,
                 gpointer      source_object,
                 gpointer      task_data,
                 GCancellable *cancellable)
{
  TideTrace *trace = source_object;
  const RetainedRequest *req = task_data;
  GError *error = NULL;
  GPtrArray *groups = NULL;
  TideTrace *reader;

  /* A newer selection cancelled this one while it waited for a thread. */
  if (g_task_return_error_if_cancelled (task))
    return;
  reader = _tide_trace_lock_reader (trace, cancellable, &error);
  if (reader != NULL)
    {
      groups = tide_drilldown_retained (reader, req->process_id, req->begin_ns, req->end_ns,
                                        &error);
      _tide_trace_unlock_reader (trace);
    }
  /* A query stopped by @cancellable fails: GTask reports the cancellation. */
  if (groups != NULL)
    g_task_return_pointer (task, groups, (GDestroyNotify) g_ptr_array_unref);
  else
    g_task_return_error (task, error);
}

/**
 * tide_drilldown_retained_async:
 * @cancellable: (nullable): stops the query soon after it is cancelled
 *
 * tide_drilldown_retained() in a worker thread, on a second connection
 * to the trace file, so that the caller's thread (the GUI's) never waits
 * for it and can go on querying @trace.  A trace that is summarized in
 * memory (incomplete) has no second connection: it is queried at once,
 * in the caller's thread, and @callback still runs from the main loop.
 */
void
tide_drilldown_retained_async (TideTrace           *trace,
                               gint64               process_id,
                               gint64               begin_ns,
                               gint64               end_ns,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  RetainedRequest *req = g_new (RetainedRequest, 1);

  g_return_if_fail (TIDE_IS_TRACE (trace));

  *req = (RetainedRequest) { process_id, begin_ns, end_ns };
  task = g_task_new (trace, cancellable, callback, user_data);
  g_task_set_source_tag (task, tide_drilldown_retained_async);
  g_task_set_task_data (task, req, g_free);
  if (tide_trace_is_complete (trace))
    {
      g_task_run_in_thread (task, retained_worker);
      return;
    }
  {
    g_autoptr(GError) error = NULL;
    GPtrArray *groups = tide_drilldown_retained (trace, process_id, begin_ns, end_ns, &error);

    if (groups != NULL)
      g_task_return_pointer (task, groups, (GDestroyNotify) g_ptr_array_unref);
    else
      g_task_return_error (task, g_steal_pointer (&error));
  }
}

/**
 * tide_drilldown_retained_finish:
 *
 * Returns: (transfer full) (nullable): as tide_drilldown_retained(), or
 *   %NULL with @error set (G_IO_ERROR_CANCELLED when it was cancelled)
 */
GPtrArray *
tide_drilldown_retained_finish (TideTrace     *trace,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, trace), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * tide_drilldown_live_counts:
 * @path: a trace that a recorder may still be writing
 *
 * A few counters read straight from the file, without the in-memory copy
 * and summaries that opening an incomplete trace builds, so that a live
 * capture can be followed several times a second however long it runs.
 * The file must already carry the trace schema.
 */
gboolean
tide_drilldown_live_counts (const char      *path,
                            TideLiveCounts  *counts,
                            GError         **error)
{
  sqlite3 *db = NULL;
  gint64 t0 = 0, t1 = 0;
  gboolean ok;

  g_return_val_if_fail (path != NULL && counts != NULL, FALSE);

  *counts = (TideLiveCounts) { 0 };
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
    {
      g_autofree char *message = tide_sqlite_dup_errmsg (db);

      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_IO, "cannot open %s: %s", path,
                   message);
      sqlite3_close (db);
      return FALSE;
    }
  sqlite3_db_config (db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_busy_timeout (db, 50);
  ok = tide_sqlite_query_int (db, "SELECT count (*) FROM processes", READ_WHAT,
                              &counts->n_processes, error) &&
       tide_sqlite_query_int (db, "SELECT count (*) FROM steps", READ_WHAT, &counts->n_steps,
                              error) &&
       tide_sqlite_query_int (db, "SELECT coalesce (max (id), 0) FROM allocations", READ_WHAT,
                              &counts->n_allocations, error) &&
       tide_sqlite_query_int (db, "SELECT coalesce ((SELECT value FROM meta"
                                  " WHERE key = 'start_ns'), (SELECT min (start_ns)"
                                  " FROM processes), 0)", READ_WHAT, &t0, error) &&
       tide_sqlite_query_int (db, "SELECT coalesce (max (ts_ns), 0) FROM counters", READ_WHAT, &t1,
                              error);
  counts->last_ns = t1 > t0 ? t1 - t0 : 0;
  sqlite3_close (db);
  return ok;
}
