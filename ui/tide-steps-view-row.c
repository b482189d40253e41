/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * One row of the steps table: a copy of a TideStepRow, plus the number of
 * transfers that started in the step.
 */
#include "config.h"

#include "tide-steps-view-row.h"

struct _TideStepsViewRow
{
  GObject     parent_instance;

  TideStepRow step;
  guint       n_transfers;
};

G_DEFINE_FINAL_TYPE (TideStepsViewRow, tide_steps_view_row, G_TYPE_OBJECT)

static void
tide_steps_view_row_finalize (GObject *object)
{
  TideStepsViewRow *self = TIDE_STEPS_VIEW_ROW (object);

  g_free (self->step.label);
  G_OBJECT_CLASS (tide_steps_view_row_parent_class)->finalize (object);
}

static void
tide_steps_view_row_class_init (TideStepsViewRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tide_steps_view_row_finalize;
}

static void
tide_steps_view_row_init (TideStepsViewRow *self)
{
}

TideStepsViewRow *
tide_steps_view_row_new (const TideStepRow *row,
                         guint              n_transfers)
{
  TideStepsViewRow *self;

  g_return_val_if_fail (row != NULL, NULL);

  self = g_object_new (TIDE_TYPE_STEPS_VIEW_ROW, NULL);
  self->step = *row;
  self->step.label = g_strdup (row->label);
  self->n_transfers = n_transfers;
  return self;
}

const TideStepRow *
tide_steps_view_row_get_step (TideStepsViewRow *self)
{
  g_return_val_if_fail (TIDE_IS_STEPS_VIEW_ROW (self), NULL);
  return &self->step;
}

guint
tide_steps_view_row_get_transfers (TideStepsViewRow *self)
{
  g_return_val_if_fail (TIDE_IS_STEPS_VIEW_ROW (self), 0);
  return self->n_transfers;
}
