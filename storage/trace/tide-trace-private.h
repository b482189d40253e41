/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-trace-private.h: what the layers of storage/ reach in a TideTrace:
 * its connection, its reader for other threads, its early end.
 */
#pragma once

#include <gio/gio.h>
#include <sqlite3.h>

#include "tide-trace.h"

G_BEGIN_DECLS

/* The connection every storage query runs on; owned by the trace. */
sqlite3 *_tide_trace_get_db (TideTrace *self);
char    *_tide_trace_retained_rows_sql (TideTrace  *self,
                                        const char *process_filter);
char    *_tide_trace_long_lived_rows_sql (TideTrace  *self,
                                          const char *columns);
/* How long a short-lived row lives at most (tide-alloc-ranges.h); 0 where
 * the trace keeps none apart. */
gint64   _tide_trace_get_short_lived_ns (TideTrace *self);
/* The widest block range's max_alloc_ns - min_alloc_ns, -1 where the
 * trace was not indexed at its finish (tide-alloc-ranges.h). */
gint64   _tide_trace_get_range_span_ns  (TideTrace *self);
/* "disk full at 41.2 s" for a trace whose writes were refused (its meta
 * says stopped_reason), else NULL. */
char    *_tide_trace_describe_early_end_db (sqlite3 *db);
gboolean _tide_trace_has_live_at_end (TideTrace *self);
TideTrace *_tide_trace_lock_reader   (TideTrace     *self,
                                      GCancellable  *cancellable,
                                      GError       **error);
void       _tide_trace_unlock_reader (TideTrace     *self);

/* Whether the trace holds inline frames (TIDE_FRAME_INLINE), and their
 * index, which older traces lack. */
gboolean _tide_trace_has_inline_frames (TideTrace *self);
gboolean _tide_trace_has_stacks        (TideTrace *self);
gboolean _tide_trace_has_residency_totals (TideTrace *self);

G_END_DECLS
