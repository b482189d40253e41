/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-alloc-ranges.h"

void
tide_alloc_range_reset (TideAllocRange *range)
{
  *range = (TideAllocRange) { 0 };
}

/**
 * tide_alloc_range_add:
 * @id: the rowid the row was given
 * @free_ns: 0 while the block is live
 *
 * Extends @range by row @id.  Returns %FALSE, leaving @range as it was,
 * when @id does not follow it or it is full: the caller writes it (when
 * n_short > 0), resets it and adds the row again.
 */
gboolean
tide_alloc_range_add (TideAllocRange *range,
                      gint64          id,
                      gint64          alloc_ns,
                      gint64          free_ns)
{
  gboolean is_short = tide_alloc_is_short_lived (alloc_ns, free_ns);

  if (range->first_id != 0 &&
      (id != range->last_id + 1 || id - range->first_id >= TIDE_ALLOC_RANGE_ROWS))
    return FALSE;
  if (range->first_id == 0)
    range->first_id = id;
  range->last_id = id;
  if (!is_short)
    return TRUE;
  if (range->n_short == 0 || alloc_ns < range->min_alloc_ns)
    range->min_alloc_ns = alloc_ns;
  if (range->n_short == 0 || alloc_ns > range->max_alloc_ns)
    range->max_alloc_ns = alloc_ns;
  range->n_short++;
  return TRUE;
}

/**
 * tide_alloc_ranges_retained_sql:
 * @plan: how the trace finds such rows
 * @short_lived_ns: the trace's meta "short_lived_ns" (unused by
 *   %TIDE_RETAINED_BY_INDEX)
 * @range_span_ns: the trace's meta "range_span_ns", or -1 when it has none
 * @process_filter: an SQL condition on process_id
 *
 * A SELECT of the allocations rows (every column) of the processes that
 * @process_filter selects, made in (?2, ?3] and still live at ?3.
 *
 * Returns: (transfer full): SQL, for use as a subquery
 */
char *
tide_alloc_ranges_retained_sql (TideRetainedPlan  plan,
                                gint64            short_lived_ns,
                                gint64            range_span_ns,
                                const char       *process_filter)
{
  const char *made_and_live = "alloc_ns > ?2 AND alloc_ns <= ?3"
                              " AND (free_ns IS NULL OR free_ns > ?3)";
  g_autofree char *long_lived = NULL;
  g_autofree char *after = NULL;
  g_autofree char *near = NULL;

  if (plan == TIDE_RETAINED_BY_INDEX)
    return g_strdup_printf ("SELECT * FROM allocations WHERE %s AND %s",
                            process_filter, made_and_live);
  if (plan == TIDE_RETAINED_BY_RANGES_LONG)
    long_lived = g_strdup_printf (
      "SELECT * FROM allocations WHERE id IN (SELECT id FROM long_lived_allocations"
      " WHERE %s AND alloc_ns > ?2 AND alloc_ns <= ?3) AND (free_ns IS NULL OR free_ns > ?3)",
      process_filter);
  else
    long_lived = g_strdup_printf (
      "SELECT * FROM allocations WHERE %s AND %s"
      " AND (free_ns IS NULL OR free_ns - alloc_ns > %" G_GINT64_FORMAT ")",
      process_filter, made_and_live, short_lived_ns);
  /* A short-lived row made by ?3 - short_lived_ns is gone by ?3.  CROSS
   * JOIN keeps the ranges the outer loop: given "process_id = ?1", SQLite
   * preferred to build an automatic index on allocations, reading every
   * row of the trace for each query. */
  after = g_strdup_printf ("max (?2, ?3 - %" G_GINT64_FORMAT ")", short_lived_ns);
  near = tide_alloc_ranges_made_in_sql ("r", after, "?3", range_span_ns);
  return g_strdup_printf (
    "%s"
    " UNION ALL "
    "SELECT allocations.* FROM allocation_ranges r"
    " CROSS JOIN allocations ON allocations.id BETWEEN r.first_id AND r.last_id"
    " WHERE %s AND %s AND %s AND free_ns - alloc_ns <= %" G_GINT64_FORMAT,
    long_lived, near, process_filter, made_and_live, short_lived_ns);
}

/**
 * tide_alloc_ranges_made_in_sql:
 * @alias: the name of allocation_ranges in the query
 * @after: an SQL expression: the start of the times, excluded
 * @by: an SQL expression: their end, included
 * @range_span_ns: the trace's meta "range_span_ns", or -1 when it has none
 *
 * The condition on allocation_ranges that keeps the ranges whose
 * short-lived rows may have been made in (@after, @by].  A range's
 * min_alloc_ns <= @by bounds its max_alloc_ns by @by and the widest
 * span, which lets the index on max_alloc_ns end its search there.
 *
 * Returns: (transfer full): SQL
 */
char *
tide_alloc_ranges_made_in_sql (const char *alias,
                               const char *after,
                               const char *by,
                               gint64      range_span_ns)
{
  g_autofree char *span_bound = range_span_ns >= 0
    ? g_strdup_printf (" AND %s.max_alloc_ns <= %s + %" G_GINT64_FORMAT, alias, by, range_span_ns)
    : g_strdup ("");

  return g_strdup_printf ("%1$s.max_alloc_ns > %2$s AND %1$s.min_alloc_ns <= %3$s%4$s",
                          alias, after, by, span_bound);
}

/**
 * tide_alloc_ranges_long_lived_sql:
 * @plan: how the trace finds its rows
 * @short_lived_ns: as for tide_alloc_ranges_retained_sql()
 * @columns: what to select of each allocations row
 *
 * A SELECT of @columns of the rows of process ?1 made at or before ?2
 * that may be live more than @short_lived_ns after they were made: a
 * superset of those live at any time t made by t - @short_lived_ns.
 * Where the trace keeps no short-lived rows apart
 * (%TIDE_RETAINED_BY_INDEX), every row of the process made by ?2.
 *
 * Returns: (transfer full): SQL
 */
char *
tide_alloc_ranges_long_lived_sql (TideRetainedPlan  plan,
                                  gint64            short_lived_ns,
                                  const char       *columns)
{
  if (plan == TIDE_RETAINED_BY_RANGES_LONG)
    return g_strdup_printf ("SELECT %s FROM allocations WHERE id IN"
                            " (SELECT id FROM long_lived_allocations"
                            "  WHERE process_id = ?1 AND alloc_ns <= ?2)", columns);
  if (plan == TIDE_RETAINED_BY_RANGES)
    return g_strdup_printf ("SELECT %s FROM allocations WHERE process_id = ?1 AND alloc_ns <= ?2"
                            " AND (free_ns IS NULL OR free_ns - alloc_ns > %" G_GINT64_FORMAT ")",
                            columns, short_lived_ns);
  return g_strdup_printf ("SELECT %s FROM allocations WHERE process_id = ?1 AND alloc_ns <= ?2",
                          columns);
}
