/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-device-oom.c: the failed allocations of a trace, per process and
 * device (tide-device-oom.h).  Every value is read as untrusted: a count
 * or size below zero reads as zero, a device out of range drops the row's
 * group, an API name that is not an identifier reads as "?".
 */
#include "config.h"

#include "tide-device-oom.h"

#include "tide-format-bytes.h"
#include "tide-plumbing.h"
#include "tide-report-format.h"
#include "tide-report-private.h"
#include "tide-saturate.h"

#include <string.h>

/* Devices a trace may name (the wire allows int16). */
#define MAX_DEVICE G_MAXINT16

void
tide_device_oom_free (TideDeviceOom *oom)
{
  if (oom == NULL)
    return;
  tide_process_label_clear (&oom->process);
  g_free (oom->api);
  g_clear_pointer (&oom->frames, g_ptr_array_unref);
  g_free (oom->keeper);
  g_free (oom);
}

/* An API's name as the trace holds it, if it is an identifier. */
static char *
api_from_column (sqlite3_stmt *stmt,
                 int           col)
{
  const char *text = (const char *) sqlite3_column_text (stmt, col);
  gsize len = text != NULL ? strlen (text) : 0;

  if (len == 0 || len > 64)
    return g_strdup ("?");
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isalnum (text[i]) && text[i] != '_')
      return g_strdup ("?");
  return g_strdup (text);
}

/* The failure to name: when the process died of it, the last one not
 * followed by a success; else the largest. */
static gboolean
load_named_failure (sqlite3        *db,
                    TideDeviceOom  *oom,
                    gint64         *stack_id,
                    GError        **error)
{
  const char *sql = oom->fatal
    ? "SELECT ts_ns, api, bytes, allocated_bytes, coalesce (stack_id, 0) FROM alloc_failures"
      " WHERE process_id = ?1 AND device = ?2 AND recovered = 0 ORDER BY ts_ns DESC, id DESC LIMIT 1"
    : "SELECT ts_ns, api, bytes, allocated_bytes, coalesce (stack_id, 0) FROM alloc_failures"
      " WHERE process_id = ?1 AND device = ?2 ORDER BY bytes DESC, ts_ns, id LIMIT 1";
  sqlite3_stmt *stmt = tide_sqlite_prepare (db, sql, TIDE_REPORT_WHAT, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, oom->process.id);
  sqlite3_bind_int64 (stmt, 2, oom->device);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      oom->ts_ns = sqlite3_column_int64 (stmt, 0);
      oom->api = api_from_column (stmt, 1);
      oom->bytes = MAX (sqlite3_column_int64 (stmt, 2), 0);
      oom->allocated_bytes = MAX (sqlite3_column_int64 (stmt, 3), 0);
      *stack_id = sqlite3_column_int64 (stmt, 4);
      rc = SQLITE_DONE;
    }
  return tide_sqlite_finish (db, stmt, rc, TIDE_REPORT_WHAT, error);
}

/* The live bytes of @stack_id's blocks on @oom's device at its failure:
 * device blocks are never sampled, so the allocations rows are exact. */
static gboolean
load_keeper_bytes (sqlite3        *db,
                   TideDeviceOom  *oom,
                   gint64          stack_id,
                   GError        **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (
    db, "SELECT total (size * weight) FROM allocations WHERE process_id = ?1 AND device = ?2"
        " AND stack_id = ?3 AND alloc_ns <= ?4 AND (free_ns IS NULL OR free_ns > ?4)",
    TIDE_REPORT_WHAT, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, oom->process.id);
  sqlite3_bind_int64 (stmt, 2, oom->device);
  sqlite3_bind_int64 (stmt, 3, stack_id);
  sqlite3_bind_int64 (stmt, 4, oom->ts_ns);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      oom->keeper_bytes = tide_sat_from_double (sqlite3_column_double (stmt, 0));
      rc = SQLITE_DONE;
    }
  return tide_sqlite_finish (db, stmt, rc, TIDE_REPORT_WHAT, error);
}

/* The suspect on the device that grows fastest in the process: suspects
 * come fastest first.  Pinned memory has no suspects of its own. */
static gboolean
find_keeper (TideTrace      *trace,
             GPtrArray      *suspects,
             TideDeviceOom  *oom,
             GError        **error)
{
  for (guint i = 0; oom->device >= 0 && i < suspects->len; i++)
    {
      const TideGroup *g = g_ptr_array_index (suspects, i);

      if (g->process.id != oom->process.id || g->device != oom->device || g->stack_id == 0)
        continue;
      oom->keeper = tide_group_describe_headline (g);
      oom->keeper_bytes_per_step = g->bytes_per_step;
      return load_keeper_bytes (_tide_trace_get_db (trace), oom, g->stack_id, error);
    }
  return TRUE;
}

/* Everything about @oom but its group's counts, which the caller read. */
static gboolean
load_details (TideTrace      *trace,
              GPtrArray      *processes,
              TideDeviceOom  *oom,
              GError        **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  TideProcess *p = tide_processes_find (processes, oom->process.id);
  TideProcess *source = p != NULL ? _tide_report_steps_source (processes, p) : NULL;
  gint64 stack_id = 0;

  tide_process_label_set (&oom->process, p);
  oom->fatal = oom->fatal && p != NULL && tide_process_end_is_death (&p->end);
  if (!load_named_failure (db, oom, &stack_id, error) ||
      (source != NULL && !_tide_report_step_at (db, source->id, oom->ts_ns, &oom->step, error)))
    return FALSE;
  if (stack_id != 0 && (oom->frames = tide_report_frames (trace, stack_id, error)) == NULL)
    return FALSE;
  return TRUE;
}

