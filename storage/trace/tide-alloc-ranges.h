/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-alloc-ranges.h: how "allocated in (t0, t1] and still live at t1"
 * finds its rows without an index entry for every allocation.
 *
 * The writer inserts allocation rows when blocks are freed, so the rowid
 * order is nearly free order.  An index on (process_id, alloc_ns) over
 * every row cost the writer a third of its time per row (a second B-tree
 * insert, away from the right edge), and most rows are short-lived
 * temporaries that the queries only need near t1: a block that lived at
 * most TIDE_SHORT_LIVED_NS and is live at t1 was allocated after
 * t1 - TIDE_SHORT_LIVED_NS.  So the rows are found in two parts:
 *
 *  - long-lived rows (still live, or freed more than TIDE_SHORT_LIVED_NS
 *    after their allocation) through long_lived_allocations, a table of
 *    their (process_id, alloc_ns, id) that the writer fills as it inserts
 *    them.  It replaced a partial index on (process_id, alloc_ns) WHERE
 *    TIDE_LONG_LIVED_WHERE, whose condition SQLite evaluated for every
 *    row, where the writer now decides with one comparison that it
 *    already made.  Traces written before keep that index;
 *  - short-lived rows through allocation_ranges: runs of consecutive
 *    rowids with the smallest and largest alloc_ns of the short-lived rows
 *    among them, a block-range summary the writer keeps as it goes.
 *
 * A trace says it keeps them with the meta key "short_lived_ns"; others
 * (older traces, traces written by other means) have a full index on
 * (process_id, alloc_ns), which tide_analysis_build() makes.
 *
 * Finding the ranges of a window must not read every range: that grows
 * with the trace (a 10x longer trace, 10x the ranges read for the same
 * step).  So when the trace is finished, tide_analysis_build() indexes
 * allocation_ranges on max_alloc_ns and writes the widest range's
 * max_alloc_ns - min_alloc_ns as the meta key "range_span_ns".  A range
 * with min_alloc_ns <= t1 then has max_alloc_ns <= t1 + range_span_ns, so
 * the search is one bounded run of that index.  A trace finished before
 * has no such key and reads every range, as it always did.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define TIDE_SHORT_LIVED_NS   10000000  /* 10 ms */
#define TIDE_ALLOC_RANGE_ROWS 1024

/* Word for word in the partial index of older traces and in their
 * queries, so SQLite can see that the index covers them. */
#define TIDE_LONG_LIVED_WHERE \
  "(free_ns IS NULL OR free_ns - alloc_ns > " G_STRINGIFY (TIDE_SHORT_LIVED_NS) ")"

/* How a trace finds the rows allocated in a window and live at its end. */
typedef enum
{
  TIDE_RETAINED_BY_INDEX,       /* an index on (process_id, alloc_ns) */
  TIDE_RETAINED_BY_RANGES,      /* ranges, and the partial index */
  TIDE_RETAINED_BY_RANGES_LONG, /* ranges, and long_lived_allocations */
} TideRetainedPlan;

/* free_ns: 0 while the block is live. */
static inline gboolean
tide_alloc_is_short_lived (gint64 alloc_ns,
                           gint64 free_ns)
{
  return free_ns != 0 && free_ns - alloc_ns <= TIDE_SHORT_LIVED_NS;
}

typedef struct
{
  gint64 first_id;      /* 0: empty */
  gint64 last_id;
  gint64 min_alloc_ns;  /* over the short-lived rows only */
  gint64 max_alloc_ns;
  guint  n_short;
} TideAllocRange;

gboolean tide_alloc_range_add          (TideAllocRange *range,
                                        gint64          id,
                                        gint64          alloc_ns,
                                        gint64          free_ns);
void     tide_alloc_range_reset        (TideAllocRange *range);

char    *tide_alloc_ranges_retained_sql (TideRetainedPlan  plan,
                                         gint64            short_lived_ns,
                                         gint64            range_span_ns,
                                         const char       *process_filter);

char    *tide_alloc_ranges_made_in_sql  (const char       *alias,
                                         const char       *after,
                                         const char       *by,
                                         gint64            range_span_ns);

char    *tide_alloc_ranges_long_lived_sql (TideRetainedPlan  plan,
                                           gint64            short_lived_ns,
                                           const char       *columns);

/* A process filter for tide_alloc_ranges_retained_sql(): every process
 * when ?1 is 0, else process ?1.  The allocations columns have no declared
 * type (tide-schema.c), so "process_id IN (SELECT id ...)" would compare
 * with the INTEGER affinity of processes.id, which an index on the
 * untyped column cannot serve: SQLite scanned the whole index instead.
 * "+id" has no affinity, and the index is searched for each process. */
#define TIDE_PROCESS_FILTER_ANY \
  "process_id IN (SELECT +id FROM processes WHERE ?1 = 0 OR id = ?1)"

G_END_DECLS
