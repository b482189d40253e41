/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Leak suspects.  A group (a stack or a scope, on one device of one process)
 * has a live-bytes series L[0..n]: L[0] = 0 before step 1, L[k] at the end of
 * step k.  Step 1 also holds initialisation, so growth is looked for from
 * step 2 on.  Growth begins at the first step s >= 2 with L[s] > L[s-1] after
 * which L never falls back to L[s-1] or below.  It is a leak suspect when the
 * growth is steady, not one spike and not noise:
 *
 *   - it grew in at least 3 steps, and in at least half the steps since s;
 *   - it kept at least 3/4 of what it gained (net >= 0.75 * sum of rises);
 *   - the net growth is at least twice the largest fall since s, and at
 *     least min_bytes: 4 KiB with --all; sampled, four samples.
 *
 * Suspects are ranked by net growth per step since s.
 */
#include "config.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "tide-alloc-ranges.h"
#include "tide-file-names.h"
#include "tide-hash.h"
#include "tide-report-private.h"
#include "tide-saturate.h"
#include "tide-step-accumulator.h"


#define SUSPECT_MIN_RISES 3
/* A group whose blocks come and go holds a few sampled ones at each step
 * end, and which few is chance: its level moves by a sample or two either
 * way, and now and then climbs steadily for the last few steps. */
#define SUSPECT_MIN_SAMPLES 4

void
tide_group_free (TideGroup *group)
{
  if (group == NULL)
    return;
  g_free (group->scope_path);
  tide_process_label_clear (&group->process);
  g_clear_pointer (&group->frames, g_ptr_array_unref);
  g_clear_pointer (&group->scopes, g_array_unref);
  g_free (group);
}

/* A group of one process's blocks on @device, its stack or scope still to
 * be set, and its resident bytes not measured. */
TideGroup *
_tide_group_new (gint64 process_id,
                 gint64 pid,
                 gint   device)
{
  TideGroup *group = g_new0 (TideGroup, 1);

  group->process.id = process_id;
  group->process.pid = pid;
  group->device = device;
  group->resident_bytes = -1;
  return group;
}

char *
_tide_report_column_dup (sqlite3_stmt *stmt,
                         int           col)
{
  return g_strdup ((const char *) sqlite3_column_text (stmt, col));
}

/* ---- series and growth ---------------------------------------------------- */

typedef struct
{
  gint64  key;        /* stack_id or scope_id */
  gint    device;
  double *deltas;     /* n_steps + 1 */
} GroupSeries;

typedef struct
{
  gint    start;      /* 0: no growth */
  double  net;
  gint    rises;
  double  sum_rises;
  double  max_fall;
} Growth;

static void
growth_measure (const double *live,
                gint          n,
                Growth       *g)
{
  *g = (Growth) { 0 };

  for (gint k = 2; k <= n && g->start == 0; k++)
    {
      gboolean stays_above = live[k] > live[k - 1];

      for (gint m = k + 1; m <= n && stays_above; m++)
        stays_above = live[m] > live[k - 1];
      if (stays_above)
        g->start = k;
    }
  if (g->start == 0)
    return;

  g->net = live[n] - live[g->start - 1];
  for (gint k = g->start; k <= n; k++)
    {
      double d = live[k] - live[k - 1];

      if (d > 0)
        {
          g->rises++;
          g->sum_rises += d;
        }
      else
        g->max_fall = MAX (g->max_fall, -d);
    }
}

static gboolean
growth_is_suspect (const Growth *g,
                   gint          n,
                   double        min_bytes)
{
  gint span;

  if (g->start == 0)
    return FALSE;
  span = n - g->start + 1;
  return g->rises >= SUSPECT_MIN_RISES &&
         2 * g->rises >= span &&
         g->net >= 0.75 * g->sum_rises &&
         g->net >= 2 * g->max_fall &&
         g->net >= min_bytes;
}

static guint
group_hash (gconstpointer p)
{
  const GroupSeries *s = p;
  return (guint) tide_hash_ids ((guint64) s->key, 0, (guint) s->device);
}

static gboolean
group_equal (gconstpointer a,
             gconstpointer b)
{
  const GroupSeries *x = a, *y = b;
  return x->key == y->key && x->device == y->device;
}

static void
group_series_free (GroupSeries *s)
{
  g_free (s->deltas);
  g_free (s);
}

/* The last value of a (stack, scope, device); hashed by its key, which
 * comes first. */
typedef struct
{
  TideSeriesKey key;
  double        value;
} SeriesValue;

