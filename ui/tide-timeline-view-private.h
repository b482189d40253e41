/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-timeline-view-private.h: TideTimelineView's instance, shared by its
 * files.
 */
#pragma once

#include "tide-timeline-view.h"

G_BEGIN_DECLS

/* LOD rows kept per trace: enough for every level of a few lanes of a
 * large trace. */
#define TIDE_TIMELINE_VIEW_CACHE_BYTES (64 * 1024 * 1024)

struct _TideTimelineView
{
  GtkWidget          parent_instance;

  /* Owned references */
  TideSession       *session;        /* what is shown: trace, process, selection, window */
  GArray            *steps;          /* TideStepSpan */
  GArray            *transfers;      /* TideTransferMark */
  TideTimelineData  *data;           /* for the session's window and the width */
  TideJobLane       *job;            /* every process's PSS, same columns as data */
  GPtrArray         *job_processes;  /* TideProcess: the session tables' (a reference), for the job lane */
  TideJobPeak        job_peak;       /* the job lane's title, read once a trace */
  GArray            *highlight;      /* TideSeriesPoint of the chosen suspect */
  TideTimelineCache *cache;          /* LOD rows read so far, for panning */
  GArray            *compare_pairs;  /* TideStepPair: the compared steps aligned with ours */
  TideTimelineCache *compare_cache;  /* the compared trace's LOD rows read so far */
  TideTimelineData  *compare_data;   /* its lanes in data's columns */
  GskRenderNode     *frame;          /* cached drawing of the current state */
  char              *error;

  const TidePalette *palette;        /* &palette_value */
  TidePalette        palette_value;  /* the stylesheet's colours */
  gint64             highlight_process_id;
  gint               highlight_step;
  gint               highlight_device;

  double             hover_x;        /* < 0: pointer outside */
  double             drag_start_x;
  double             drag_start_y;
  double             drag_x;
  double             drag_last_dx;
  gint64             gesture_begin;  /* range when a pinch started */
  gint64             gesture_end;
  double             gesture_x;

  guint              dragging_range : 1;
  guint              panning : 1;
};

/* tide-timeline-view.c */
void _tide_timeline_view_invalidate_frame (TideTimelineView  *self);
void _tide_timeline_view_invalidate_data  (TideTimelineView  *self);
void _tide_timeline_view_load_spans       (TideTimelineView  *self);
void _tide_timeline_view_set_error        (TideTimelineView  *self,
                                           GError            *error);
void _tide_timeline_view_set_highlight    (TideTimelineView  *self,
                                           gint64             process_id,
                                           gint               growth_step,
                                           gint               device,
                                           GArray            *series);

/* tide-timeline-view-input.c */
void _tide_timeline_view_class_input_init (GtkWidgetClass    *widget_class);
void _tide_timeline_view_input_init       (TideTimelineView  *self);

/* tide-timeline-view-session.c */
void _tide_timeline_view_session_init     (TideTimelineView  *self);
void _tide_timeline_view_get_model        (TideTimelineView  *self,
                                           TideTimelineModel *model);

G_END_DECLS
