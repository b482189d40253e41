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

#include "tide-report.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-trace-private.h"

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
  g_ptr_array_unref (lane->bands);
  g_free (lane);
}

/* A process's PSS, or its RSS in a trace that has no PSS (an older one, or
 * a kernel without smaps_rollup).  *@by_pss says which. */
static TideLaneData *
band_lane (TideTrace  *trace,
           gint64      process_id,
           gint64      begin_ns,
           gint64      end_ns,
           guint       n_columns,
           gboolean   *by_pss,
           GError    **error)
{
  g_autoptr(GError) local_error = NULL;
  TideLaneData *lane;

  lane = tide_timeline_data_query_lane (trace, process_id, TIDE_COUNTER_PSS, -1, begin_ns, end_ns,
                                        n_columns, &local_error);
  *by_pss = lane != NULL;
  if (lane == NULL && local_error == NULL)
    lane = tide_timeline_data_query_lane (trace, process_id, TIDE_COUNTER_RSS, -1, begin_ns,
                                          end_ns, n_columns, &local_error);
  if (local_error != NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return lane;
}

static TideJobBand *
band_new (TideTrace   *trace,
          gint64       process_id,
          const char  *label,
          gint64       begin_ns,
          gint64       end_ns,
          guint        n_columns,
          gboolean    *by_pss,
          GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(TideLaneData) lane = band_lane (trace, process_id, begin_ns, end_ns, n_columns,
                                            by_pss, &local_error);
  TideJobBand *band;

  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  band = g_new0 (TideJobBand, 1);
  band->process_id = process_id;
  band->label = g_strdup (label);
  band->last = g_new0 (gint64, n_columns);
  for (guint c = 0; lane != NULL && c < n_columns && c < lane->n_columns; c++)
    {
      gint64 value;

      /* Memory is never negative; a damaged trace's value must not make
       * the stack shrink below the bands under it. */
      if (tide_lane_data_value_at (lane, c, &value))
        band->last[c] = MAX (value, 0);
    }
  return band;
}

/**
 * tide_job_lane_query:
 * @process_ids: (array length=n_processes): the processes, bottom first
 * @labels: (array length=n_processes): what each band is called
 *
 * Each process's PSS (or RSS) over [begin_ns, end_ns) in @n_columns
 * columns, and the peak of their sum.
 */
TideJobLane *
tide_job_lane_query (TideTrace          *trace,
                     const gint64       *process_ids,
                     const char * const *labels,
                     guint               n_processes,
                     gint64              begin_ns,
                     gint64              end_ns,
                     guint               n_columns,
                     GError            **error)
{
  g_autoptr(TideJobLane) lane = g_new0 (TideJobLane, 1);

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  g_return_val_if_fail (n_columns > 0, NULL);
  n_processes = MIN (n_processes, TIDE_JOB_LANE_MAX_BANDS);
  lane->begin_ns = begin_ns;
  lane->end_ns = end_ns;
  lane->n_columns = n_columns;
  lane->bands = g_ptr_array_new_with_free_func ((GDestroyNotify) band_free);
  lane->by_pss = n_processes > 0;
  for (guint i = 0; i < n_processes; i++)
    {
      gboolean by_pss;
      TideJobBand *band = band_new (trace, process_ids[i], labels[i], begin_ns, end_ns,
                                    n_columns, &by_pss, error);
      if (band == NULL)
        return NULL;
      lane->by_pss &= by_pss;
      g_ptr_array_add (lane->bands, band);
    }
  for (guint c = 0; c < n_columns; c++)
    lane->peak = MAX (lane->peak, tide_job_lane_total_below (lane, lane->bands->len, c));
  return g_steal_pointer (&lane);
}

/* "python3 train.py" of "/usr/bin/python3 examples/train.py --lr 1": the
 * program and its first argument, without their folders. */
static char *
short_command (const char *cmdline,
               const char *exe)
{
  const char *line = cmdline != NULL && *cmdline != '\0' ? cmdline : exe != NULL ? exe : "";
  g_auto(GStrv) words = g_strsplit (line, " ", 3);
  g_autofree char *program = words[0] != NULL ? g_path_get_basename (words[0]) : g_strdup ("?");
  g_autofree char *first = words[0] != NULL && words[1] != NULL ? g_path_get_basename (words[1])
                                                                : NULL;

  return first != NULL ? g_strdup_printf ("%s %s", program, first) : g_steal_pointer (&program);
}

static TideJobProcess *
job_process_new (sqlite3_stmt *stmt)
{
  TideJobProcess *p = g_new0 (TideJobProcess, 1);
  g_autofree char *command = short_command ((const char *) sqlite3_column_text (stmt, 3),
                                            (const char *) sqlite3_column_text (stmt, 2));

  p->process_id = sqlite3_column_int64 (stmt, 0);
  p->pid = sqlite3_column_int64 (stmt, 1);
  if (sqlite3_column_type (stmt, 4) == SQLITE_INTEGER)
    p->role = g_strdup_printf ("rank %" G_GINT64_FORMAT, (gint64) sqlite3_column_int64 (stmt, 4));
  else
    p->role = g_strdup_printf ("pid %" G_GINT64_FORMAT, p->pid);
  p->label = g_strdup_printf ("%s · %s", p->role, command);
  return p;
}

void
tide_job_process_free (TideJobProcess *process)
{
  g_free (process->role);
  g_free (process->label);
  g_free (process);
}

/* The processes of the trace in the order they started; with
 * @only_counted, only those that sampled their RSS. */
static GPtrArray *
list_processes (TideTrace  *trace,
                gboolean    only_counted,
                GError    **error)
{
  g_autoptr(GPtrArray) processes = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_job_process_free);
  sqlite3 *db = _tide_trace_get_db (trace);
  sqlite3_stmt *stmt;
  int rc;

  stmt = tide_sqlite_prepare (db, "SELECT id, pid, exe, cmdline, rank FROM processes p"
                                  " WHERE NOT ?2 OR EXISTS (SELECT 1 FROM counters c"
                                  "  WHERE c.process_id = p.id AND c.counter = ?1)"
                                  " ORDER BY id LIMIT ?3",
                              "cannot list the job's processes", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int (stmt, 1, TIDE_COUNTER_RSS);
  sqlite3_bind_int (stmt, 2, only_counted);
  sqlite3_bind_int (stmt, 3, only_counted ? TIDE_JOB_LANE_MAX_BANDS : TIDE_JOB_MAX_PROCESSES);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (processes, job_process_new (stmt));
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    {
      tide_sqlite_set_error (error, db, "cannot list the job's processes");
      return NULL;
    }
  return g_steal_pointer (&processes);
}

/**
 * tide_job_processes:
 * @suspects: (nullable): tide_report_suspects(), to count each process's
 *
 * Every process of the job, in the order they started.
 *
 * Returns: (element-type TideJobProcess): the processes, or %NULL on error
 */
GPtrArray *
tide_job_processes (TideTrace  *trace,
                    GPtrArray  *suspects,
                    GError    **error)
{
  GPtrArray *processes = list_processes (trace, FALSE, error);

  for (guint i = 0; processes != NULL && suspects != NULL && i < suspects->len; i++)
    {
      const TideGroup *suspect = g_ptr_array_index (suspects, i);

      for (guint j = 0; j < processes->len; j++)
        {
          TideJobProcess *p = g_ptr_array_index (processes, j);

          if (p->process_id == suspect->process_id)
            p->n_suspects++;
        }
    }
  return processes;
}

/**
 * tide_job_lane_query_job:
 *
 * tide_job_lane_query() for every process of the trace that sampled its
 * RSS, in the order they started, each labelled by its role.
 */
TideJobLane *
tide_job_lane_query_job (TideTrace  *trace,
                         gint64      begin_ns,
                         gint64      end_ns,
                         guint       n_columns,
                         GError    **error)
{
  g_autoptr(GPtrArray) processes = list_processes (trace, TRUE, error);
  g_autofree gint64 *ids = NULL;
  g_autofree const char **labels = NULL;

  if (processes == NULL)
    return NULL;
  ids = g_new0 (gint64, processes->len + 1);
  labels = g_new0 (const char *, processes->len + 1);
  for (guint i = 0; i < processes->len; i++)
    {
      const TideJobProcess *p = g_ptr_array_index (processes, i);

      ids[i] = p->process_id;
      labels[i] = p->role;
    }
  return tide_job_lane_query (trace, ids, labels, processes->len, begin_ns, end_ns, n_columns,
                              error);
}

/* The sum of the bands under @band at @column (saturating: the values
 * come from a file). */
gint64
tide_job_lane_total_below (const TideJobLane *lane,
                           guint              band,
                           guint              column)
{
  gint64 total = 0;

  g_return_val_if_fail (column < lane->n_columns, 0);
  for (guint i = 0; i < band && i < lane->bands->len; i++)
    {
      const TideJobBand *b = g_ptr_array_index (lane->bands, i);

      if (b->last[column] > G_MAXINT64 - total)
        return G_MAXINT64;
      total += b->last[column];
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
  if (column >= lane->n_columns || value < 0)
    return 0;
  for (guint i = 0; i < lane->bands->len; i++)
    if (value < tide_job_lane_total_below (lane, i + 1, column))
      return ((const TideJobBand *) g_ptr_array_index (lane->bands, i))->process_id;
  return 0;
}

/* The first column of the first row of @sql with @arg bound to ?1, or 0
 * when there is none. */
static gint64
query_id (TideTrace   *trace,
          const char  *sql,
          gint64       arg,
          GError     **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, "cannot choose a process", error);
  gint64 id = 0;
  int rc;

  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, arg);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    id = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    {
      tide_sqlite_set_error (error, db, "cannot choose a process");
      return -1;
    }
  return id;
}