static GroupSeries *
group_lookup (GHashTable *groups,
              gint64      key,
              gint        device,
              gint        n_steps)
{
  GroupSeries probe = { key, device, NULL };
  GroupSeries *group = g_hash_table_lookup (groups, &probe);

  if (group == NULL)
    {
      group = g_memdup2 (&probe, sizeof probe);
      group->deltas = g_new0 (double, n_steps + 1);
      g_hash_table_add (groups, group);
    }
  return group;
}

/* Builds the live-bytes series of every group of one process from
 * step_series, which holds each (stack, scope, device) value only where it
 * changed: changes become deltas per group, summed up by the caller. */
static GHashTable *
load_group_series (TideTrace   *trace,
                   gint64       process_id,
                   TideGroupBy  by,
                   gint         n_steps,
                   GError     **error)
{
  g_autoptr(GHashTable) groups = g_hash_table_new_full (group_hash, group_equal, NULL,
                                                        (GDestroyNotify) group_series_free);
  g_autoptr(GHashTable) last = g_hash_table_new_full (tide_series_key_hash,
                                                      tide_series_key_equal, g_free, NULL);
  sqlite3_stmt *stmt;
  int rc;

  stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                  "SELECT s.number, ss.stack_id, ss.scope_id, ss.device, ss.live_bytes"
                  " FROM step_series ss JOIN steps s ON s.id = ss.step_id"
                  " WHERE s.process_id = ?1 ORDER BY s.number", TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint number = sqlite3_column_int (stmt, 0);
      SeriesValue probe = { { sqlite3_column_int64 (stmt, 1), sqlite3_column_int64 (stmt, 2),
                              sqlite3_column_int (stmt, 3) }, 0 };
      double value = (double) sqlite3_column_int64 (stmt, 4);
      SeriesValue *previous = g_hash_table_lookup (last, &probe);
      GroupSeries *group;

      if (previous == NULL)
        {
          previous = g_memdup2 (&probe, sizeof probe);
          g_hash_table_add (last, previous);
        }
      group = group_lookup (groups,
                            by == TIDE_GROUP_BY_STACK ? probe.key.stack_id : probe.key.scope_id,
                            probe.key.device, n_steps);
      if (number >= 1 && number <= n_steps)
        group->deltas[number] += value - previous->value;
      previous->value = value;
    }
  if (!tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error))
    return NULL;

  /* Deltas become the live series in place. */
  {
    GHashTableIter iter;
    GroupSeries *group;

    g_hash_table_iter_init (&iter, groups);
    while (g_hash_table_iter_next (&iter, (gpointer *) &group, NULL))
      for (gint k = 1; k <= n_steps; k++)
        group->deltas[k] += group->deltas[k - 1];
  }
  return g_steal_pointer (&groups);
}

/* ---- processes, frames, scopes -------------------------------------------- */

typedef struct
{
  gint64 process_id;
  gint64 pid;
  gint   n_steps;
  double min_bytes;
} ProcessInfo;

static void
read_process_info (sqlite3_stmt *stmt,
                   gpointer      row,
                   gpointer      user_data)
{
  *(ProcessInfo *) row = (ProcessInfo) {
    .process_id = sqlite3_column_int64 (stmt, 0),
    .pid = sqlite3_column_int64 (stmt, 1),
    .n_steps = sqlite3_column_int (stmt, 2),
    .min_bytes = sqlite3_column_int (stmt, 3)
                 ? 4096.0
                 : SUSPECT_MIN_SAMPLES * MAX (4096.0, sqlite3_column_double (stmt, 4)),
  };
}

static GArray *
load_processes (TideTrace  *trace,
                GError    **error)
{
  sqlite3 *db = _tide_trace_get_db (trace);
  sqlite3_stmt *stmt = tide_sqlite_prepare (db,
                  "SELECT p.id, p.pid, (SELECT count (*) FROM steps s WHERE s.process_id = p.id),"
                  "  p.all_mode, p.sample_bytes FROM processes p ORDER BY p.id",
                  TIDE_REPORT_WHAT, error);

  return tide_sqlite_read_rows (db, stmt, sizeof (ProcessInfo), read_process_info, NULL,
                                TIDE_REPORT_WHAT, error);
}

/* A stack's frames, innermost first.  A native frame's inline levels
 * (rows of kind TIDE_FRAME_INLINE with its module and offset) come just
 * before it, innermost first, as the compiler nested them: the last
 * column orders a depth's rows, inline ones by id, the native one after
 * them all. */
static const char frames_sql[] =
  "WITH RECURSIVE chain (parent_id, frame_id, depth) AS ("
  "  SELECT parent_id, frame_id, depth FROM stack_nodes WHERE id = ?1"
  "%s"
  "  UNION ALL"
  "  SELECT n.parent_id, n.frame_id, n.depth FROM stack_nodes n"
  "  JOIN chain c ON n.id = c.parent_id LIMIT 4096)"
  " SELECT f.kind, f.function, f.file, f.line, f.module, f.module_offset, chain.depth,"
  "  4611686018427387904"
  " FROM chain JOIN frames f ON f.id = chain.frame_id";
