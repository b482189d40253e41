/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Resident memory in words.  A fork's child's copy-on-write is its last
 * cow_bytes value; its source is the parent's stack whose recorded blocks
 * cover the most of the copied pages at the recorder's last attribution
 * (cow_sources).
 */
#include "config.h"

#include "tide-processes.h"
#include "tide-report-format.h"
#include "tide-report-private.h"
#include "tide-report-rss.h"

void
tide_cow_row_free (TideCowRow *row)
{
  if (row == NULL)
    return;
  g_free (row->label);
  g_free (row->source);
  g_free (row);
}

/* "file:line (function)" of the stack's headline, else its description. */
static char *
describe_source (TideTrace  *trace,
                 gint64      stack_id,
                 GError    **error)
{
  g_autoptr(GPtrArray) frames = tide_report_frames (trace, stack_id, error);
  const TideFrame *f;
  gint i;

  if (frames == NULL)
    return NULL;
  i = tide_frames_find_headline (frames);
  if (i < 0)
    return g_strdup ("(a stack without frames)");
  f = g_ptr_array_index (frames, i);
  if (f->kind != TIDE_FRAME_MISSING && f->function != NULL && f->file != NULL && f->line > 0)
    {
      g_autofree char *file = g_path_get_basename (f->file);

      return g_strdup_printf ("%s:%d (%s)", file, f->line, f->function);
    }
  return tide_frame_describe (f);
}

/* The largest source of @row's last attribution. */
static gboolean
load_source (TideTrace   *trace,
             TideCowRow  *row,
             GError     **error)
{
  sqlite3_stmt *stmt = _tide_report_prepare (trace,
      "SELECT coalesce (stack_id, 0), bytes FROM cow_sources"
      " WHERE process_id = ?1 AND ts_ns = (SELECT max (ts_ns) FROM cow_sources"
      "                                    WHERE process_id = ?1)"
      "   AND stack_id IS NOT NULL"
      " ORDER BY bytes DESC, stack_id LIMIT 1", error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, row->process_id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      row->source_stack_id = sqlite3_column_int64 (stmt, 0);
      row->source_bytes = sqlite3_column_int64 (stmt, 1);
      rc = sqlite3_step (stmt);
    }
  if (!_tide_report_finish_rows (trace, stmt, rc, error))
    return FALSE;
  if (row->source_stack_id != 0 &&
      (row->source = describe_source (trace, row->source_stack_id, error)) == NULL)
    return FALSE;
  return TRUE;
}

static gboolean
load_copied (TideTrace  *trace,
             GPtrArray  *rows,
             GError    **error)
{
  sqlite3_stmt *stmt = _tide_report_prepare (trace,
      "SELECT p.id, p.pid, (SELECT c.value FROM counters c WHERE c.process_id = p.id"
      "                     AND c.counter = 24 ORDER BY c.ts_ns DESC LIMIT 1) AS copied"
      " FROM processes p WHERE copied > 0 ORDER BY p.id", error);
  int rc;

  G_STATIC_ASSERT (TIDE_COUNTER_COW_BYTES == 24);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideCowRow *row = g_new0 (TideCowRow, 1);

      row->process_id = sqlite3_column_int64 (stmt, 0);
      row->pid = sqlite3_column_int64 (stmt, 1);
      row->copied_bytes = sqlite3_column_int64 (stmt, 2);
      g_ptr_array_add (rows, row);
    }
  return _tide_report_finish_rows (trace, stmt, rc, error);
}

/**
 * tide_report_cow:
 *
 * Returns: (transfer full): a #TideCowRow per process that copied pages
 *   of its parent, in process order
 */
GPtrArray *
tide_report_cow (TideTrace  *trace,
                 GError    **error)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_cow_row_free);
  g_autoptr(GPtrArray) processes = NULL;
  sqlite3 *db = _tide_trace_get_db (trace);

  if (!tide_sqlite_has (db, "table", "cow_sources"))
    return g_steal_pointer (&rows);
  if ((processes = tide_trace_list_processes (trace, error)) == NULL ||
      !load_copied (trace, rows, error))
    return NULL;
  for (guint i = 0; i < rows->len; i++)
    {
      TideCowRow *row = g_ptr_array_index (rows, i);
      TideProcess *p = tide_processes_find (processes, row->process_id);

      row->label = g_strdup (p != NULL ? p->label : "?");
      if (!load_source (trace, row, error))
        return NULL;
    }
  return g_steal_pointer (&rows);
}