/**
 * tide_job_default_process:
 *
 * The process a person wants to see first: the one with the fastest
 * growing leak suspect, else the one whose RSS grew most from its first
 * sample to its last, else the first process.  The app opens on it, and
 * export draws it.
 *
 * Returns: its id, 0 for a trace without processes, -1 on error
 */
gint64
tide_job_default_process (TideTrace  *trace,
                          GError    **error)
{
  g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, error);
  gint64 id;

  if (suspects == NULL)
    return -1;
  if (suspects->len > 0)
    return ((TideGroup *) g_ptr_array_index (suspects, 0))->process_id;
  /* counters_by_time makes each first and last sample one index seek. */
  id = query_id (trace,
                 "SELECT id FROM processes p ORDER BY"
                 " coalesce ((SELECT value FROM counters c WHERE c.process_id = p.id"
                 "   AND c.counter = ?1 AND c.device = -1 ORDER BY ts_ns DESC LIMIT 1)"
                 " - (SELECT value FROM counters c WHERE c.process_id = p.id"
                 "   AND c.counter = ?1 AND c.device = -1 ORDER BY ts_ns LIMIT 1), 0) DESC, id"
                 " LIMIT 1", TIDE_COUNTER_RSS, error);
  return id;
}

/**
 * tide_job_find_process:
 * @spec: "PID" or "rank:N"
 *
 * The process that @spec names, as `--process` takes it: by pid (its last
 * image, when it exec'd), or by distributed rank (the first process of
 * that rank: the rank itself, not its workers).
 *
 * Returns: its id, or -1 with @error set
 */
gint64
tide_job_find_process (TideTrace   *trace,
                       const char  *spec,
                       GError     **error)
{
  gboolean by_rank = g_str_has_prefix (spec, "rank:");
  const char *number = by_rank ? spec + 5 : spec;
  char *end = NULL;
  gint64 value, id;

  value = g_ascii_strtoll (number, &end, 10);
  if (*number == '\0' || *end != '\0' || value < 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--process takes a pid or rank:N, not \"%s\"", spec);
      return -1;
    }
  id = query_id (trace, by_rank ? "SELECT id FROM processes WHERE rank = ?1 ORDER BY id LIMIT 1"
                                : "SELECT id FROM processes WHERE pid = ?1 ORDER BY id DESC LIMIT 1",
                 value, error);
  if (id == 0)
    g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_FOUND,
                 "the trace has no process %s", spec);
  return id > 0 ? id : -1;
}