/* A stack of schema 4 is a row: its frames' depths are their places in
 * its array.  A merge of older traces may hold stack_nodes beside it. */
static const char stacks_sql[] =
  "  UNION ALL"
  "  SELECT NULL, j.value, j.key + 1 FROM stacks s, json_each (s.frames) j WHERE s.id = ?1";
static const char inline_frames_sql[] =
  " UNION ALL"
  " SELECT i.kind, i.function, i.file, i.line, i.module, i.module_offset, chain.depth, i.id"
  " FROM chain JOIN frames f ON f.id = chain.frame_id"
  " JOIN frames i ON i.kind = " TIDE_SQL_FRAME_INLINE
  "   AND i.module_offset = f.module_offset AND i.module = f.module"
  " WHERE f.kind = " TIDE_SQL_FRAME_NATIVE;

/* Code inlined into plumbing is plumbing: an inline level takes the flag
 * of the native frame that holds it, which follows its levels. */
static void
inline_frames_inherit_plumbing (GPtrArray *frames)
{
  gboolean holder_plumbing = FALSE;

  for (guint i = frames->len; i-- > 0;)
    {
      TideFrame *frame = g_ptr_array_index (frames, i);

      if (frame->kind == TIDE_FRAME_INLINE)
        frame->plumbing |= holder_plumbing;
      else
        holder_plumbing = frame->plumbing;
    }
}

/* The statement that reads a stack's frames (?1: its id), prepared once
 * for as many stacks as a report shows. */
static sqlite3_stmt *
prepare_frames (TideTrace  *trace,
                GError    **error)
{
  g_autofree char *chain = g_strdup_printf (frames_sql,
                                            _tide_trace_has_stacks (trace) ? stacks_sql : "");
  g_autofree char *sql = g_strconcat (chain,
                                      _tide_trace_has_inline_frames (trace) ? inline_frames_sql : "",
                                      " ORDER BY 7 DESC, 8", NULL);

  return tide_sqlite_prepare (_tide_trace_get_db (trace), sql, TIDE_REPORT_WHAT, error);
}

/* @stmt: from prepare_frames(), finalized here on an error only. */
static GPtrArray *
load_frames_with (TideTrace     *trace,
                  sqlite3_stmt  *stmt,
                  gint64         stack_id,
                  GError       **error)
{
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);
  const TidePlumbing *plumbing = tide_plumbing_for_trace (trace);
  GHashTable *file_names = tide_file_names_for_trace (trace);
  int rc;

  sqlite3_reset (stmt);
  sqlite3_bind_int64 (stmt, 1, stack_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideFrame *frame = g_new0 (TideFrame, 1);

      frame->kind = sqlite3_column_int (stmt, 0);
      frame->function = _tide_report_column_dup (stmt, 1);
      frame->file = _tide_report_column_dup (stmt, 2);
      frame->line = sqlite3_column_int (stmt, 3);
      frame->module = _tide_report_column_dup (stmt, 4);
      frame->module_offset = sqlite3_column_int64 (stmt, 5);
      frame->plumbing = tide_plumbing_matches (plumbing, frame);
      frame->library = tide_plumbing_is_library (plumbing, frame);
      if (frame->file != NULL)
        frame->file_name = g_strdup (g_hash_table_lookup (file_names, frame->file));
      g_ptr_array_add (frames, frame);
    }
  if (rc != SQLITE_DONE)
    {
      tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error);
      return NULL;
    }
  inline_frames_inherit_plumbing (frames);
  return g_steal_pointer (&frames);
}

static GPtrArray *
load_frames (TideTrace  *trace,
             gint64      stack_id,
             GError    **error)
{
  sqlite3_stmt *stmt = prepare_frames (trace, error);
  GPtrArray *frames;

  if (stmt == NULL || (frames = load_frames_with (trace, stmt, stack_id, error)) == NULL)
    return NULL;
  sqlite3_finalize (stmt);
  return frames;
}

static char *
load_scope_path (TideTrace *trace,
                 gint64     scope_id)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                                            "SELECT path FROM scopes WHERE id = ?1",
                                            TIDE_REPORT_WHAT, NULL);
  char *path = NULL;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, scope_id);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    path = _tide_report_column_dup (stmt, 0);
  sqlite3_finalize (stmt);
  return path;
}

/* The scope that holds most of a stack's live bytes at any step end
 * (the lowest scope id of those that hold as much). */