char *
tide_cow_row_describe (const TideCowRow *row)
{
  g_autofree char *copied = tide_format_delta (row->copied_bytes);

  if (row->source == NULL)
    return g_strdup_printf ("%s: %s copied on write, from pages of its parent that no recorded "
                            "block covers", row->label, copied);
  return g_strdup_printf ("%s: %s copied on write from the parent's blocks allocated at %s",
                          row->label, copied, row->source);
}

/* ---- the classes at each step's start and end ------------------------------ */

static const gint step_class_counters[TIDE_STEP_N_CLASSES] = {
  [TIDE_STEP_PSS] = TIDE_COUNTER_PSS,
  [TIDE_STEP_USS] = TIDE_COUNTER_USS,
  [TIDE_STEP_ANON] = TIDE_COUNTER_RSS_ANON,
  [TIDE_STEP_FILE] = TIDE_COUNTER_RSS_FILE,
  [TIDE_STEP_SHMEM] = TIDE_COUNTER_RSS_SHMEM,
  [TIDE_STEP_ALLOC_FREE] = TIDE_COUNTER_ALLOC_FREE,
  [TIDE_STEP_COW] = TIDE_COUNTER_COW_BYTES,
  [TIDE_STEP_MAPPED] = TIDE_COUNTER_MAPPED,
};

typedef struct
{
  gint64 ts_ns;
  gint64 value;
} Sample;

static GArray *
load_samples (TideTrace     *trace,
              sqlite3_stmt  *stmt,
              gint64         process_id,
              gint           counter,
              GError       **error)
{
  g_autoptr(GArray) samples = g_array_new (FALSE, FALSE, sizeof (Sample));
  int rc;

  sqlite3_reset (stmt);
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int (stmt, 2, counter);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      Sample s = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1) };

      g_array_append_val (samples, s);
    }
  if (rc != SQLITE_DONE)
    {
      _tide_report_finish_rows (trace, stmt, rc, error);
      return NULL;
    }
  return g_steal_pointer (&samples);
}

/* The last value sampled at or before @ts_ns, -1 when none was. */
static gint64
value_at (const GArray *samples,
          gint64        ts_ns)
{
  guint lo = 0, hi = samples->len;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;

      if (g_array_index (samples, Sample, mid).ts_ns <= ts_ns)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo > 0 ? g_array_index (samples, Sample, lo - 1).value : -1;
}

static gboolean
add_process_classes (TideTrace     *trace,
                     sqlite3_stmt  *stmt,
                     GPtrArray     *rows,
                     gint64         process_id,
                     GError       **error)
{
  gint64 origin = tide_trace_get_start_ns (trace);

  for (gint c = 0; c < TIDE_STEP_N_CLASSES; c++)
    {
      g_autoptr(GArray) samples = load_samples (trace, stmt, process_id, step_class_counters[c],
                                                error);

      if (samples == NULL)
        return FALSE;
      for (guint i = 0; i < rows->len; i++)
        {
          TideStepRow *r = g_ptr_array_index (rows, i);

          if (r->process_id != process_id)
            continue;
          r->has_classes = TRUE;
          r->class_start[c] = value_at (samples, origin + r->start_ns);
          r->class_end[c] = value_at (samples, origin + r->start_ns + r->duration_ns);
        }
    }
  return TRUE;
}

/**
 * _tide_report_add_classes:
 *
 * Sets each row's RSS classes at its step's start and end: one read of
 * each class's samples per process, whatever the number of steps.
 */
gboolean
_tide_report_add_classes (TideTrace  *trace,
                          GPtrArray  *rows,
                          GError    **error)
{
  g_autoptr(GHashTable) done = g_hash_table_new (g_int64_hash, g_int64_equal);
  sqlite3_stmt *stmt = _tide_report_prepare (trace,
      "SELECT ts_ns, value FROM counters WHERE process_id = ?1 AND counter = ?2"
      " AND device = -1 ORDER BY ts_ns", error);

  if (stmt == NULL)
    return FALSE;
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      if (g_hash_table_contains (done, &r->process_id))
        continue;
      g_hash_table_add (done, &r->process_id);
      if (!add_process_classes (trace, stmt, rows, r->process_id, error))
        return FALSE;
    }
  return _tide_report_finish_rows (trace, stmt, SQLITE_DONE, error);
}
