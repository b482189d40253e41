/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The span and series queries of the timeline: the step bands (with the
 * leak flag that colours them), the transfer marks and a suspect's live
 * bytes step by step.  Unlike the lanes (tide-timeline-lanes.c) they read
 * one row per step or transfer, not LOD buckets, and need no cache: a
 * view reads them once per trace and process.
 */
#include "config.h"

#include "tide-timeline-series.h"

#include "tide-report.h"
#include "tide-saturate.h"
#include "tide-sqlite.h"
#include "tide-trace-private.h"

#define WHAT "cannot query the timeline"

/* Each query here reads the rows of process ?1, or of every process when
 * it is 0 (the transfers, the steps). */
static sqlite3_stmt *
prepare_for_process (TideTrace   *trace,
                     const char  *sql,
                     gint64       process_id,
                     GError     **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace), sql, WHAT, error);

  if (stmt != NULL)
    sqlite3_bind_int64 (stmt, 1, process_id);
  return stmt;
}

/* @rows once @stmt ended well, after its last step returned @rc. */
static GArray *
finish_rows (TideTrace     *trace,
             sqlite3_stmt  *stmt,
             int            rc,
             GArray       **rows,
             GError       **error)
{
  if (!tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, WHAT, error))
    return NULL;
  return g_steal_pointer (rows);
}

/* A step is a leak step when some leak suspect of its process has started
 * growing by then and the step kept bytes: the bands of the steps that
 * grow the leak stand out, the steps before it do not. */
static GHashTable *
load_growth_starts (TideTrace  *trace,
                    GError    **error)
{
  g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, error);
  GHashTable *starts;

  if (suspects == NULL)
    return NULL;
  starts = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < suspects->len; i++)
    {
      const TideGroup *g = g_ptr_array_index (suspects, i);
      gpointer old = g_hash_table_lookup (starts, &g->process.id);

      if (g->growth_step <= 0)
        continue;
      if (old == NULL || GPOINTER_TO_INT (old) > g->growth_step)
        g_hash_table_insert (starts, g_memdup2 (&g->process.id, sizeof (gint64)),
                             GINT_TO_POINTER (g->growth_step));
    }
  return starts;
}

/* What tide_timeline_steps() reads a step's row with. */
typedef struct
{
  gint64      t0;
  GHashTable *growth_starts;   /* from load_growth_starts() */
} SpanReader;

static void
read_span (sqlite3_stmt *stmt,
           gpointer      row,
           gpointer      user_data)
{
  const SpanReader *reader = user_data;
  TideStepSpan *span = row;
  gint start;

  span->process_id = sqlite3_column_int64 (stmt, 0);
  span->number = sqlite3_column_int (stmt, 1);
  span->start_ns = sqlite3_column_int64 (stmt, 2) - reader->t0;
  span->end_ns = sqlite3_column_int64 (stmt, 3) - reader->t0;
  span->retained_bytes = sqlite3_column_int64 (stmt, 4);
  start = GPOINTER_TO_INT (g_hash_table_lookup (reader->growth_starts, &span->process_id));
  span->leak = start > 0 && span->number >= start && span->retained_bytes > 0;
}

/**
 * tide_timeline_steps:
 * @process_id: a processes.id, or 0 for every process
 *
 * Returns: (transfer full) (element-type TideStepSpan): steps ordered by start
 */
GArray *
tide_timeline_steps (TideTrace  *trace,
                     gint64      process_id,
                     GError    **error)
{
  g_autoptr(GHashTable) starts = NULL;
  SpanReader reader;
  sqlite3_stmt *stmt;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  if ((starts = load_growth_starts (trace, error)) == NULL)
    return NULL;
  reader = (SpanReader) { tide_trace_get_start_ns (trace), starts };
  stmt = prepare_for_process (trace,
                              "SELECT s.process_id, s.number, s.start_ns, s.end_ns,"
                              "  coalesce (st.retained_bytes, 0)"
                              " FROM steps s LEFT JOIN step_stats st ON st.step_id = s.id"
                              " WHERE ?1 = 0 OR s.process_id = ?1"
                              " ORDER BY s.start_ns, s.process_id", process_id, error);
  return tide_sqlite_read_rows (_tide_trace_get_db (trace), stmt, sizeof (TideStepSpan),
                                read_span, &reader, WHAT, error);
}

/* step_series holds a (stack, scope, device) value only in the steps where
 * it changed: each scope's value is carried forward and the group's value
 * is their sum. */