typedef struct
{
  gint64 stack_id;   /* the key */
  gint64 scope_id;
  gint64 bytes;
} DominantScope;

/* The dominant scope of every stack of @process_id that has one, shown
 * beside a stack (the module that was running): one read of the
 * process's step series, however many groups ask (a query per group read
 * them all once each).  NULL on an error. */
static GHashTable *
load_dominant_scopes (TideTrace  *trace,
                      gint64      process_id,
                      GError    **error)
{
  g_autoptr(GHashTable) scopes = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                                "SELECT ss.stack_id, ss.scope_id, max (ss.live_bytes)"
                                " FROM step_series ss JOIN steps s ON s.id = ss.step_id"
                                " WHERE s.process_id = ?1 AND ss.stack_id IS NOT NULL"
                                "  AND ss.scope_id > 0 GROUP BY 1, 2",
                                TIDE_REPORT_WHAT, error);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      DominantScope row = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                            sqlite3_column_int64 (stmt, 2) };
      DominantScope *best = g_hash_table_lookup (scopes, &row.stack_id);

      if (best == NULL)
        {
          best = g_memdup2 (&row, sizeof row);
          g_hash_table_insert (scopes, &best->stack_id, best);
        }
      else if (row.bytes > best->bytes || (row.bytes == best->bytes && row.scope_id < best->scope_id))
        *best = row;
    }
  if (!tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error))
    return NULL;
  return g_steal_pointer (&scopes);
}

/* What the groups of one process load once for all of them. */
typedef struct
{
  GHashTable   *dominant_scopes;   /* NULL until a group needs them */
  sqlite3_stmt *frames;            /* prepare_frames(), NULL until then */
} GroupDetails;

static void
group_details_clear (GroupDetails *details)
{
  g_clear_pointer (&details->dominant_scopes, g_hash_table_unref);
  g_clear_pointer (&details->frames, sqlite3_finalize);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GroupDetails, group_details_clear)

static gboolean
group_load_details (TideTrace     *trace,
                    TideGroup     *group,
                    GroupDetails  *details,
                    GError       **error)
{
  if (group->stack_id != 0 && group->scope_id == 0)
    {
      DominantScope *dominant;

      if (details->dominant_scopes == NULL &&
          (details->dominant_scopes = load_dominant_scopes (trace, group->process.id,
                                                            error)) == NULL)
        return FALSE;
      dominant = g_hash_table_lookup (details->dominant_scopes, &group->stack_id);
      group->scope_id = dominant != NULL ? dominant->scope_id : 0;
    }
  if (group->stack_id != 0)
    {
      if (details->frames == NULL && (details->frames = prepare_frames (trace, error)) == NULL)
        return FALSE;
      group->frames = load_frames_with (trace, details->frames, group->stack_id, error);
      if (group->frames == NULL)
        {
          details->frames = NULL;   /* finalized */
          return FALSE;
        }
    }
  else
    group->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);
  if (group->scope_id != 0)
    group->scope_path = load_scope_path (trace, group->scope_id);
  return TRUE;
}

static TideGroup *
group_new (const ProcessInfo *proc,
           TideGroupBy        by,
           gint64             key,
           gint               device)
{
  TideGroup *group = _tide_group_new (proc->process_id, proc->pid, device);

  if (by == TIDE_GROUP_BY_STACK)
    group->stack_id = key;
  else
    group->scope_id = key;
  return group;
}

static void
group_set_growth (TideGroup    *group,
                  const Growth *growth,
                  gint          n_steps)
{
  if (growth->start == 0)
    return;
  group->growth_step = growth->start;
  group->growth_bytes = tide_sat_from_double (growth->net);
  group->bytes_per_step = growth->net / (n_steps - growth->start + 1);
}

static gint
compare_by_slope (gconstpointer a,
                  gconstpointer b)
{
  const TideGroup *x = *(TideGroup **) a, *y = *(TideGroup **) b;

  return (x->bytes_per_step < y->bytes_per_step) - (x->bytes_per_step > y->bytes_per_step);
}

