/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-steps-view-row.h: one row of the steps table.
 */
#pragma once

#include <glib-object.h>

#include "tide-report.h"

G_BEGIN_DECLS

#define TIDE_TYPE_STEPS_VIEW_ROW (tide_steps_view_row_get_type ())

G_DECLARE_FINAL_TYPE (TideStepsViewRow, tide_steps_view_row, TIDE, STEPS_VIEW_ROW, GObject)

TideStepsViewRow  *tide_steps_view_row_new           (const TideStepRow *row,
                                                      guint              n_transfers);
const TideStepRow *tide_steps_view_row_get_step      (TideStepsViewRow  *self);
guint              tide_steps_view_row_get_transfers (TideStepsViewRow  *self);
guint              tide_steps_view_row_get_deaths    (TideStepsViewRow  *self);
void               tide_steps_view_row_set_deaths    (TideStepsViewRow  *self,
                                                      guint              n_deaths);
void               tide_steps_view_row_set_compared  (TideStepsViewRow  *self,
                                                      const TideStepRow *compared);
const TideStepRow *tide_steps_view_row_get_compared  (TideStepsViewRow  *self);

G_END_DECLS