static void
series_apply (GHashTable   *last,
              sqlite3_stmt *stmt,
              gint64       *sum)
{
  gint64 scope = sqlite3_column_int64 (stmt, 2);
  gint64 value = sqlite3_column_int64 (stmt, 3);
  gpointer old = NULL;

  if (g_hash_table_lookup_extended (last, &scope, NULL, &old))
    *sum = tide_sat_sub (*sum, *(gint64 *) old);
  *sum = tide_sat_add (*sum, value);
  g_hash_table_insert (last, g_memdup2 (&scope, sizeof scope), g_memdup2 (&value, sizeof value));
}

/**
 * tide_timeline_group_series:
 * @stack_id: the group's stack, or 0 for a group by scope
 * @scope_id: with @stack_id 0, the group's scope (0: no scope)
 *
 * The live bytes of one tide_report_suspects() group at every step end of
 * @process_id, as step_series records them.
 *
 * Returns: (transfer full) (element-type TideSeriesPoint): by step number
 */
GArray *
tide_timeline_group_series (TideTrace  *trace,
                            gint64      process_id,
                            gint64      stack_id,
                            gint64      scope_id,
                            gint        device,
                            GError    **error)
{
  g_autoptr(GArray) points = g_array_new (FALSE, FALSE, sizeof (TideSeriesPoint));
  g_autoptr(GHashTable) last = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  TideSeriesPoint point = { 0 };
  sqlite3_stmt *stmt;
  gint64 t0, sum = 0;
  int rc;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  t0 = tide_trace_get_start_ns (trace);
  stmt = prepare_for_process (trace,
                              "SELECT s.number, s.end_ns, coalesce (ss.scope_id, 0),"
                              "  ss.live_bytes, s.start_ns"
                              " FROM steps s LEFT JOIN step_series ss ON ss.step_id = s.id"
                              "  AND ss.device = ?4 AND (CASE WHEN ?2 != 0 THEN ss.stack_id = ?2"
                              "   ELSE coalesce (ss.scope_id, 0) = ?3 END)"
                              " WHERE s.process_id = ?1 ORDER BY s.number", process_id, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 2, stack_id);
  sqlite3_bind_int64 (stmt, 3, scope_id);
  sqlite3_bind_int (stmt, 4, device);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint number = sqlite3_column_int (stmt, 0);
      TideSeriesPoint *previous = NULL;

      if (points->len > 0)
        previous = &g_array_index (points, TideSeriesPoint, points->len - 1);
      if (previous == NULL || previous->number != number)
        {
          point.number = number;
          point.end_ns = sqlite3_column_int64 (stmt, 1) - t0;
          point.start_ns = sqlite3_column_int64 (stmt, 4) - t0;
          g_array_append_val (points, point);
        }
      if (sqlite3_column_type (stmt, 3) != SQLITE_NULL)
        series_apply (last, stmt, &sum);
      g_array_index (points, TideSeriesPoint, points->len - 1).live_bytes = sum;
    }
  return finish_rows (trace, stmt, rc, &points, error);
}

static void
read_transfer (sqlite3_stmt *stmt,
               gpointer      row,
               gpointer      user_data)
{
  const gint64 *t0 = user_data;

  *(TideTransferMark *) row = (TideTransferMark) {
    .process_id = sqlite3_column_int64 (stmt, 0),
    .direction = sqlite3_column_int (stmt, 1),
    .device = sqlite3_column_int (stmt, 2),
    .bytes = sqlite3_column_int64 (stmt, 3),
    .start_ns = sqlite3_column_int64 (stmt, 4) - *t0,
    .duration_ns = sqlite3_column_int64 (stmt, 5),
  };
}

/**
 * tide_timeline_transfers:
 *
 * Returns: (transfer full) (element-type TideTransferMark): ordered by start
 */
GArray *
tide_timeline_transfers (TideTrace  *trace,
                         gint64      process_id,
                         GError    **error)
{
  sqlite3_stmt *stmt;
  gint64 t0;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  t0 = tide_trace_get_start_ns (trace);
  stmt = prepare_for_process (trace,
                              "SELECT process_id, direction, device, bytes, start_ns, duration_ns"
                              " FROM transfers WHERE ?1 = 0 OR process_id = ?1 ORDER BY start_ns",
                              process_id, error);
  return tide_sqlite_read_rows (_tide_trace_get_db (trace), stmt, sizeof (TideTransferMark),
                                read_transfer, &t0, WHAT, error);
}