static gint
compare_by_bytes (gconstpointer a,
                  gconstpointer b)
{
  const TideGroup *x = *(TideGroup **) a, *y = *(TideGroup **) b;

  return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

/* ---- suspects --------------------------------------------------------------- */

static gboolean
add_process_suspects (TideTrace         *trace,
                      const ProcessInfo *proc,
                      TideGroupBy        by,
                      GPtrArray         *out,
                      GError           **error)
{
  g_autoptr(GHashTable) groups = NULL;
  g_auto(GroupDetails) details = { NULL };
  GHashTableIter iter;
  GroupSeries *series;

  groups = load_group_series (trace, proc->process_id, by, proc->n_steps, error);
  if (groups == NULL)
    return FALSE;

  g_hash_table_iter_init (&iter, groups);
  while (g_hash_table_iter_next (&iter, (gpointer *) &series, NULL))
    {
      Growth growth;
      TideGroup *group;

      growth_measure (series->deltas, proc->n_steps, &growth);
      if (!growth_is_suspect (&growth, proc->n_steps, proc->min_bytes))
        continue;
      group = group_new (proc, by, series->key, series->device);
      group->bytes = tide_sat_from_double (series->deltas[proc->n_steps]);
      group->count = -1;
      group_set_growth (group, &growth, proc->n_steps);
      g_ptr_array_add (out, group);
      if (!group_load_details (trace, group, &details, error))
        return FALSE;
      if (by == TIDE_GROUP_BY_STACK &&
          !_tide_group_load_growth_shares (trace, group, proc->n_steps, error))
        return FALSE;
    }
  return TRUE;
}

GPtrArray *
tide_report_suspects (TideTrace    *trace,
                      TideGroupBy   by,
                      GError      **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_group_free);
  g_autoptr(GArray) procs = load_processes (trace, error);

  if (procs == NULL)
    return NULL;
  for (guint i = 0; i < procs->len; i++)
    {
      const ProcessInfo *proc = &g_array_index (procs, ProcessInfo, i);

      if (proc->n_steps >= 2 && !add_process_suspects (trace, proc, by, out, error))
        return NULL;
    }
  g_ptr_array_sort (out, compare_by_slope);
  if (!_tide_report_label_groups (trace, out, error))
    return NULL;
  return g_steal_pointer (&out);
}

/* ---- retained --------------------------------------------------------------- */

static gboolean
lookup_step (TideTrace      *trace,
             gint64          process_id,
             gint            number,
             TideReportStep *span)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                                            "SELECT id, start_ns, end_ns FROM steps"
                                            " WHERE process_id = ?1 AND number = ?2",
                                            TIDE_REPORT_WHAT, NULL);
  gboolean found = FALSE;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, process_id);
  sqlite3_bind_int (stmt, 2, number);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    {
      *span = (TideReportStep) { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1),
                                 sqlite3_column_int64 (stmt, 2) };
      found = TRUE;
    }
  sqlite3_finalize (stmt);
  return found;
}

/**
 * _tide_report_prepare_retained:
 * @sql: a query of what @process_id retained, taking the process as ?1
 *   and, with a @step, the step's span as ?2 and ?3
 * @step: (nullable): the step, or %NULL for the trace end
 *
 * Returns: @sql prepared and bound, or %NULL with @error set
 */
sqlite3_stmt *
_tide_report_prepare_retained (TideTrace            *trace,
                               const char           *sql,
                               gint64                process_id,
                               const TideReportStep *step,
                               GError              **error)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace), sql, TIDE_REPORT_WHAT,
                                            error);

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, process_id);
  if (step != NULL)
    {
      sqlite3_bind_int64 (stmt, 2, step->start_ns);
      sqlite3_bind_int64 (stmt, 3, step->end_ns);
    }
  return stmt;
}

/* A group's resident bytes at a step with a total (tide-schema.c): those
 * of its latest row at or before the step, in the step's process. */
static const char residency_changes_sql[] =
  "SELECT %s, device, sum (resident_bytes) FROM ("
  "  SELECT r.stack_id, r.scope_id, r.device, r.resident_bytes, max (s.number)"
  "  FROM steps s JOIN step_residency r ON r.step_id = s.id"
  "  WHERE s.process_id = (SELECT process_id FROM steps WHERE id = ?1)"
  "    AND s.number <= (SELECT number FROM steps WHERE id = ?1)"
  "  GROUP BY r.stack_id, r.scope_id, r.device)"
  " GROUP BY 1, 2";

/* Whether step_id's rows of step_residency are the changes since the
 * process's last measured step, not every group. */
static gboolean
residency_is_changes (TideTrace *trace,
                      gint64     step_id)
{
  g_autofree char *sql = NULL;
  gint64 found = 0;

  if (!_tide_trace_has_residency_totals (trace))
    return FALSE;
  sql = g_strdup_printf ("SELECT EXISTS (SELECT 1 FROM step_residency_totals"
                         " WHERE step_id = %" G_GINT64_FORMAT ")", step_id);
  return tide_sqlite_query_int (_tide_trace_get_db (trace), sql, TIDE_REPORT_WHAT, &found,
                                NULL) && found;
}

/* Fills resident_bytes of the groups from what the recorder measured at the
 * end of step_id: blocks born in that step, or every live block. */
