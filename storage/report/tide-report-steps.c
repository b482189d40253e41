/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The steps report: one row per step, with the device columns.
 */
#include "config.h"

#include <sqlite3.h>

#include "tide-report-private.h"
#include "tide-saturate.h"


void
tide_step_row_free (TideStepRow *row)
{
  if (row == NULL)
    return;
  g_free (row->label);
  tide_process_label_clear (&row->process);
  g_clear_pointer (&row->devices, g_array_unref);
  g_clear_pointer (&row->kin_started, g_ptr_array_unref);
  g_clear_pointer (&row->kin_ended, g_ptr_array_unref);
  g_clear_pointer (&row->kin_ended_after, g_ptr_array_unref);
  g_free (row);
}

/* "step 3", or "step 3 LABEL" for a step that was given a label. */
char *
tide_step_row_describe (const TideStepRow *row)
{
  if (row->label == NULL || row->label[0] == '\0')
    return g_strdup_printf ("step %d", row->number);
  return g_strdup_printf ("step %d %s", row->number, row->label);
}

/* ---- steps: device columns -------------------------------------------------- */

static gint64
step_key (gint64 process_id,
          gint   number)
{
  return (process_id << 24) | number;
}

static GHashTable *
index_rows (GPtrArray *rows)
{
  GHashTable *index = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *row = g_ptr_array_index (rows, i);
      gint64 *key = g_new (gint64, 1);

      *key = step_key (row->process.id, row->number);
      g_hash_table_insert (index, key, row);
    }
  return index;
}

/* Bytes copied each way by the copies that started within each step. */
static gboolean
add_transfers (TideTrace  *trace,
               GPtrArray  *rows,
               GError    **error)
{
  g_autoptr(GHashTable) index = index_rows (rows);
  sqlite3_stmt *stmt;
  int rc;

  stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                  "SELECT s.process_id, s.number, t.direction, sum (t.bytes)"
                  " FROM steps s JOIN transfers t ON t.process_id = s.process_id"
                  "  AND t.start_ns >= s.start_ns AND t.start_ns < s.end_ns"
                  " GROUP BY s.id, t.direction", TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 key = step_key (sqlite3_column_int64 (stmt, 0), sqlite3_column_int (stmt, 1));
      TideStepRow *row = g_hash_table_lookup (index, &key);
      int direction = sqlite3_column_int (stmt, 2);

      if (row != NULL && direction == TIDE_TRANSFER_TO_DEVICE)
        row->h2d_bytes = sqlite3_column_int64 (stmt, 3);
      else if (row != NULL && direction == TIDE_TRANSFER_TO_HOST)
        row->d2h_bytes = sqlite3_column_int64 (stmt, 3);
    }
  return tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error);
}

typedef struct
{
  gint64 process_id;
  gint   number;
  gint64 stack_id;
  gint64 scope_id;
  gint   device;
  gint64 live_bytes;
} DeviceSeries;

static void
read_device_series (sqlite3_stmt *stmt,
                    gpointer      row,
                    gpointer      user_data)
{
  *(DeviceSeries *) row = (DeviceSeries) {
    sqlite3_column_int64 (stmt, 0), sqlite3_column_int (stmt, 1),
    sqlite3_column_int64 (stmt, 2), sqlite3_column_int64 (stmt, 3),
    sqlite3_column_int (stmt, 4), sqlite3_column_int64 (stmt, 5),
  };
}

static GArray *
load_device_series (TideTrace  *trace,
                    GError    **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  sqlite3_stmt *stmt = tide_sqlite_prepare (db,
                  "SELECT s.process_id, s.number, ss.stack_id, ss.scope_id, ss.device,"
                  "  ss.live_bytes FROM step_series ss JOIN steps s ON s.id = ss.step_id"
                  /* Devices past those shown are left out here, in SQL, where a
                   * value past what an int holds cannot wrap into an index. */
                  " WHERE ss.device BETWEEN 0 AND " G_STRINGIFY (TIDE_REPORT_MAX_DEVICES) " - 1"
                  " ORDER BY s.process_id, s.number", TIDE_REPORT_WHAT, error);

  return tide_sqlite_read_rows (db, stmt, sizeof (DeviceSeries), read_device_series, NULL,
                                TIDE_REPORT_WHAT, error);
}

/* Sum of the latest value of each (stack, scope) series of one device. */
typedef struct
{
  GHashTable *last;     /* "stack:scope:device" -> gint64* */
  gint64      totals[TIDE_REPORT_MAX_DEVICES];
} DeviceSweep;

static void
device_sweep_apply (DeviceSweep        *sweep,
                    const DeviceSeries *d)
{
  char *key = g_strdup_printf ("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ":%d",
                               d->stack_id, d->scope_id, d->device);
  gint64 *last = g_hash_table_lookup (sweep->last, key);

  if (last == NULL)
    {
      last = g_new0 (gint64, 1);
      g_hash_table_insert (sweep->last, key, last);
    }
  else
    g_free (key);
  sweep->totals[d->device] = tide_sat_add (sweep->totals[d->device],
                                          tide_sat_sub (d->live_bytes, *last));
  *last = d->live_bytes;
}

/* Live device bytes per device at each step end.  step_series holds a
 * (stack, scope, device) value only at the steps where it changed. */
