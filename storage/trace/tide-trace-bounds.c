/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-trace-bounds.h"

#include "tide-schema.h"
#include "tide-storage-error.h"

#define MAX_START_NS (G_GINT64_CONSTANT (1) << 62)

/* The time columns that a view or a report turns into positions, each read
 * as its (min, max): one pass over each table, or, where an index orders
 * the table's rows by process and time (a finished trace has both), two
 * searches per series, so that opening a big trace reads a few pages.
 * Every row that a query shows belongs to a series of a known process
 * (and counter), so the searches see every time that will be drawn. */
static const struct
{
  const char *column;
  const char *sql;
  const char *index;          /* NULL, or an index that makes ... */
  const char *indexed_sql;    /* ... this the same answer, cheaper */
  gboolean    ends_rows;      /* its max counts towards the last row */
} time_columns[] = {
  { "counters.ts_ns", "SELECT min (ts_ns), max (ts_ns) FROM counters", "counters_by_time",
    "SELECT min (lo), max (hi) FROM (SELECT"
    " (SELECT min (c.ts_ns) FROM counters c WHERE c.process_id = p.id AND c.counter = k.id) lo,"
    " (SELECT max (c.ts_ns) FROM counters c WHERE c.process_id = p.id AND c.counter = k.id) hi"
    " FROM processes p, counter_kinds k)", TRUE },
  { "processes.start_ns", "SELECT min (start_ns), max (start_ns) FROM processes", NULL, NULL,
    FALSE },
  { "processes.end_ns", "SELECT min (end_ns), max (end_ns) FROM processes", NULL, NULL, TRUE },
  { "steps.start_ns", "SELECT min (start_ns), max (start_ns) FROM steps", NULL, NULL, FALSE },
  { "steps.end_ns", "SELECT min (end_ns), max (end_ns) FROM steps", NULL, NULL, TRUE },
  { "transfers.start_ns", "SELECT min (start_ns), max (start_ns) FROM transfers",
    "transfers_by_time",
    "SELECT min (lo), max (hi) FROM (SELECT"
    " (SELECT min (t.start_ns) FROM transfers t WHERE t.process_id = p.id) lo,"
    " (SELECT max (t.start_ns) FROM transfers t WHERE t.process_id = p.id) hi"
    " FROM processes p)", FALSE },
};

/* A value as the error message shows it: on one line, and short. */
static char *
describe_value (sqlite3_stmt *stmt,
                int           column)
{
  switch (sqlite3_column_type (stmt, column))
    {
    case SQLITE_INTEGER:
      return g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) sqlite3_column_int64 (stmt, column));
    case SQLITE_FLOAT:
      return g_strdup ((const char *) sqlite3_column_text (stmt, column));
    case SQLITE_TEXT:
      {
        g_autofree char *text = g_strndup ((const char *) sqlite3_column_text (stmt, column), 40);
        g_autofree char *escaped = g_strescape (text, NULL);
        return g_strdup_printf ("the text \"%s\"", escaped);
      }
    case SQLITE_BLOB:
      return g_strdup_printf ("a blob of %d bytes", sqlite3_column_bytes (stmt, column));
    default:
      return g_strdup ("nothing");
    }
}

static void
set_damaged (GError     **error,
             const char  *column,
             const char  *value,
             const char  *why)
{
  g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_DAMAGED,
               "the trace is damaged: %s holds %s, %s", column, value, why);
}

/* *@found: whether the statement gave a value (not NULL) in @column. */
static gboolean
read_time (sqlite3_stmt  *stmt,
           int            column,
           const char    *name,
           gboolean      *found,
           gint64        *value,
           GError       **error)
{
  int type = sqlite3_column_type (stmt, column);

  *found = type != SQLITE_NULL;
  *value = sqlite3_column_int64 (stmt, column);
  if (type == SQLITE_NULL || type == SQLITE_INTEGER)
    return TRUE;
  {
    g_autofree char *shown = describe_value (stmt, column);
    set_damaged (error, name, shown, "not a time in nanoseconds");
  }
  return FALSE;
}

static gboolean
check_in_span (const char  *name,
               gint64       t,
               gint64       start_ns,
               GError     **error)
{
  g_autofree char *shown = NULL;
  g_autofree char *why = NULL;

  if (t >= start_ns - TIDE_TRACE_MAX_SPAN_NS && t <= start_ns + TIDE_TRACE_MAX_SPAN_NS)
    return TRUE;
  shown = g_strdup_printf ("%" G_GINT64_FORMAT, t);
  why = g_strdup_printf ("more than %d days from the trace's start (%" G_GINT64_FORMAT ")",
                         TIDE_TRACE_MAX_SPAN_DAYS, start_ns);
  set_damaged (error, name, shown, why);
  return FALSE;
}

