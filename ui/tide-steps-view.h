/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-steps-view.h: the steps table, one row per step of the chosen process.
 */
#pragma once

#include <gtk/gtk.h>

#include "tide-report.h"
#include "tide-timeline-data.h"
#include "tide-trace-diff.h"

G_BEGIN_DECLS

#define TIDE_TYPE_STEPS_VIEW (tide_steps_view_get_type ())

G_DECLARE_FINAL_TYPE (TideStepsView, tide_steps_view, TIDE, STEPS_VIEW, GtkWidget)

typedef enum
{
  TIDE_STEPS_COLUMN_STEP,
  TIDE_STEPS_COLUMN_DURATION,
  TIDE_STEPS_COLUMN_HOST_CHANGE,
  TIDE_STEPS_COLUMN_DEVICE_CHANGE,
  TIDE_STEPS_COLUMN_RETAINED,
  TIDE_STEPS_COLUMN_TRANSFERS,
  TIDE_STEPS_COLUMN_ENDED,          /* processes of the job that died in the step */
  TIDE_STEPS_COLUMN_HEAP_DIFF,      /* compared run less this one: heap change */
  TIDE_STEPS_COLUMN_RETAINED_DIFF,  /* ... and retained bytes */
  TIDE_STEPS_N_COLUMNS
} TideStepsColumn;

GtkWidget  *tide_steps_view_new               (void);
void        tide_steps_view_set_comparison    (TideStepsView   *self,
                                               const TideTraceDiff *diff);
gboolean    tide_steps_view_column_known      (TideStepsColumn  column,
                                               gpointer         row);
gint64      tide_steps_view_get_process_id    (TideStepsView   *self);
void        tide_steps_view_set_process_id    (TideStepsView   *self,
                                               gint64           process_id);
gint        tide_steps_view_get_selected_step (TideStepsView   *self);
void        tide_steps_view_set_selected_step (TideStepsView   *self,
                                               gint             number);
GListModel *tide_steps_view_get_model         (TideStepsView   *self);
void        tide_steps_view_sort_by           (TideStepsView   *self,
                                               TideStepsColumn  column,
                                               GtkSortType      order);
gint64      tide_steps_view_column_value      (TideStepsColumn  column,
                                               gpointer         row);

G_END_DECLS
