/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-step-accumulator.h: the one definition of what a step keeps.
 *
 * Fed with allocations (+) and frees (-) in time order, it knows at every
 * step end the live bytes per (stack, scope, device), the live heap, mapped
 * and device bytes, and what was born in the step and is still live.  The
 * recorder feeds it as records arrive and writes the result at every step;
 * tide-analysis.c feeds it from the allocations table for traces that came
 * without it.  Both produce the step_series and step_stats rows.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a step_series row is of; the key of the tables that gather or
 * read those rows. */
typedef struct
{
  gint64 stack_id;
  gint64 scope_id;
  gint   device;
} TideSeriesKey;

guint    tide_series_key_hash  (gconstpointer key);
gboolean tide_series_key_equal (gconstpointer a,
                                gconstpointer b);

typedef struct
{
  gint64 step_id;
  gint64 stack_id;
  gint64 scope_id;
  gint   device;
  gint64 live_bytes;
  gint64 live_count;
} TideSeriesRow;

typedef struct
{
  gint64 step_id;
  gint64 heap_live;
  gint64 mapped_live;
  gint64 device_live;
  gint64 retained_bytes;
  gint64 retained_count;
} TideStepTotals;

typedef void (*TideSeriesFunc) (const TideSeriesRow *row,
                                gpointer             user_data);

typedef struct _TideStepAccumulator TideStepAccumulator;

TideStepAccumulator *tide_step_accumulator_new        (void);
void                 tide_step_accumulator_free       (TideStepAccumulator *self);
void                 tide_step_accumulator_apply      (TideStepAccumulator *self,
                                                       const TideSeriesKey *key,
                                                       gint                 kind,
                                                       double               bytes,
                                                       double               count,
                                                       gboolean             born_in_step);
void                 tide_step_accumulator_close_step (TideStepAccumulator *self,
                                                       gint64               step_id,
                                                       TideSeriesFunc       func,
                                                       gpointer             user_data,
                                                       TideStepTotals      *totals);
double               tide_step_accumulator_get_heap_live (TideStepAccumulator *self);
double               tide_step_accumulator_get_mapped_live (TideStepAccumulator *self);
double               tide_step_accumulator_get_py_arena_live (TideStepAccumulator *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideStepAccumulator, tide_step_accumulator_free)

G_END_DECLS
