/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTimelineView and its session: the view draws what the session
 * holds (trace, process, step or range, visible window, comparison) and
 * reads it there each time, so that no copy of it can lag; it follows
 * the session's notifications only to drop what it derived from them
 * (rows, caches, the cached frame).  Its public calls that choose or
 * move (a step, a range, a zoom, a pan) write to the session, and every
 * view bound to the session, this one included, follows.
 */
#include "config.h"

#include "tide-timeline-view-private.h"

/* The session's window mapped onto the widget's width (the narrowest the
 * model allows before the view is allocated, as in the session). */
void
_tide_timeline_view_get_model (TideTimelineView  *self,
                               TideTimelineModel *model)
{
  TideTrace *trace = tide_session_get_trace (self->session);

  tide_timeline_model_init (model, 0,
                            trace ? tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace)
                                  : 0,
                            gtk_widget_get_width (GTK_WIDGET (self)));
  tide_session_get_visible (self->session, &model->begin, &model->end);
}

/* ---- following the session ------------------------------------------------ */

/* Another trace, or another process of it: its steps, transfers and
 * lanes are read again.  Another trace also drops the rows of the one
 * shown before, and the reference the cache holds to it. */
static void
tide_timeline_view_session_trace_cb (TideTimelineView *self)
{
  g_assert (TIDE_IS_TIMELINE_VIEW (self));

  g_clear_pointer (&self->cache, tide_timeline_cache_free);
  self->cache = tide_timeline_cache_new (TIDE_TIMELINE_VIEW_CACHE_BYTES);
  _tide_timeline_view_load_spans (self);
  _tide_timeline_view_invalidate_data (self);
}

static void
tide_timeline_view_session_process_cb (TideTimelineView *self)
{
  g_assert (TIDE_IS_TIMELINE_VIEW (self));

  _tide_timeline_view_load_spans (self);
  _tide_timeline_view_invalidate_data (self);
}

/* The step or the range chosen: only the frame changes, not the rows. */
static void
tide_timeline_view_session_selection_cb (TideTimelineView *self)
{
  g_assert (TIDE_IS_TIMELINE_VIEW (self));
  _tide_timeline_view_invalidate_frame (self);
}

static void
tide_timeline_view_session_visible_cb (TideTimelineView *self)
{
  g_assert (TIDE_IS_TIMELINE_VIEW (self));
  _tide_timeline_view_invalidate_data (self);
}

/* The compared trace's rows are of no use to another one. */
static void
tide_timeline_view_session_compare_trace_cb (TideTimelineView *self)
{
  g_assert (TIDE_IS_TIMELINE_VIEW (self));
  g_clear_pointer (&self->compare_cache, tide_timeline_cache_free);
}

/* The comparison aligns the compared run's steps with ours; it is made
 * again when either trace or the process changes. */
static void
tide_timeline_view_session_comparison_cb (TideTimelineView *self)
{
  const TideTraceDiff *diff = tide_session_get_comparison (self->session);

  g_assert (TIDE_IS_TIMELINE_VIEW (self));

  g_clear_pointer (&self->compare_pairs, g_array_unref);
  if (diff != NULL)
    self->compare_pairs = tide_trace_diff_step_pairs (diff);
  else
    g_clear_pointer (&self->compare_cache, tide_timeline_cache_free);
  /* Reloaded, so that an error of the comparison before does not stay. */
  _tide_timeline_view_load_spans (self);
  _tide_timeline_view_invalidate_data (self);
}

/* The leak suspect chosen: its live bytes over its lane, and the steps
 * from the one where it began tinted. */
static void
tide_timeline_view_session_suspect_cb (TideTimelineView *self)
{
  const TideGroup *suspect = tide_session_get_suspect (self->session);
  g_autoptr(GArray) series = NULL;
  g_autoptr(GError) error = NULL;

  g_assert (TIDE_IS_TIMELINE_VIEW (self));

  if (suspect != NULL)
    series = tide_timeline_group_series (tide_session_get_trace (self->session),
                                         suspect->process.id, suspect->stack_id,
                                         suspect->stack_id == 0 ? suspect->scope_id : 0,
                                         suspect->device, &error);
  if (error != NULL)
    _tide_timeline_view_set_error (self, error);
  if (series == NULL)
    _tide_timeline_view_set_highlight (self, 0, 0, -1, NULL);
  else
    _tide_timeline_view_set_highlight (self, suspect->process.id, suspect->growth_step,
                                       suspect->device, series);
}

static void
connect_session (TideTimelineView *self,
                 const char       *signal,
                 GCallback         callback)
{
  g_signal_connect_object (self->session, signal, callback, self, G_CONNECT_SWAPPED);
}

/* Follows the session for as long as the view lives, and draws what it
 * shows already. */
