/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-report-private.h: what the report files share: labels, frames,
 * the RSS classes of step rows, scope shares.
 */
#pragma once

#include <sqlite3.h>

#include "tide-plumbing.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-trace-private.h"

G_BEGIN_DECLS

/* What a failed report query says, before SQLite's message
 * (tide_sqlite_finish()). */
#define TIDE_REPORT_WHAT "cannot query the trace"

char         *_tide_report_column_dup  (sqlite3_stmt  *stmt,
                                        int            col);
TideGroup    *_tide_group_new          (gint64         process_id,
                                        gint64         pid,
                                        gint           device);
gboolean      _tide_report_label_groups (TideTrace    *trace,
                                         GPtrArray    *groups,
                                         GError      **error);
gboolean      _tide_report_label_steps  (TideTrace    *trace,
                                         GPtrArray    *rows,
                                         GError      **error);

gboolean      _tide_series_grows_steadily (const double *live,
                                           gint          n,
                                           double        min_bytes,
                                           gint         *start_out,
                                           double       *net_out);

/* tide-report-processes.c */
TideProcess  *_tide_report_steps_source (GPtrArray         *processes,
                                         const TideProcess *p);
gboolean      _tide_report_step_at      (sqlite3           *db,
                                         gint64             source_id,
                                         gint64             ns,
                                         gint              *out,
                                         GError           **error);

/* tide-report.c */
/* A step of one process: its row and its span, in the trace's time. */
typedef struct
{
  gint64 id;
  gint64 start_ns;
  gint64 end_ns;
} TideReportStep;

gboolean      _tide_report_load_group_frames (TideTrace *trace,
                                              GPtrArray *groups,
                                              GError   **error);
sqlite3_stmt *_tide_report_prepare_retained  (TideTrace            *trace,
                                              const char           *sql,
                                              gint64                process_id,
                                              const TideReportStep *step,
                                              GError              **error);

/* tide-report-rss.c */
gboolean      _tide_report_add_classes  (TideTrace    *trace,
                                         GPtrArray    *rows,
                                         GError      **error);

/* tide-report-steps.c */
void          _tide_step_row_read_span  (TideStepRow  *row,
                                         TideTrace    *trace,
                                         sqlite3_stmt *stmt,
                                         int           col);

/* tide-report-scopes.c */
GArray       *_tide_scope_shares_new   (void);
gboolean      _tide_group_load_growth_shares    (TideTrace   *trace,
                                                 TideGroup   *group,
                                                 gint         n_steps,
                                                 GError     **error);
gboolean      _tide_groups_load_retained_shares (TideTrace            *trace,
                                                 GPtrArray            *groups,
                                                 const char           *rows_sql,
                                                 gint64                process_id,
                                                 const TideReportStep *step,
                                                 GError              **error);

G_END_DECLS
