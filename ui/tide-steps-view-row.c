/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * One row of the steps table: a copy of a TideStepRow, plus the number of
 * transfers that started in the step and, when another run is compared,
 * a copy of its aligned step.
 */
#include "config.h"

#include "tide-steps-view-row.h"

struct _TideStepsViewRow
{
  GObject     parent_instance;

  TideStepRow step;
  TideStepRow compared;
  gboolean    has_compared;
  guint       n_transfers;
  guint       n_deaths;     /* processes of the job that died in the step */
};

G_DEFINE_FINAL_TYPE (TideStepsViewRow, tide_steps_view_row, G_TYPE_OBJECT)

static void
tide_steps_view_row_finalize (GObject *object)
{
  TideStepsViewRow *self = TIDE_STEPS_VIEW_ROW (object);

  g_free (self->step.label);
  g_free (self->compared.label);
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

guint
tide_steps_view_row_get_deaths (TideStepsViewRow *self)
{
  g_return_val_if_fail (TIDE_IS_STEPS_VIEW_ROW (self), 0);
  return self->n_deaths;
}

void
tide_steps_view_row_set_deaths (TideStepsViewRow *self,
                                guint             n_deaths)
{
  g_return_if_fail (TIDE_IS_STEPS_VIEW_ROW (self));
  self->n_deaths = n_deaths;
}

/* @compared: (nullable): the compared run's step aligned with this one;
 * copied (its device list is not). */
void
tide_steps_view_row_set_compared (TideStepsViewRow  *self,
                                  const TideStepRow *compared)
{
  g_return_if_fail (TIDE_IS_STEPS_VIEW_ROW (self));
  g_clear_pointer (&self->compared.label, g_free);
  self->has_compared = compared != NULL;
  if (compared == NULL)
    return;
  self->compared = *compared;
  self->compared.process.role = NULL;
  self->compared.devices = NULL;
  self->compared.label = g_strdup (compared->label);
}

/* Returns: (nullable): the compared run's aligned step */
const TideStepRow *
tide_steps_view_row_get_compared (TideStepsViewRow *self)
{
  g_return_val_if_fail (TIDE_IS_STEPS_VIEW_ROW (self), NULL);
  return self->has_compared ? &self->compared : NULL;
}
