/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The app's drill-down and live-capture queries.  Retained over a range
 * generalises `tidemark report --retained --step N`: for a step's span the
 * rows are the same as tide_report_retained's, grouped by scope and stack
 * together.
 */
#pragma once

#include <gio/gio.h>

#include "tide-report.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 n_processes;
  gint64 n_steps;
  gint64 n_allocations;
  gint64 last_ns;       /* latest event time, from the trace start */
} TideLiveCounts;

GPtrArray *tide_drilldown_retained (TideTrace       *trace,
                                    gint64           process_id,
                                    gint64           begin_ns,
                                    gint64           end_ns,
                                    GError         **error);
void       tide_drilldown_retained_async  (TideTrace           *trace,
                                           gint64               process_id,
                                           gint64               begin_ns,
                                           gint64               end_ns,
                                           GCancellable        *cancellable,
                                           GAsyncReadyCallback  callback,
                                           gpointer             user_data);
GPtrArray *tide_drilldown_retained_finish (TideTrace           *trace,
                                           GAsyncResult        *result,
                                           GError             **error);
gboolean   tide_drilldown_live_counts (const char     *path,
                                       TideLiveCounts *counts,
                                       GError        **error);

G_END_DECLS
