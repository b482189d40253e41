/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The scopes of a stack group: one stack (a forward line) can run in
 * several modules, and each scope gets its own share of the stack's bytes.
 * A suspect's share of a scope is the growth of the live bytes that the
 * stack holds in that scope over the suspect's growth window; the shares
 * add up to the suspect's growth exactly, so no scope carries bytes that
 * grew in another.  A retained group's share of a scope is what the stack
 * retained in it.
 */
#include "config.h"

#include <math.h>

#include "tide-report-private.h"
#include "tide-saturate.h"

static void
scope_share_clear (TideScopeShare *share)
{
  g_free (share->path);
}

GArray *
_tide_scope_shares_new (void)
{
  GArray *shares = g_array_new (FALSE, TRUE, sizeof (TideScopeShare));

  g_array_set_clear_func (shares, (GDestroyNotify) scope_share_clear);
  return shares;
}

static TideScopeShare *
share_lookup (GArray *shares,
              gint64  scope_id)
{
  TideScopeShare fresh = { .scope_id = scope_id };

  for (guint i = 0; i < shares->len; i++)
    if (g_array_index (shares, TideScopeShare, i).scope_id == scope_id)
      return &g_array_index (shares, TideScopeShare, i);
  g_array_append_val (shares, fresh);
  return &g_array_index (shares, TideScopeShare, shares->len - 1);
}

static gint
compare_shares (gconstpointer a,
                gconstpointer b)
{
  const TideScopeShare *x = a, *y = b;

  if (x->growth_bytes != y->growth_bytes)
    return (x->growth_bytes < y->growth_bytes) - (x->growth_bytes > y->growth_bytes);
  if (x->bytes != y->bytes)
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
  return (x->scope_id > y->scope_id) - (x->scope_id < y->scope_id);
}

static void
shares_name_and_sort (TideTrace *trace,
                      GArray    *shares)
{
  sqlite3_stmt *stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                                            "SELECT path FROM scopes WHERE id = ?1",
                                            TIDE_REPORT_WHAT, NULL);

  for (guint i = 0; stmt != NULL && i < shares->len; i++)
    {
      TideScopeShare *share = &g_array_index (shares, TideScopeShare, i);

      sqlite3_reset (stmt);
      sqlite3_bind_int64 (stmt, 1, share->scope_id);
      if (share->scope_id != 0 && sqlite3_step (stmt) == SQLITE_ROW)
        share->path = _tide_report_column_dup (stmt, 0);
    }
  sqlite3_finalize (stmt);
  g_array_sort (shares, compare_shares);
}

/* step_series holds a (stack, scope, device) value only at the steps where
 * it changed: @live[k] carries the last value forward. */
static void
share_set_value (TideScopeShare *share,
                 double         *live,
                 gint            from,
                 gint            n_steps,
                 double          value)
{
  for (gint k = from; k <= n_steps; k++)
    live[k] = value;
  share->bytes = llround (value);
}

/**
 * _tide_group_load_growth_shares:
 * @group: a suspect by stack, its growth_step set
 *
 * Fills @group->scopes with each scope's growth of the stack's live bytes
 * from the end of step growth_step - 1 to the end of step @n_steps.
 */
gboolean
_tide_group_load_growth_shares (TideTrace  *trace,
                                TideGroup  *group,
                                gint        n_steps,
                                GError    **error)
{
  g_autoptr(GArray) shares = _tide_scope_shares_new ();
  g_autoptr(GHashTable) series = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  sqlite3_stmt *stmt;
  int rc;

  stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                  "SELECT s.number, ifnull (ss.scope_id, 0), ss.live_bytes"
                  " FROM step_series ss JOIN steps s ON s.id = ss.step_id"
                  " WHERE s.process_id = ?1 AND ss.stack_id = ?2 AND ss.device = ?3"
                  " ORDER BY s.number", TIDE_REPORT_WHAT, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, group->process.id);
  sqlite3_bind_int64 (stmt, 2, group->stack_id);
  sqlite3_bind_int (stmt, 3, group->device);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint number = sqlite3_column_int (stmt, 0);
      gint64 scope_id = sqlite3_column_int64 (stmt, 1);
      double *live = g_hash_table_lookup (series, &scope_id);

      if (number < 1 || number > n_steps)
        continue;
      if (live == NULL)
        {
          live = g_new0 (double, n_steps + 1);
          g_hash_table_insert (series, g_memdup2 (&scope_id, sizeof scope_id), live);
        }
      share_set_value (share_lookup (shares, scope_id), live, number, n_steps,
                       (double) sqlite3_column_int64 (stmt, 2));
    }
  if (!tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error))
    return FALSE;

  for (guint i = 0; i < shares->len && group->growth_step > 0; i++)
    {
      TideScopeShare *share = &g_array_index (shares, TideScopeShare, i);
      const double *live = g_hash_table_lookup (series, &share->scope_id);
      double growth = live[n_steps] - live[group->growth_step - 1];

      share->growth_bytes = llround (growth);
      share->bytes_per_step = growth / (n_steps - group->growth_step + 1);
    }
  shares_name_and_sort (trace, shares);
  g_clear_pointer (&group->scopes, g_array_unref);
  group->scopes = g_steal_pointer (&shares);
  return TRUE;
}

static char *
stack_device_key (gint64 stack_id,
                  gint   device)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT "/%d", stack_id, device);
}

/**
 * _tide_groups_load_retained_shares:
 * @groups: (element-type TideGroup): the retained groups by stack of one
 *   process
 * @rows_sql: a query for that process's retained rows, taking the process
 *   as ?1 and, with a @step, the step's span as ?2 and ?3
 * @step: (nullable): the step, or %NULL for the trace end
 *
 * Fills each group's scopes with what its stack retained in each scope.
 */
gboolean
_tide_groups_load_retained_shares (TideTrace            *trace,
                                   GPtrArray            *groups,
                                   const char           *rows_sql,
                                   gint64                process_id,
                                   const TideReportStep *step,
                                   GError              **error)
{
  g_autoptr(GHashTable) by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *sql = g_strdup_printf ("SELECT stack_id, ifnull (scope_id, 0), device,"
                                          " sum (size * weight) FROM (%s) GROUP BY 1, 2, 3",
                                          rows_sql);
  sqlite3_stmt *stmt;
  int rc;

  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *group = g_ptr_array_index (groups, i);

      group->scopes = _tide_scope_shares_new ();
      g_hash_table_insert (by_key, stack_device_key (group->stack_id, group->device), group);
    }
  stmt = _tide_report_prepare_retained (trace, sql, process_id, step, error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      g_autofree char *key = stack_device_key (sqlite3_column_int64 (stmt, 0),
                                               sqlite3_column_int (stmt, 2));
      TideGroup *group = g_hash_table_lookup (by_key, key);

      if (group != NULL)
        share_lookup (group->scopes, sqlite3_column_int64 (stmt, 1))->bytes =
          tide_sat_from_double (sqlite3_column_double (stmt, 3));
    }
  if (!tide_sqlite_finish (_tide_trace_get_db (trace), stmt, rc, TIDE_REPORT_WHAT, error))
    return FALSE;
  for (guint i = 0; i < groups->len; i++)
    shares_name_and_sort (trace, ((TideGroup *) g_ptr_array_index (groups, i))->scopes);
  return TRUE;
}