static gboolean
add_residency (TideTrace   *trace,
               GHashTable  *by_key,
               const char  *key_column,
               gint64       step_id,
               gboolean     born_only,
               GError     **error)
{
  g_autofree char *sql = !born_only && residency_is_changes (trace, step_id)
    ? g_strdup_printf (residency_changes_sql, key_column)
    : g_strdup_printf ("SELECT %s, device, sum (%s) FROM step_residency WHERE step_id = ?1"
                       " GROUP BY 1, 2", key_column,
                       born_only ? "resident_born_bytes" : "resident_bytes");
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace), sql, TIDE_REPORT_WHAT,
                                            error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, step_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      GroupSeries probe = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int (stmt, 1), NULL };
      TideGroup *group = g_hash_table_lookup (by_key, &probe);

      if (group != NULL)
        group->resident_bytes = sqlite3_column_int64 (stmt, 2);
    }
  return tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error);
}

/* The scope shares of the groups out[first..] (by stack, of @proc). */
static gboolean
add_retained_shares (TideTrace            *trace,
                     const ProcessInfo    *proc,
                     gint                  step,
                     const TideReportStep *span,
                     GPtrArray            *out,
                     guint                 first,
                     GError              **error)
{
  g_autoptr(GPtrArray) groups = g_ptr_array_new ();
  g_autofree char *rows = NULL;

  /* The same rows as the groups' own query, so that the shares cost what
   * the groups do: the step's rows through its block ranges, or the
   * summary of what was live at the end. */
  if (step > 0)
    rows = _tide_trace_retained_rows_sql (trace, TIDE_PROCESS_FILTER_ANY);
  else if (_tide_trace_has_live_at_end (trace))
    rows = g_strdup ("SELECT stack_id, scope_id, device, bytes AS size, 1.0 AS weight"
                     " FROM live_at_end WHERE process_id = ?1");
  else  /* finished by a version without live_at_end: read every allocation */
    rows = g_strdup ("SELECT * FROM allocations WHERE process_id = ?1 AND free_ns IS NULL");

  for (guint i = first; i < out->len; i++)
    g_ptr_array_add (groups, g_ptr_array_index (out, i));
  return _tide_groups_load_retained_shares (trace, groups, rows, proc->process_id,
                                            step > 0 ? span : NULL, error);
}

static gboolean
add_process_retained (TideTrace         *trace,
                      const ProcessInfo *proc,
                      gint               step,
                      TideGroupBy        by,
                      GPtrArray         *out,
                      GError           **error)
{
  const char *key_column = by == TIDE_GROUP_BY_STACK ? "stack_id" : "scope_id";
  g_autoptr(GHashTable) by_key = g_hash_table_new_full (group_hash, group_equal, g_free, NULL);
  g_autoptr(GHashTable) series = NULL;
  g_auto(GroupDetails) details = { NULL };
  g_autofree char *sql = NULL;
  TideReportStep span = { 0 };
  guint first = out->len;
  sqlite3_stmt *stmt;
  int rc;

  if (step > 0 && !lookup_step (trace, proc->process_id, step, &span))
    return TRUE;

  if (step > 0)
    {
      g_autofree char *rows = _tide_trace_retained_rows_sql (trace, TIDE_PROCESS_FILTER_ANY);

      sql = g_strdup_printf ("SELECT %s, device, sum (size * weight), sum (weight) FROM (%s)"
                             " GROUP BY 1, 2", key_column, rows);
    }
  else if (_tide_trace_has_live_at_end (trace))
    sql = g_strdup_printf ("SELECT %s, device, sum (bytes), sum (count) FROM live_at_end"
                           " WHERE process_id = ?1 GROUP BY 1, 2", key_column);
  else  /* finished by a version without live_at_end: read every allocation */
    sql = g_strdup_printf ("SELECT %s, device, sum (size * weight), sum (weight) FROM allocations"
                           " WHERE process_id = ?1 AND free_ns IS NULL GROUP BY 1, 2",
                           key_column);
  stmt = _tide_report_prepare_retained (trace, sql, proc->process_id, step > 0 ? &span : NULL,
                                        error);
  if (stmt == NULL)
    return FALSE;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      TideGroup *group = group_new (proc, by, sqlite3_column_int64 (stmt, 0),
                                    sqlite3_column_int (stmt, 1));
      GroupSeries *probe = g_new0 (GroupSeries, 1);

      group->bytes = tide_sat_from_double (sqlite3_column_double (stmt, 2));
      group->count = tide_sat_from_double (sqlite3_column_double (stmt, 3));
      probe->key = sqlite3_column_int64 (stmt, 0);
      probe->device = group->device;
      g_hash_table_insert (by_key, probe, group);
      g_ptr_array_add (out, group);
    }
  if (!tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error))
    return FALSE;

  /* Residency: at the step's end, or at the last step's end for the trace end. */
  if (step == 0 && proc->n_steps > 0)
    lookup_step (trace, proc->process_id, proc->n_steps, &span);
  if (span.id != 0 && !add_residency (trace, by_key, key_column, span.id, step > 0, error))
    return FALSE;

  if (proc->n_steps >= 2)
    {
      series = load_group_series (trace, proc->process_id, by, proc->n_steps, error);
      if (series == NULL)
        return FALSE;
    }

  /* Every group of this process, from @out rather than from @by_key: in a
   * damaged trace two rows that SQL tells apart (a scope id 5 and '5', a
   * device 0 and 2^32) may share a key here, and a group that only @out
   * holds must be complete too. */
  for (guint i = first; i < out->len; i++)
    {
      TideGroup *group = g_ptr_array_index (out, i);
      GroupSeries key = { by == TIDE_GROUP_BY_STACK ? group->stack_id : group->scope_id,
                          group->device, NULL };
      GroupSeries *s = series ? g_hash_table_lookup (series, &key) : NULL;

      if (s != NULL)
        {
          Growth growth;
          growth_measure (s->deltas, proc->n_steps, &growth);
          group_set_growth (group, &growth, proc->n_steps);
        }
      if (!group_load_details (trace, group, &details, error))
        return FALSE;
    }
  return by != TIDE_GROUP_BY_STACK ||
         add_retained_shares (trace, proc, step, &span, out, first, error);
}

