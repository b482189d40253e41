/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTimelineView input: every handler reads the event and calls one of
 * the view's public functions (zoom_at, pan_by, set_selected_step, ...),
 * which is what keyboard actions and tests call too; they write to the
 * view's session, whose changes the view then draws.  Zoom keys are the
 * window's (win.zoom-in and the rest, through TideSession), so that they
 * zoom alike wherever the focus is; the view has only gestures.
 *
 *   Ctrl+wheel, pinch                    zoom (around the pointer)
 *   horizontal wheel, Shift+wheel        pan
 *   middle or Shift+primary drag         pan
 *   primary drag                         select a range
 *   primary click                        select the step under the pointer; on
 *                                        the job lane, show the process under it
 *   Left/Right                           previous/next step
 */
#include "config.h"

#include "tide-timeline-view-private.h"

#include <math.h>

#define DRAG_THRESHOLD 4.0
#define WHEEL_ZOOM     1.25
#define WHEEL_PAN_PX   48.0

static double
anchor_x (TideTimelineView *self)
{
  if (self->hover_x >= 0)
    return self->hover_x;
  return gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
}

static void
tide_timeline_view_motion_cb (TideTimelineView         *self,
                              double                    x,
                              double                    y,
                              GtkEventControllerMotion *motion)
{
  self->hover_x = x;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
tide_timeline_view_leave_cb (TideTimelineView         *self,
                             GtkEventControllerMotion *motion)
{
  self->hover_x = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
tide_timeline_view_scroll_cb (TideTimelineView         *self,
                              double                    dx,
                              double                    dy,
                              GtkEventControllerScroll *scroll)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (scroll));
  gboolean wheel = gtk_event_controller_scroll_get_unit (scroll) == GDK_SCROLL_UNIT_WHEEL;

  if (state & GDK_CONTROL_MASK)
    {
      tide_timeline_view_zoom_at (self, anchor_x (self), pow (wheel ? WHEEL_ZOOM : 1.01, -dy));
      return TRUE;
    }
  if (state & GDK_SHIFT_MASK && dx == 0)
    dx = dy;
  if (dx != 0)
    {
      tide_timeline_view_pan_by (self, dx * (wheel ? WHEEL_PAN_PX : 1.0));
      return TRUE;
    }
  /* A plain vertical wheel belongs to whatever scrolls around us. */
  return FALSE;
}

static void
tide_timeline_view_zoom_begin_cb (TideTimelineView *self,
                                  GdkEventSequence *sequence,
                                  GtkGestureZoom   *gesture)
{
  double x, y;

  tide_timeline_view_get_visible_range (self, &self->gesture_begin, &self->gesture_end);
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &x, &y))
    x = anchor_x (self);
  self->gesture_x = x;
}

static void
tide_timeline_view_zoom_scale_changed_cb (TideTimelineView *self,
                                          double            scale,
                                          GtkGestureZoom   *gesture)
{
  TideTimelineModel model;

  /* Pinch scale is relative to the start of the gesture. */
  _tide_timeline_view_get_model (self, &model);
  model.begin = self->gesture_begin;
  model.end = self->gesture_end;
  if (scale > 0)
    tide_timeline_model_zoom_around (&model, self->gesture_x, scale);
  tide_timeline_view_set_visible_range (self, model.begin, model.end);
}

static void
tide_timeline_view_drag_begin_cb (TideTimelineView *self,
                                  double            x,
                                  double            y,
                                  GtkGestureDrag   *drag)
{
  guint button = gtk_gesture_single_get_current_button (GTK_GESTURE_SINGLE (drag));
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (drag));

  self->drag_start_x = self->drag_x = x;
  self->drag_start_y = y;
  self->drag_last_dx = 0;
  self->dragging_range = FALSE;
  self->panning = button == GDK_BUTTON_MIDDLE || (state & GDK_SHIFT_MASK) != 0;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
tide_timeline_view_drag_update_cb (TideTimelineView *self,
                                   double            dx,
                                   double            dy,
                                   GtkGestureDrag   *drag)
{
  if (self->panning)
    {
      /* Content follows the pointer: dragging right shows earlier times. */
      tide_timeline_view_pan_by (self, -(dx - self->drag_last_dx));
      self->drag_last_dx = dx;
      return;
    }
  if (fabs (dx) >= DRAG_THRESHOLD)
    self->dragging_range = TRUE;
  self->drag_x = self->drag_start_x + dx;
  if (self->dragging_range)
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
tide_timeline_view_drag_end_cb (TideTimelineView *self,
                                double            dx,
                                double            dy,
                                GtkGestureDrag   *drag)
{
  double x0 = MIN (self->drag_start_x, self->drag_start_x + dx);
  double x1 = MAX (self->drag_start_x, self->drag_start_x + dx);
  TideTimelineModel model;
  gint64 picked;

  _tide_timeline_view_get_model (self, &model);
  if (self->panning)
    self->panning = FALSE;
  else if (self->dragging_range)
    {
      gint64 begin = tide_timeline_model_x_to_time (&model, MAX (x0, 0));
      gint64 end = tide_timeline_model_x_to_time (&model, x1);

      self->dragging_range = FALSE;
      g_signal_emit_by_name (self, "selection-range", begin, end);
    }
  else if ((picked = tide_timeline_view_process_at (self, self->drag_start_x,
                                                     self->drag_start_y)) > 0)
    tide_timeline_view_set_process_id (self, picked);
  else
    {
      guint n;
      const TideStepSpan *steps = tide_timeline_view_get_steps (self, &n);
      gint i = tide_timeline_step_at (steps, n,
                                      tide_timeline_model_x_to_time (&model, self->drag_start_x));
      tide_timeline_view_set_selected_step (self, i >= 0 ? steps[i].number : 0);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
action_step (GtkWidget  *widget,
             const char *name,
             GVariant   *param)
{
  tide_timeline_view_move_step (TIDE_TIMELINE_VIEW (widget),
                                g_str_equal (name, "timeline.next-step") ? 1 : -1);
}

void
_tide_timeline_view_class_input_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "timeline.previous-step", NULL, action_step);
  gtk_widget_class_install_action (widget_class, "timeline.next-step", NULL, action_step);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, 0,
                                       "timeline.previous-step", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, 0,
                                       "timeline.next-step", NULL);
}

void
_tide_timeline_view_input_init (TideTimelineView *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  GtkGesture *zoom = gtk_gesture_zoom_new ();
  GtkGesture *drag = gtk_gesture_drag_new ();

  g_signal_connect_object (motion, "motion", G_CALLBACK (tide_timeline_view_motion_cb), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (motion, "leave", G_CALLBACK (tide_timeline_view_leave_cb), self,
                           G_CONNECT_SWAPPED);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  g_signal_connect_object (scroll, "scroll", G_CALLBACK (tide_timeline_view_scroll_cb), self,
                           G_CONNECT_SWAPPED);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);

  g_signal_connect_object (zoom, "begin", G_CALLBACK (tide_timeline_view_zoom_begin_cb), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (zoom, "scale-changed",
                           G_CALLBACK (tide_timeline_view_zoom_scale_changed_cb), self,
                           G_CONNECT_SWAPPED);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (zoom));

  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), 0);
  g_signal_connect_object (drag, "drag-begin", G_CALLBACK (tide_timeline_view_drag_begin_cb),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (drag, "drag-update", G_CALLBACK (tide_timeline_view_drag_update_cb),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (drag, "drag-end", G_CALLBACK (tide_timeline_view_drag_end_cb),
                           self, G_CONNECT_SWAPPED);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
}