static gboolean
add_device_ends (TideTrace  *trace,
                 GPtrArray  *rows,
                 GError    **error)
{
  g_autoptr(GArray) series = load_device_series (trace, error);
  gboolean present[TIDE_REPORT_MAX_DEVICES] = { FALSE };
  DeviceSweep sweep = { NULL };
  gint64 process_id = -1;
  guint at = 0;

  if (series == NULL)
    return FALSE;
  for (guint i = 0; i < series->len; i++)
    {
      gint device = g_array_index (series, DeviceSeries, i).device;
      if (device < TIDE_REPORT_MAX_DEVICES)
        present[device] = TRUE;
    }
  sweep.last = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint r = 0; r < rows->len; r++)
    {
      TideStepRow *row = g_ptr_array_index (rows, r);
      gint64 before[TIDE_REPORT_MAX_DEVICES];

      if (row->process.id != process_id)
        {
          process_id = row->process.id;
          g_hash_table_remove_all (sweep.last);
          memset (sweep.totals, 0, sizeof sweep.totals);
        }
      memcpy (before, sweep.totals, sizeof before);
      for (; at < series->len; at++)
        {
          const DeviceSeries *d = &g_array_index (series, DeviceSeries, at);
          if (d->process_id > row->process.id
              || (d->process_id == row->process.id && d->number > row->number))
            break;
          if (d->process_id == row->process.id && d->device < TIDE_REPORT_MAX_DEVICES)
            device_sweep_apply (&sweep, d);
        }
      for (gint dev = 0; dev < TIDE_REPORT_MAX_DEVICES; dev++)
        if (present[dev])
          {
            TideStepDevice sd = { dev, sweep.totals[dev],
                                  tide_sat_sub (sweep.totals[dev], before[dev]) };
            g_array_append_val (row->devices, sd);
          }
    }
  g_hash_table_unref (sweep.last);
  return TRUE;
}

/* A step's number, label, start, duration and RSS at its end, from five
 * columns at @col on: s.number, s.label, s.start_ns, s.end_ns, the RSS.
 * A process's own steps and the steps it borrows read them alike. */
void
_tide_step_row_read_span (TideStepRow  *row,
                          TideTrace    *trace,
                          sqlite3_stmt *stmt,
                          int           col)
{
  row->number = sqlite3_column_int (stmt, col);
  row->label = _tide_report_column_dup (stmt, col + 1);
  row->start_ns = sqlite3_column_int64 (stmt, col + 2) - tide_trace_get_start_ns (trace);
  row->duration_ns = sqlite3_column_int64 (stmt, col + 3) - sqlite3_column_int64 (stmt, col + 2);
  row->has_rss = sqlite3_column_type (stmt, col + 4) != SQLITE_NULL;
  row->rss_end = sqlite3_column_int64 (stmt, col + 4);
}

GPtrArray *
tide_report_steps (TideTrace  *trace,
                   GError    **error)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_step_row_free);
  TideStepRow *prev = NULL;
  sqlite3_stmt *stmt;
  int rc;

  stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                  "SELECT s.process_id, p.pid, s.number, s.label, s.start_ns, s.end_ns,"
                  "  st.rss_end, st.heap_live_end, st.mapped_live_end, st.device_live_end,"
                  "  st.retained_bytes, st.retained_count, st.resident_explained,"
                  "  (SELECT c.value FROM counters c WHERE c.process_id = s.process_id"
                  "     AND c.counter = " TIDE_SQL_COUNTER_RSS " AND c.ts_ns <= s.start_ns ORDER BY c.ts_ns DESC LIMIT 1)"
                  " FROM steps s JOIN processes p ON p.id = s.process_id"
                  " JOIN step_stats st ON st.step_id = s.id"
                  " ORDER BY s.process_id, s.number", TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return NULL;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideStepRow *row = g_new0 (TideStepRow, 1);
      gboolean first_of_process;

      row->process.id = sqlite3_column_int64 (stmt, 0);
      row->process.pid = sqlite3_column_int64 (stmt, 1);
      _tide_step_row_read_span (row, trace, stmt, 2);
      row->heap_end = sqlite3_column_int64 (stmt, 7);
      row->mapped_end = sqlite3_column_int64 (stmt, 8);
      row->device_end = sqlite3_column_int64 (stmt, 9);
      row->retained_bytes = sqlite3_column_int64 (stmt, 10);
      row->retained_count = sqlite3_column_int64 (stmt, 11);
      row->has_resident = sqlite3_column_type (stmt, 12) != SQLITE_NULL;
      row->resident_explained = sqlite3_column_int64 (stmt, 12);
      row->unattributed = tide_sat_sub (row->rss_end, row->resident_explained);

      /* Changes are against the previous step, or the process start. */
      first_of_process = prev == NULL || prev->process.id != row->process.id;
      row->rss_delta = tide_sat_sub (row->rss_end, first_of_process
                                                   ? sqlite3_column_int64 (stmt, 13)
                                                   : prev->rss_end);
      row->heap_delta = tide_sat_sub (row->heap_end, first_of_process ? 0 : prev->heap_end);
      row->device_delta = tide_sat_sub (row->device_end, first_of_process ? 0 : prev->device_end);
      row->devices = g_array_new (FALSE, TRUE, sizeof (TideStepDevice));
      g_ptr_array_add (rows, row);
      prev = row;
    }
  if (!tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error))
    return NULL;
  if (!add_transfers (trace, rows, error) || !add_device_ends (trace, rows, error) ||
      !_tide_report_add_classes (trace, rows, error) ||
      !_tide_report_label_steps (trace, rows, error))
    return NULL;
  return g_steal_pointer (&rows);
}