/* A meta value of @trace that must be a count of at least 1; 0 when it
 * is missing or is not one (every value read from a trace is untrusted). */
static gint64
meta_count (TideTrace  *trace,
            const char *key)
{
  g_autofree char *text = tide_trace_dup_meta (trace, key);
  gint64 value = 0;

  if (text == NULL || !g_ascii_string_to_signed (text, 10, 1, G_MAXINT64, &value, NULL))
    return 0;
  return value;
}

/**
 * tide_report_describe_attach:
 *
 * Which mechanism of `attach` measured which host memory, in one line.
 * Recorded traces measure every block by its allocation.
 *
 * Returns: (transfer full) (nullable): the line, or %NULL for a trace
 *   `attach` did not make
 */
char *
tide_report_describe_attach (TideTrace *trace)
{
  g_autofree char *mode = tide_trace_dup_meta (trace, "mode");
  gint64 sample_pages = meta_count (trace, "sample_pages");
  g_autofree char *pages = sample_pages > 1
                           ? g_strdup_printf ("1 page in %" G_GINT64_FORMAT, sample_pages)
                           : g_strdup ("every page");

  if (g_strcmp0 (mode, "attach") != 0)
    return NULL;
  if (meta_count (trace, "c10_probes") > 0)
    return g_strdup_printf ("Measured by attach: PyTorch's CPU tensors by the line that "
                            "allocated them (c10::alloc_cpu, sampled by bytes), other host "
                            "memory by the stack that first touched it (%s)", pages);
  return g_strdup_printf ("Measured by attach: host memory by the stack that first touched it "
                          "(%s)", pages);
}

/**
 * tide_report_describe_rss_reads:
 *
 * How the recorder read the RSS classes that `report --rss` explains, in
 * one line, and the readings it lost; NULL for a trace that does not say
 * (older ones).
 */
char *
tide_report_describe_rss_reads (TideTrace *trace)
{
  g_autofree char *when = tide_trace_dup_meta (trace, "private_reads");
  g_autofree char *pagemap = tide_trace_dup_meta (trace, "pagemap_reads");
  gint64 missed = meta_count (trace, "rss_class_reads_missed");
  g_autoptr(GString) out = g_string_new ("Measured by: the kernel's split (/proc/PID/status) "
                                         "at every step end; private memory (smaps_rollup) "
                                         "and copy-on-write (pagemap, ");

  if ((g_strcmp0 (when, "every step end") != 0 && g_strcmp0 (when, "budget") != 0 &&
       g_strcmp0 (when, "budget-waits") != 0) ||
      (g_strcmp0 (pagemap, "scan") != 0 && g_strcmp0 (pagemap, "entries") != 0))
    return NULL;
  g_string_append (out, g_str_equal (pagemap, "scan")
                        ? "through PAGEMAP_SCAN) "
                        : "read page by page: this kernel has no PAGEMAP_SCAN) ");
  if (g_str_equal (when, "every step end"))
    g_string_append (out, "at every step end (--sync-steps)");
  else
    g_string_append_printf (out, "at the step ends that 1%% of the recorder's CPU allows%s, "
                            "the steps between explained together",
                            g_str_equal (when, "budget-waits")
                            ? " (each waited for its reading)" : "");
  if (missed > 0)
    g_string_append_printf (out, "; %" G_GINT64_FORMAT " %s lost to processes that ended "
                            "during them", missed, missed == 1 ? "reading" : "readings");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/**
 * tide_report_retained:
 * @step: a step number, or 0 for what is still live when the trace ends
 *
 * Returns: (transfer full): #TideGroup rows, largest first
 */
GPtrArray *
tide_report_retained (TideTrace    *trace,
                      gint          step,
                      TideGroupBy   by,
                      GError      **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_group_free);
  g_autoptr(GArray) procs = load_processes (trace, error);
  gboolean step_found = step == 0;

  if (procs == NULL)
    return NULL;
  for (guint i = 0; i < procs->len; i++)
    {
      const ProcessInfo *proc = &g_array_index (procs, ProcessInfo, i);

      step_found |= proc->n_steps >= step;
      if (!add_process_retained (trace, proc, step, by, out, error))
        return NULL;
    }
  if (!step_found)
    {
      g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_FOUND,
                   "%s has no step %d", tide_trace_get_path (trace), step);
      return NULL;
    }
  g_ptr_array_sort (out, compare_by_bytes);
  if (!_tide_report_label_groups (trace, out, error))
    return NULL;
  return g_steal_pointer (&out);
}