void
_tide_timeline_view_session_init (TideTimelineView *self)
{
  connect_session (self, "notify::trace", G_CALLBACK (tide_timeline_view_session_trace_cb));
  connect_session (self, "notify::process-id", G_CALLBACK (tide_timeline_view_session_process_cb));
  connect_session (self, "notify::step", G_CALLBACK (tide_timeline_view_session_selection_cb));
  connect_session (self, "notify::range-begin",
                   G_CALLBACK (tide_timeline_view_session_selection_cb));
  connect_session (self, "notify::range-end", G_CALLBACK (tide_timeline_view_session_selection_cb));
  connect_session (self, "notify::visible-begin",
                   G_CALLBACK (tide_timeline_view_session_visible_cb));
  connect_session (self, "notify::visible-end", G_CALLBACK (tide_timeline_view_session_visible_cb));
  connect_session (self, "notify::compare-trace",
                   G_CALLBACK (tide_timeline_view_session_compare_trace_cb));
  connect_session (self, "notify::comparison",
                   G_CALLBACK (tide_timeline_view_session_comparison_cb));
  connect_session (self, "notify::suspect", G_CALLBACK (tide_timeline_view_session_suspect_cb));
  tide_timeline_view_session_comparison_cb (self);
  tide_timeline_view_session_suspect_cb (self);
}

/* ---- writing to the session ------------------------------------------------ */

gint64
tide_timeline_view_get_process_id (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), 0);
  return tide_session_get_process_id (self->session);
}

void
tide_timeline_view_set_process_id (TideTimelineView *self,
                                   gint64            process_id)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  tide_session_set_process_id (self->session, process_id);
}

gint
tide_timeline_view_get_selected_step (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), 0);
  return tide_session_get_step (self->session);
}

/* A step and a range are two kinds of selection: choosing one clears the
 * other (the session's rule), so the drill-down follows what the user
 * did last. */
void
tide_timeline_view_set_selected_step (TideTimelineView *self,
                                      gint              number)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  tide_session_set_step (self->session, number);
}

void
tide_timeline_view_get_selection_range (TideTimelineView *self,
                                        gint64           *begin,
                                        gint64           *end)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  tide_session_get_range (self->session, begin, end);
}

void
tide_timeline_view_set_selection_range (TideTimelineView *self,
                                        gint64            begin,
                                        gint64            end)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  tide_session_set_range (self->session, begin, end);
}

void
tide_timeline_view_get_visible_range (TideTimelineView *self,
                                      gint64           *begin,
                                      gint64           *end)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  tide_session_get_visible (self->session, begin, end);
}

/* Scrolling, pinching and panning move the session's window; only the
 * window's zoom actions enter its history. */
void
tide_timeline_view_set_visible_range (TideTimelineView *self,
                                      gint64            begin,
                                      gint64            end)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  tide_session_set_visible (self->session, begin, end);
}

static void
set_visible_model (TideTimelineView        *self,
                   const TideTimelineModel *model)
{
  tide_session_set_visible (self->session, model->begin, model->end);
}

void
tide_timeline_view_zoom_at (TideTimelineView *self,
                            double            x,
                            double            factor)
{
  TideTimelineModel model;

  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (factor > 0);
  _tide_timeline_view_get_model (self, &model);
  if (tide_timeline_model_zoom_around (&model, x, factor))
    set_visible_model (self, &model);
}

void
tide_timeline_view_pan_by (TideTimelineView *self,
                           double            dx)
{
  TideTimelineModel model;

  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  _tide_timeline_view_get_model (self, &model);
  if (tide_timeline_model_pan_by (&model, dx))
    set_visible_model (self, &model);
}

void
tide_timeline_view_zoom_fit (TideTimelineView *self)
{
  TideTimelineModel model;

  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  _tide_timeline_view_get_model (self, &model);
  if (tide_timeline_model_fit (&model))
    set_visible_model (self, &model);
}

/* Moves the selection to the next or previous step and scrolls it into
 * view when it is outside. */
void
tide_timeline_view_move_step (TideTimelineView *self,
                              gint              direction)
{
  const TideStepSpan *steps;
  gint64 begin, end;
  guint n;
  gint number;

  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  steps = tide_timeline_view_get_steps (self, &n);
  number = tide_timeline_step_neighbor (steps, n, tide_session_get_step (self->session),
                                        direction);
  if (number == 0)
    return;
  tide_session_set_step (self->session, number);
  tide_session_get_visible (self->session, &begin, &end);
  for (guint i = 0; i < n; i++)
    if (steps[i].number == number && (steps[i].end_ns <= begin || steps[i].start_ns >= end))
      {
        gint64 span = end - begin;
        gint64 mid = (steps[i].start_ns + steps[i].end_ns) / 2;
        tide_session_set_visible (self->session, mid - span / 2, mid - span / 2 + span);
        break;
      }
}