/* Runs a one-row statement and hands its row to @check. */
typedef gboolean (*RowCheck) (sqlite3_stmt *stmt, gpointer data, GError **error);

static gboolean
query_row (sqlite3     *db,
           const char  *sql,
           const char  *key,
           RowCheck     check,
           gpointer     data,
           GError     **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, "cannot read the trace", error);
  gboolean ok;
  int rc;

  if (stmt == NULL)
    return FALSE;
  if (key != NULL)
    sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return tide_sqlite_finish (db, stmt, rc, "cannot read the trace", error);
  ok = check (rc == SQLITE_ROW ? stmt : NULL, data, error);
  sqlite3_finalize (stmt);
  return ok;
}

typedef struct
{
  const char *name;
  gboolean    found;
  gint64      value;
} MetaTime;

static gboolean
meta_time_check (sqlite3_stmt  *stmt,
                 gpointer       data,
                 GError       **error)
{
  MetaTime *meta = data;

  meta->found = FALSE;
  return stmt == NULL || read_time (stmt, 0, meta->name, &meta->found, &meta->value, error);
}

typedef struct
{
  const char *name;
  gboolean    found;
  gint64      min;
  gint64      max;
} ColumnSpan;

static gboolean
column_span_check (sqlite3_stmt  *stmt,
                   gpointer       data,
                   GError       **error)
{
  ColumnSpan *span = data;
  gboolean found_max;

  span->found = FALSE;
  return stmt == NULL ||
         (read_time (stmt, 0, span->name, &span->found, &span->min, error) &&
          read_time (stmt, 1, span->name, &found_max, &span->max, error));
}

static gboolean
process_id_check (sqlite3_stmt  *stmt,
                  gpointer       data,
                  GError       **error)
{
  g_autofree char *shown = NULL;

  if (stmt == NULL)
    return TRUE;
  shown = describe_value (stmt, 0);
  set_damaged (error, "processes.id", shown, "not a process id");
  return FALSE;
}

gboolean
tide_trace_bounds_check_process_ids (sqlite3  *db,
                                     GError  **error)
{
  return query_row (db,
                    "SELECT id FROM processes WHERE typeof (id) != 'integer' OR id < 1 LIMIT 1",
                    NULL, process_id_check, NULL, error);
}

static gboolean
load_start (sqlite3  *db,
            gint64   *start_ns,
            GError  **error)
{
  MetaTime meta = { "meta start_ns" };
  ColumnSpan first = { "processes.start_ns" };

  if (!query_row (db, "SELECT value FROM meta WHERE key = ?1", "start_ns", meta_time_check,
                  &meta, error))
    return FALSE;
  if (!meta.found &&
      !query_row (db, "SELECT min (start_ns), max (start_ns) FROM processes", NULL,
                  column_span_check, &first, error))
    return FALSE;
  *start_ns = meta.found ? meta.value : first.found ? first.min : 0;
  if (*start_ns < -MAX_START_NS || *start_ns > MAX_START_NS)
    {
      g_autofree char *shown = g_strdup_printf ("%" G_GINT64_FORMAT, *start_ns);
      set_damaged (error, meta.found ? meta.name : first.name, shown,
                   "too far from 0 to be a time in nanoseconds");
      return FALSE;
    }
  return TRUE;
}

/**
 * tide_trace_bounds_load:
 * @start_ns: (out): the trace's start
 * @end_ns: (out): its end, clamped to what its rows cover
 *
 * Returns: %FALSE with @error set when a time in the trace cannot be true
 */
gboolean
tide_trace_bounds_load (sqlite3  *db,
                        gint64   *start_ns,
                        gint64   *end_ns,
                        GError  **error)
{
  MetaTime meta_end = { "meta end_ns" };
  gint64 last_row;

  if (!load_start (db, start_ns, error))
    return FALSE;
  last_row = *start_ns;
  for (guint i = 0; i < G_N_ELEMENTS (time_columns); i++)
    {
      ColumnSpan span = { time_columns[i].column };
      const char *sql = time_columns[i].index != NULL && tide_sqlite_has (db, "index", time_columns[i].index)
                        ? time_columns[i].indexed_sql : time_columns[i].sql;

      if (!query_row (db, sql, NULL, column_span_check, &span, error))
        return FALSE;
      if (!span.found)
        continue;
      if (!check_in_span (span.name, span.min, *start_ns, error) ||
          !check_in_span (span.name, span.max, *start_ns, error))
        return FALSE;
      if (time_columns[i].ends_rows)
        last_row = MAX (last_row, span.max);
    }
  if (!query_row (db, "SELECT value FROM meta WHERE key = ?1", "end_ns", meta_time_check,
                  &meta_end, error))
    return FALSE;
  *end_ns = last_row;
  if (meta_end.found)
    *end_ns = MAX (last_row, MIN (meta_end.value, last_row + TIDE_TRACE_END_SLACK_NS));
  return TRUE;
}
