/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-timeline-view.h: host and device memory on one time axis, with step
 * bands.
 */
#pragma once

#include <gtk/gtk.h>

#include "tide-render.h"
#include "tide-session.h"
#include "tide-timeline-model.h"
#include "tide-trace-diff.h"
#include "tide-trace.h"

G_BEGIN_DECLS

#define TIDE_TYPE_TIMELINE_VIEW (tide_timeline_view_get_type ())

G_DECLARE_FINAL_TYPE (TideTimelineView, tide_timeline_view, TIDE, TIMELINE_VIEW, GtkWidget)

GtkWidget               *tide_timeline_view_new                 (TideSession      *session);
TideSession             *tide_timeline_view_get_session         (TideTimelineView *self);
gint64                   tide_timeline_view_get_process_id      (TideTimelineView *self);
void                     tide_timeline_view_set_process_id      (TideTimelineView *self,
                                                                 gint64            process_id);
gint                     tide_timeline_view_get_selected_step   (TideTimelineView *self);
void                     tide_timeline_view_set_selected_step   (TideTimelineView *self,
                                                                 gint              number);
void                     tide_timeline_view_get_selection_range (TideTimelineView *self,
                                                                 gint64           *begin,
                                                                 gint64           *end);
void                     tide_timeline_view_set_selection_range (TideTimelineView *self,
                                                                 gint64            begin,
                                                                 gint64            end);
gint                     tide_timeline_view_get_highlight_step  (TideTimelineView *self);
void                     tide_timeline_view_get_visible_range   (TideTimelineView *self,
                                                                 gint64           *begin,
                                                                 gint64           *end);
void                     tide_timeline_view_set_visible_range   (TideTimelineView *self,
                                                                 gint64            begin,
                                                                 gint64            end);
void                     tide_timeline_view_zoom_at             (TideTimelineView *self,
                                                                 double            x,
                                                                 double            factor);
void                     tide_timeline_view_pan_by              (TideTimelineView *self,
                                                                 double            dx);
void                     tide_timeline_view_zoom_fit            (TideTimelineView *self);
void                     tide_timeline_view_move_step           (TideTimelineView *self,
                                                                 gint              direction);
void                     tide_timeline_view_reload              (TideTimelineView *self);
TideTrace               *tide_timeline_view_get_compare_trace   (TideTimelineView *self);
const TideTimelineData  *tide_timeline_view_get_compare_data    (TideTimelineView *self);
const TideStepSpan      *tide_timeline_view_get_steps           (TideTimelineView *self,
                                                                 guint            *n_steps);
const TideTimelineData  *tide_timeline_view_get_data            (TideTimelineView *self);
gint64                   tide_timeline_view_process_at          (TideTimelineView *self,
                                                                 double            x,
                                                                 double            y);
const TidePalette       *tide_timeline_view_get_palette         (TideTimelineView *self);
const char              *tide_timeline_view_get_error           (TideTimelineView *self);

G_END_DECLS