/**
 * tide_report_frames:
 * @stack_id: a stack_nodes id
 *
 * Returns: (transfer full): the stack's #TideFrame rows, innermost first
 */
GPtrArray *
tide_report_frames (TideTrace  *trace,
                    gint64      stack_id,
                    GError    **error)
{
  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  return load_frames (trace, stack_id, error);
}

/* The frames of every group of @groups that has a stack; an empty array
 * for one without.  One statement for them all. */
gboolean
_tide_report_load_group_frames (TideTrace  *trace,
                                GPtrArray  *groups,
                                GError    **error)
{
  sqlite3_stmt *stmt = NULL;

  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *group = g_ptr_array_index (groups, i);

      if (group->stack_id == 0)
        {
          group->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);
          continue;
        }
      if (stmt == NULL && (stmt = prepare_frames (trace, error)) == NULL)
        return FALSE;
      if ((group->frames = load_frames_with (trace, stmt, group->stack_id, error)) == NULL)
        return FALSE;
    }
  g_clear_pointer (&stmt, sqlite3_finalize);
  return TRUE;
}

/**
 * tide_group_get_headline:
 *
 * Returns: (nullable): the frame of @group's stack that a person would
 * change (tide_frames_find_headline()); NULL for a group without frames
 */
const TideFrame *
tide_group_get_headline (const TideGroup *group)
{
  gint i = tide_frames_find_headline (group->frames);

  return i >= 0 ? g_ptr_array_index (group->frames, i) : NULL;
}

/* The name of a group everywhere one is shown: its headline, else its
 * scope. */
char *
tide_group_describe_headline (const TideGroup *group)
{
  const TideFrame *headline = tide_group_get_headline (group);

  if (headline != NULL)
    return tide_frame_describe_source_first (headline);
  /* A stack whose frames the trace does not hold (a damaged trace) is not
   * a scope: say which it is. */
  if (group->stack_id != 0)
    return g_strdup ("(a stack without frames)");
  return g_strdup (group->scope_path ? group->scope_path : "(no scope)");
}

/* The headline, and the library frame it reached the allocation through:
 * "xfmr.py:19 LM.forward (via torch/nn/modules/linear.py:114
 * Linear.forward)". */
char *
tide_group_describe_headline_via (const TideGroup *group)
{
  gint h = tide_frames_find_headline (group->frames);
  gint via = tide_frames_find_via (group->frames, h);
  g_autofree char *headline = tide_group_describe_headline (group);
  g_autofree char *through = NULL;

  if (via < 0)
    return g_steal_pointer (&headline);
  through = tide_frame_describe_source_first (g_ptr_array_index (group->frames, via));
  return g_strdup_printf ("%s (via %s)", headline, through);
}

/**
 * _tide_series_grows_steadily:
 * @live: L[0..n], L[0] = 0 before step 1
 * @start_out: (out): the step its growth began
 * @net_out: (out): the growth since then
 *
 * The suspects' rule (the file comment), for series other than a group's:
 * the RSS classes (tide-report-rss.c).
 */
gboolean
_tide_series_grows_steadily (const double *live,
                             gint          n,
                             double        min_bytes,
                             gint         *start_out,
                             double       *net_out)
{
  Growth g;

  growth_measure (live, n, &g);
  *start_out = g.start;
  *net_out = g.net;
  return growth_is_suspect (&g, n, min_bytes);
}
