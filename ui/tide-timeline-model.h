/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The timeline's geometry as plain arithmetic, with no widget: time <-> x,
 * zoom around a point, pan, tick choice, step hit-testing and the labels of
 * times and sizes.  Times are nanoseconds from the trace start.
 */
#pragma once

#include <glib.h>

#include "tide-timeline-data.h"

G_BEGIN_DECLS

/* The narrowest view: one microsecond across the widget. */
#define TIDE_TIMELINE_MIN_SPAN_NS 1000

typedef struct
{
  gint64 doc_begin;     /* what "fit" shows */
  gint64 doc_end;
  gint64 begin;         /* what is visible */
  gint64 end;
  double width;         /* pixels across the visible range */
} TideTimelineModel;

void     tide_timeline_model_init        (TideTimelineModel       *self,
                                          gint64                   doc_begin,
                                          gint64                   doc_end,
                                          double                   width);
void     tide_timeline_model_set_width   (TideTimelineModel       *self,
                                          double                   width);
gboolean tide_timeline_model_set_range   (TideTimelineModel       *self,
                                          gint64                   begin,
                                          gint64                   end);
gboolean tide_timeline_model_fit         (TideTimelineModel       *self);
double   tide_timeline_model_time_to_x   (const TideTimelineModel *self,
                                          gint64                   t);
gint64   tide_timeline_model_x_to_time   (const TideTimelineModel *self,
                                          double                   x);
gboolean tide_timeline_model_zoom_around (TideTimelineModel       *self,
                                          double                   x,
                                          double                   factor);
gboolean tide_timeline_model_pan_by      (TideTimelineModel       *self,
                                          double                   dx);

gint64   tide_timeline_tick_interval     (gint64                   span_ns,
                                          double                   width,
                                          double                   min_px);
char    *tide_timeline_format_time       (gint64                   t,
                                          gint64                   interval);

gint     tide_timeline_step_at           (const TideStepSpan      *steps,
                                          guint                    n_steps,
                                          gint64                   t);
gint     tide_timeline_step_neighbor     (const TideStepSpan      *steps,
                                          guint                    n_steps,
                                          gint                     number,
                                          gint                     direction);

G_END_DECLS