static gint
compare_fatal_first (gconstpointer a,
                     gconstpointer b)
{
  const TideDeviceOom *x = *(TideDeviceOom **) a;
  const TideDeviceOom *y = *(TideDeviceOom **) b;

  if (x->fatal != y->fatal)
    return x->fatal ? -1 : 1;
  return (x->ts_ns > y->ts_ns) - (x->ts_ns < y->ts_ns);
}

/* One per process and device with failures; fatal says only that some
 * were not followed by a success, until load_details() asks the process. */
static GPtrArray *
load_groups (sqlite3  *db,
             GError  **error)
{
  g_autoptr(GPtrArray) ooms = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_device_oom_free);
  sqlite3_stmt *stmt;
  int rc;

  if (!tide_sqlite_has (db, "table", "alloc_failures"))
    return g_steal_pointer (&ooms);
  stmt = tide_sqlite_prepare (db, "SELECT process_id, device, count (*), min (recovered) FROM"
                                  " alloc_failures GROUP BY process_id, device",
                              TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return NULL;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideDeviceOom *oom;
      gint64 device = sqlite3_column_int64 (stmt, 1);

      if (device < -1 || device > MAX_DEVICE)
        continue;
      oom = g_new0 (TideDeviceOom, 1);
      oom->process.id = sqlite3_column_int64 (stmt, 0);
      oom->device = (gint) device;
      oom->n_failed = sqlite3_column_int64 (stmt, 2);
      oom->fatal = sqlite3_column_int64 (stmt, 3) == 0;
      g_ptr_array_add (ooms, oom);
    }
  if (!tide_sqlite_finish (db, stmt, rc, TIDE_REPORT_WHAT, error))
    return NULL;
  return g_steal_pointer (&ooms);
}

GPtrArray *
tide_report_device_ooms (TideTrace  *trace,
                         GPtrArray  *suspects,
                         GError    **error)
{
  g_autoptr(GPtrArray) ooms = NULL;
  g_autoptr(GPtrArray) processes = NULL;
  g_autoptr(GPtrArray) own_suspects = NULL;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  ooms = load_groups (_tide_trace_get_db (trace), error);
  if (ooms == NULL || ooms->len == 0)
    return g_steal_pointer (&ooms);
  if ((processes = tide_trace_list_processes (trace, error)) == NULL)
    return NULL;
  for (guint i = 0; i < ooms->len; i++)
    {
      TideDeviceOom *oom = g_ptr_array_index (ooms, i);

      if (!load_details (trace, processes, oom, error))
        return NULL;
      if (!oom->fatal)
        continue;
      if (suspects == NULL &&
          (suspects = own_suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK,
                                                           error)) == NULL)
        return NULL;
      if (!find_keeper (trace, suspects, oom, error))
        return NULL;
    }
  g_ptr_array_sort (ooms, compare_fatal_first);
  return g_steal_pointer (&ooms);
}

/* "cuda:0", or "pinned host memory". */
static char *
device_name (gint device)
{
  return device < 0 ? g_strdup ("pinned host memory") : g_strdup_printf ("cuda:%d", device);
}

/* "a 16.00 MiB cudaMalloc at step 8 in cuda-oom.c:27 forward_activations,
 * with 88.00 MiB allocated" */
static void
append_request (GString             *line,
                const TideDeviceOom *oom,
                gboolean             with_step)
{
  g_autofree char *bytes = tide_format_bytes (oom->bytes);
  g_autofree char *allocated = tide_format_bytes (oom->allocated_bytes);
  gint headline = oom->frames != NULL ? tide_frames_find_headline (oom->frames) : -1;

  g_string_append_printf (line, "a %s %s", bytes, oom->api);
  if (with_step && oom->step > 0)
    g_string_append_printf (line, " in step %d", oom->step);
  if (headline >= 0)
    {
      g_autofree char *where = tide_frame_describe_source_first (g_ptr_array_index (oom->frames,
                                                                                    headline));

      g_string_append_printf (line, " at %s", where);
    }
  g_string_append_printf (line, ", with %s allocated", allocated);
}

char *
tide_device_oom_describe (const TideDeviceOom *oom)
{
  g_autofree char *device = device_name (oom->device);
  GString *line = g_string_new (NULL);

  if (!oom->fatal)
    {
      g_string_append_printf (line, "%s ran short %" G_GINT64_FORMAT " time%s in %s (pid %"
                              G_GINT64_FORMAT "), and the program went on: the largest, ",
                              device, oom->n_failed, oom->n_failed == 1 ? "" : "s",
                              oom->process.role, oom->process.pid);
      append_request (line, oom, TRUE);
      return g_string_free (line, FALSE);
    }
  g_string_append_printf (line, oom->device < 0 ? "%s ran out" : "%s ran out of memory", device);
  if (oom->step > 0)
    g_string_append_printf (line, " at step %d", oom->step);
  g_string_append_printf (line, " in %s (pid %" G_GINT64_FORMAT "): ", oom->process.role,
                          oom->process.pid);
  append_request (line, oom, FALSE);
  if (oom->keeper != NULL)
    {
      g_autofree char *kept = tide_format_bytes (oom->keeper_bytes);
      g_autofree char *slope = tide_format_delta (tide_sat_from_double (oom->keeper_bytes_per_step));

      g_string_append_printf (line, ", %s of it kept by %s (%s/step)", kept, oom->keeper, slope);
    }
  if (oom->n_failed > 1)
    g_string_append_printf (line, "; %" G_GINT64_FORMAT " allocations failed there", oom->n_failed);
  return g_string_free (line, FALSE);
}
