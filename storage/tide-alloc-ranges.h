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
 *    after their allocation) through a partial index on
 *    (process_id, alloc_ns) WHERE TIDE_LONG_LIVED_WHERE;
 *  - short-lived rows through allocation_ranges: runs of consecutive
 *    rowids with the smallest and largest alloc_ns of the short-lived rows
 *    among them, a block-range summary the writer keeps as it goes.
 *
 * A trace says it keeps them with the meta key "short_lived_ns"; others
 * (older traces, traces written by other means) have a full index on
 * (process_id, alloc_ns), which tide_analysis_build() makes.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define TIDE_SHORT_LIVED_NS   10000000  /* 10 ms */
#define TIDE_ALLOC_RANGE_ROWS 1024

/* Word for word in the partial index and in the queries, so SQLite can
 * see that the index covers them. */
#define TIDE_LONG_LIVED_WHERE \
  "(free_ns IS NULL OR free_ns - alloc_ns > " G_STRINGIFY (TIDE_SHORT_LIVED_NS) ")"

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

char    *tide_alloc_ranges_retained_sql (gint64      short_lived_ns,
                                         const char *process_filter);

G_END_DECLS
