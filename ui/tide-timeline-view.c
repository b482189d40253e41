/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTimelineView: host and device lanes on one time axis with numbered
 * step bands, drawn by tide_render_timeline().  The frame is cached as a
 * render node keyed on everything it shows; pointer motion only redraws
 * the hover line on top of it.
 *
 * Data is read on the main thread on purpose: the trace's SQLite
 * connection is single-threaded (the steps table and drill-down use it
 * too), and a view query reads O(width) summary rows, a few milliseconds
 * even on traces with millions of samples (see bench/bench-timeline.c).
 */
#include "config.h"

#include "tide-timeline-view.h"

#include <math.h>
#include <string.h>

#include "tide-palette.h"
#include "tide-processes.h"
#include "tide-render.h"
#include "tide-timeline-compare.h"
#include "tide-timeline-view-private.h"


G_DEFINE_FINAL_TYPE (TideTimelineView, tide_timeline_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_TRACE,
  PROP_PROCESS_ID,
  PROP_SELECTED_STEP,
  PROP_SELECTION_BEGIN,
  PROP_SELECTION_END,
  PROP_VISIBLE_BEGIN,
  PROP_VISIBLE_END,
  N_PROPS
};

enum {
  SELECTION_RANGE,
  N_SIGNALS
};

#define CACHE_BYTES (64 * 1024 * 1024)

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void
invalidate_frame (TideTimelineView *self)
{
  g_clear_pointer (&self->frame, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
invalidate_data (TideTimelineView *self)
{
  g_clear_pointer (&self->data, tide_timeline_data_free);
  g_clear_pointer (&self->compare_data, tide_timeline_data_free);
  g_clear_pointer (&self->job, tide_job_lane_free);
  invalidate_frame (self);
}

static void
notify_visible (TideTimelineView *self)
{
  invalidate_data (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VISIBLE_BEGIN]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VISIBLE_END]);
}

static void
set_error (TideTimelineView *self,
           GError           *error)
{
  g_free (self->error);
  self->error = error ? g_strdup (error->message) : NULL;
}

/* Steps and transfers are read once per trace and process. */
static void
load_spans (TideTimelineView *self)
{
  g_autoptr(GError) error = NULL;

  g_clear_pointer (&self->steps, g_array_unref);
  g_clear_pointer (&self->transfers, g_array_unref);
  g_clear_pointer (&self->job_processes, g_ptr_array_unref);
  self->job_peak = (TideJobPeak) { .step = -1 };
  set_error (self, NULL);
  if (self->trace == NULL)
    return;
  self->steps = tide_timeline_steps (self->trace, self->process_id, &error);
  if (self->steps != NULL)
    self->transfers = tide_timeline_transfers (self->trace, self->process_id, &error);
  if (self->transfers != NULL)
    self->job_processes = tide_trace_list_processes (self->trace, &error);
  /* The job lane, which says it, is drawn with two processes or more. */
  if (self->job_processes != NULL && self->job_processes->len >= 2)
    tide_report_job_peak (self->trace, &self->job_peak, &error);
  if (error != NULL)
    set_error (self, error);
}

static gboolean
ensure_data (TideTimelineView *self,
             int               width)
{
  g_autoptr(GError) error = NULL;

  if (self->trace == NULL || self->error != NULL)
    return FALSE;
  if (self->data != NULL && self->data->n_columns == (guint) width &&
      self->data->begin_ns == self->model.begin && self->data->end_ns == self->model.end)
    return TRUE;
  g_clear_pointer (&self->data, tide_timeline_data_free);
  g_clear_pointer (&self->compare_data, tide_timeline_data_free);
  g_clear_pointer (&self->job, tide_job_lane_free);
  self->data = tide_timeline_data_query_cached (self->trace, self->cache, self->process_id,
                                                self->model.begin, self->model.end, width,
                                                &error);
  /* Through the same cache as the lanes: a pan reads only new columns. */
  if (self->data != NULL && self->job_processes != NULL)
    self->job = tide_job_lane_query (self->trace, self->cache, self->job_processes,
                                     self->model.begin, self->model.end, width, &error);
  if (self->data != NULL && self->job != NULL && self->compare_trace != NULL)
    self->compare_data = tide_timeline_compare_query (self->compare_trace, self->compare_cache,
                                                      self->compare_process_id,
                                                      (const TideStepPair *) self->compare_pairs->data,
                                                      self->compare_pairs->len, self->model.begin,
                                                      self->model.end, width, &error);
  if (self->data == NULL || self->job == NULL ||
      (self->compare_trace != NULL && self->compare_data == NULL))
    set_error (self, error);
  return self->data != NULL && self->job != NULL && self->error == NULL;
}

static void
fill_scene (TideTimelineView *self,
            TideRenderScene  *scene)
{
  *scene = (TideRenderScene) {
    .data = self->data,
    .steps = self->steps ? (const TideStepSpan *) self->steps->data : NULL,
    .n_steps = self->steps ? self->steps->len : 0,
    .transfers = self->transfers ? (const TideTransferMark *) self->transfers->data : NULL,
    .n_transfers = self->transfers ? self->transfers->len : 0,
    .begin_ns = self->model.begin,
    .end_ns = self->model.end,
    .selected_step = self->selected_step,
    .selection_begin = self->selection_begin,
    .selection_end = self->selection_end,
    .palette = self->palette,
    .show_labels = TRUE,
    .job = self->job,
    .job_peak = &self->job_peak,
    .chosen_process = self->process_id,
    .compare = self->compare_data,
  };
  if (self->highlight != NULL && self->highlight_process_id == self->process_id)
    {
      scene->highlight_step = self->highlight_step;
      scene->highlight_device = self->highlight_device;
      scene->highlight_series = (const TideSeriesPoint *) self->highlight->data;
      scene->n_highlight = self->highlight->len;
    }
}

static void
snapshot_error (TideTimelineView *self,
                GtkSnapshot      *snapshot)
{
  g_autofree char *text = g_strdup_printf ("Cannot draw the timeline: %s", self->error);
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  guint32 rgb = self->palette->text;
  GdkRGBA color = { ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                    (rgb & 0xff) / 255.0, 1.0 };

  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (12, 12));
  gtk_snapshot_append_layout (snapshot, layout, &color);
  gtk_snapshot_restore (snapshot);
  g_object_unref (layout);
}

static GskRenderNode *
render_frame (TideTimelineView *self,
              int               width,
              int               height)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  TideRenderScene scene;
  cairo_t *cr;

  fill_scene (self, &scene);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  tide_render_timeline (cr, &scene, width, height);
  cairo_destroy (cr);
  return gtk_snapshot_free_to_node (snapshot);
}

static void
snapshot_overlay (TideTimelineView *self,
                  GtkSnapshot      *snapshot,
                  int               width,
                  int               height)
{
  if (self->dragging_range)
    {
      GdkRGBA accent = { 0.21, 0.52, 0.89, 0.25 };
      double x0 = MIN (self->drag_start_x, self->drag_x);
      double x1 = MAX (self->drag_start_x, self->drag_x);

      gtk_snapshot_append_color (snapshot, &accent, &GRAPHENE_RECT_INIT (x0, 0, x1 - x0, height));
    }
  if (self->hover_x >= 0 && self->hover_x < width)
    {
      TideRenderScene scene;
      cairo_t *cr;

      fill_scene (self, &scene);
      cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
      tide_render_hover (cr, &scene, width, height, self->hover_x);
      cairo_destroy (cr);
    }
}

static void
tide_timeline_view_snapshot (GtkWidget   *widget,
                             GtkSnapshot *snapshot)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);

  if (width <= 0 || height <= 0 || self->trace == NULL)
    return;
  tide_timeline_model_set_width (&self->model, width);
  if (!ensure_data (self, width))
    {
      snapshot_error (self, snapshot);
      return;
    }
  if (self->frame == NULL)
    self->frame = render_frame (self, width, height);
  gtk_snapshot_append_node (snapshot, self->frame);
  snapshot_overlay (self, snapshot, width, height);
}

static void
tide_timeline_view_size_allocate (GtkWidget *widget,
                                  int        width,
                                  int        height,
                                  int        baseline)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (widget);

  tide_timeline_model_set_width (&self->model, MAX (width, 1));
  invalidate_frame (self);
}

static void
tide_timeline_view_measure (GtkWidget      *widget,
                            GtkOrientation  orientation,
                            int             for_size,
                            int            *minimum,
                            int            *natural,
                            int            *minimum_baseline,
                            int            *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 200 : 160;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 800 : 360;
}

static guint32
rgba_to_rgb (const GdkRGBA *color)
{
  return (guint32) lround (CLAMP (color->red, 0, 1) * 255) << 16 |
         (guint32) lround (CLAMP (color->green, 0, 1) * 255) << 8 |
         (guint32) lround (CLAMP (color->blue, 0, 1) * 255);
}

/* The palette is the stylesheet's named colours (app/style.css, and
 * style-dark.css, which AdwStyleManager adds in the dark style), read here
 * and never in snapshot; a colour no stylesheet names keeps the light
 * palette's value, as PNG export draws it. */
static void
tide_timeline_view_css_changed (GtkWidget         *widget,
                                GtkCssStyleChange *change)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (widget);
  GtkStyleContext *style = gtk_widget_get_style_context (widget);
  TidePalette palette = tide_palette_light;

  GTK_WIDGET_CLASS (tide_timeline_view_parent_class)->css_changed (widget, change);
  for (guint i = 0; i < tide_palette_n_colors (); i++)
    {
      GdkRGBA color;

      if (gtk_style_context_lookup_color (style, tide_palette_color_name (i), &color))
        tide_palette_set_color (&palette, i, rgba_to_rgb (&color));
    }
  if (memcmp (&palette, &self->palette_value, sizeof palette) != 0)
    {
      self->palette_value = palette;
      invalidate_frame (self);
    }
}

static void
tide_timeline_view_dispose (GObject *object)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (object);

  g_clear_object (&self->trace);
  g_clear_pointer (&self->steps, g_array_unref);
  g_clear_pointer (&self->transfers, g_array_unref);
  g_clear_pointer (&self->highlight, g_array_unref);
  g_clear_pointer (&self->cache, tide_timeline_cache_free);
  g_clear_pointer (&self->data, tide_timeline_data_free);
  g_clear_pointer (&self->job, tide_job_lane_free);
  g_clear_pointer (&self->job_processes, g_ptr_array_unref);
  g_clear_object (&self->compare_trace);
  g_clear_pointer (&self->compare_pairs, g_array_unref);
  g_clear_pointer (&self->compare_cache, tide_timeline_cache_free);
  g_clear_pointer (&self->compare_data, tide_timeline_data_free);
  g_clear_pointer (&self->frame, gsk_render_node_unref);
  G_OBJECT_CLASS (tide_timeline_view_parent_class)->dispose (object);
}

static void
tide_timeline_view_finalize (GObject *object)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (object);

  g_free (self->error);
  G_OBJECT_CLASS (tide_timeline_view_parent_class)->finalize (object);
}

static void
tide_timeline_view_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (object);

  switch (prop_id)
    {
    case PROP_TRACE: g_value_set_object (value, self->trace); break;
    case PROP_PROCESS_ID: g_value_set_int64 (value, self->process_id); break;
    case PROP_SELECTED_STEP: g_value_set_int (value, self->selected_step); break;
    case PROP_SELECTION_BEGIN: g_value_set_int64 (value, self->selection_begin); break;
    case PROP_SELECTION_END: g_value_set_int64 (value, self->selection_end); break;
    case PROP_VISIBLE_BEGIN: g_value_set_int64 (value, self->model.begin); break;
    case PROP_VISIBLE_END: g_value_set_int64 (value, self->model.end); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_timeline_view_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (object);

  switch (prop_id)
    {
    case PROP_TRACE: tide_timeline_view_set_trace (self, g_value_get_object (value)); break;
    case PROP_PROCESS_ID:
      tide_timeline_view_set_process_id (self, g_value_get_int64 (value));
      break;
    case PROP_SELECTED_STEP:
      tide_timeline_view_set_selected_step (self, g_value_get_int (value));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_timeline_view_class_init (TideTimelineViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->dispose = tide_timeline_view_dispose;
  object_class->finalize = tide_timeline_view_finalize;
  object_class->get_property = tide_timeline_view_get_property;
  object_class->set_property = tide_timeline_view_set_property;
  widget_class->snapshot = tide_timeline_view_snapshot;
  widget_class->size_allocate = tide_timeline_view_size_allocate;
  widget_class->measure = tide_timeline_view_measure;
  widget_class->css_changed = tide_timeline_view_css_changed;

  properties[PROP_TRACE] = g_param_spec_object ("trace", NULL, NULL, TIDE_TYPE_TRACE, rw);
  properties[PROP_PROCESS_ID] = g_param_spec_int64 ("process-id", NULL, NULL,
                                                    0, G_MAXINT64, 0, rw);
  properties[PROP_SELECTED_STEP] = g_param_spec_int ("selected-step", NULL, NULL,
                                                     0, G_MAXINT, 0, rw);
  /* Set both ends at once with tide_timeline_view_set_selection_range(). */
  properties[PROP_SELECTION_BEGIN] = g_param_spec_int64 ("selection-begin", NULL, NULL,
                                                         -1, G_MAXINT64, -1, ro);
  properties[PROP_SELECTION_END] = g_param_spec_int64 ("selection-end", NULL, NULL,
                                                       -1, G_MAXINT64, -1, ro);
  properties[PROP_VISIBLE_BEGIN] = g_param_spec_int64 ("visible-begin", NULL, NULL,
                                                       G_MININT64, G_MAXINT64, 0, ro);
  properties[PROP_VISIBLE_END] = g_param_spec_int64 ("visible-end", NULL, NULL,
                                                     G_MININT64, G_MAXINT64, 0, ro);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * TideTimelineView::selection-range:
   * @begin: nanoseconds from the trace start
   * @end: exclusive end
   *
   * The user dragged out a range.
   */
  signals[SELECTION_RANGE] = g_signal_new ("selection-range", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                           G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_INT64);

  gtk_widget_class_set_css_name (widget_class, "timeline");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
  _tide_timeline_view_class_input_init (widget_class);
}

static void
tide_timeline_view_init (TideTimelineView *self)
{
  self->palette_value = tide_palette_light;
  self->palette = &self->palette_value;
  self->selection_begin = -1;
  self->selection_end = -1;
  self->hover_x = -1;
  /* About 500 chunks: every level of a few lanes of a large trace. */
  self->cache = tide_timeline_cache_new (CACHE_BYTES);
  tide_timeline_model_init (&self->model, 0, 0, 1);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  _tide_timeline_view_input_init (self);
}

/* ---- public API ------------------------------------------------------------ */

GtkWidget *
tide_timeline_view_new (void)
{
  return g_object_new (TIDE_TYPE_TIMELINE_VIEW, NULL);
}

/**
 * tide_timeline_view_get_trace:
 *
 * Returns: (transfer none) (nullable): the trace shown
 */
TideTrace *
tide_timeline_view_get_trace (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  return self->trace;
}

/* A new trace (or the same capture reopened as it grows) keeps the zoom
 * unless the whole trace was shown, in which case it still is. */
void
tide_timeline_view_set_trace (TideTimelineView *self,
                              TideTrace        *trace)
{
  gboolean was_fit;
  gint64 begin = self->model.begin, end = self->model.end;

  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (trace == NULL || TIDE_IS_TRACE (trace));

  was_fit = self->trace == NULL ||
            (begin == self->model.doc_begin && end == self->model.doc_end);
  if (!g_set_object (&self->trace, trace))
    return;
  /* The rows of the trace shown before, and the reference it holds, go. */
  g_clear_pointer (&self->cache, tide_timeline_cache_free);
  self->cache = tide_timeline_cache_new (CACHE_BYTES);
  tide_timeline_model_init (&self->model, 0,
                            trace ? tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace)
                                  : 0,
                            self->model.width);
  if (!was_fit)
    tide_timeline_model_set_range (&self->model, begin, end);
  load_spans (self);
  notify_visible (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TRACE]);
}

void
tide_timeline_view_reload (TideTimelineView *self)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  load_spans (self);
  invalidate_data (self);
}

gint64
tide_timeline_view_get_process_id (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), 0);
  return self->process_id;
}

void
tide_timeline_view_set_process_id (TideTimelineView *self,
                                   gint64            process_id)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  if (self->process_id == process_id)
    return;
  self->process_id = process_id;
  load_spans (self);
  invalidate_data (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROCESS_ID]);
}

gint
tide_timeline_view_get_selected_step (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), 0);
  return self->selected_step;
}

/* A step and a range are two kinds of selection: choosing one clears the
 * other, so the drill-down follows what the user did last. */
void
tide_timeline_view_set_selected_step (TideTimelineView *self,
                                      gint              number)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  if (self->selected_step == number)
    return;
  self->selected_step = MAX (number, 0);
  if (number > 0)
    tide_timeline_view_set_selection_range (self, -1, -1);
  invalidate_frame (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_STEP]);
}

void
tide_timeline_view_get_selection_range (TideTimelineView *self,
                                        gint64           *begin,
                                        gint64           *end)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  if (begin != NULL)
    *begin = self->selection_begin;
  if (end != NULL)
    *end = self->selection_end;
}

void
tide_timeline_view_set_selection_range (TideTimelineView *self,
                                        gint64            begin,
                                        gint64            end)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  if (begin < 0 || end <= begin)
    begin = end = -1;
  if (self->selection_begin == begin && self->selection_end == end)
    return;
  self->selection_begin = begin;
  self->selection_end = end;
  if (begin >= 0)
    tide_timeline_view_set_selected_step (self, 0);
  invalidate_frame (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTION_BEGIN]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTION_END]);
}

/**
 * tide_timeline_view_set_highlight:
 * @process_id: the suspect's process; drawn while the view shows it
 * @growth_step: the step its growth began in; 0 or a %NULL @series clears
 * @device: -1 for host memory (drawn over the live heap lane), else the
 *   device whose first lane it is drawn over
 * @series: (nullable) (element-type TideSeriesPoint): its live bytes per
 *   step end, from tide_timeline_group_series(); referenced
 *
 * Highlights a leak suspect's growth: the steps from @growth_step on are
 * tinted and its live bytes drawn over its lane.
 */
void
tide_timeline_view_set_highlight (TideTimelineView *self,
                                  gint64            process_id,
                                  gint              growth_step,
                                  gint              device,
                                  GArray           *series)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  g_clear_pointer (&self->highlight, g_array_unref);
  if (series != NULL && growth_step > 0)
    self->highlight = g_array_ref (series);
  self->highlight_process_id = process_id;
  self->highlight_step = self->highlight != NULL ? growth_step : 0;
  self->highlight_device = device;
  invalidate_frame (self);
}

gint
tide_timeline_view_get_highlight_step (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), 0);
  return self->highlight_step;
}

void
tide_timeline_view_get_visible_range (TideTimelineView *self,
                                      gint64           *begin,
                                      gint64           *end)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  if (begin != NULL)
    *begin = self->model.begin;
  if (end != NULL)
    *end = self->model.end;
}

void
tide_timeline_view_set_visible_range (TideTimelineView *self,
                                      gint64            begin,
                                      gint64            end)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  if (tide_timeline_model_set_range (&self->model, begin, end))
    notify_visible (self);
}

void
tide_timeline_view_zoom_at (TideTimelineView *self,
                            double            x,
                            double            factor)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (factor > 0);
  if (tide_timeline_model_zoom_around (&self->model, x, factor))
    notify_visible (self);
}

void
tide_timeline_view_pan_by (TideTimelineView *self,
                           double            dx)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  if (tide_timeline_model_pan_by (&self->model, dx))
    notify_visible (self);
}

void
tide_timeline_view_zoom_fit (TideTimelineView *self)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  if (tide_timeline_model_fit (&self->model))
    notify_visible (self);
}

/* Moves the selection to the next or previous step and scrolls it into
 * view when it is outside. */
void
tide_timeline_view_move_step (TideTimelineView *self,
                              gint              direction)
{
  const TideStepSpan *steps;
  guint n;
  gint number;

  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  steps = tide_timeline_view_get_steps (self, &n);
  number = tide_timeline_step_neighbor (steps, n, self->selected_step, direction);
  if (number == 0)
    return;
  tide_timeline_view_set_selected_step (self, number);
  for (guint i = 0; i < n; i++)
    if (steps[i].number == number &&
        (steps[i].end_ns <= self->model.begin || steps[i].start_ns >= self->model.end))
      {
        gint64 span = self->model.end - self->model.begin;
        gint64 mid = (steps[i].start_ns + steps[i].end_ns) / 2;
        tide_timeline_view_set_visible_range (self, mid - span / 2, mid - span / 2 + span);
        break;
      }
}

/**
 * tide_timeline_view_get_steps:
 *
 * Returns: (transfer none) (array length=n_steps) (nullable): the step spans, by start
 */
const TideStepSpan *
tide_timeline_view_get_steps (TideTimelineView *self,
                              guint            *n_steps)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  *n_steps = self->steps ? self->steps->len : 0;
  return self->steps ? (const TideStepSpan *) self->steps->data : NULL;
}

/* Returns: (transfer none) (nullable): the lanes of the last frame drawn */
/* The process whose band of the job lane is drawn at (@x, @y), or 0. */
gint64
tide_timeline_view_process_at (TideTimelineView *self,
                               double            x,
                               double            y)
{
  TideRenderScene scene;

  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), 0);
  if (self->job == NULL)
    return 0;
  fill_scene (self, &scene);
  return tide_render_job_process_at (&scene, gtk_widget_get_width (GTK_WIDGET (self)),
                                     gtk_widget_get_height (GTK_WIDGET (self)), x, y);
}

const TideTimelineData *
tide_timeline_view_get_data (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  return self->data;
}

const TidePalette *
tide_timeline_view_get_palette (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  return self->palette;
}

/* Returns: (nullable): why the timeline cannot be drawn */
const char *
tide_timeline_view_get_error (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  return self->error;
}

/**
 * tide_timeline_view_set_comparison:
 * @compared: (nullable): the run drawn over this one; %NULL: none
 * @diff: (nullable): this trace's process against @compared's, which
 *   aligns their steps; read here, not kept
 *
 * Draws @compared's lanes dashed over the lanes, its step N over step N.
 */
void
tide_timeline_view_set_comparison (TideTimelineView    *self,
                                   TideTrace           *compared,
                                   const TideTraceDiff *diff)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (compared == NULL || TIDE_IS_TRACE (compared));

  if (diff == NULL)
    compared = NULL;
  if (compared != self->compare_trace)
    {
      g_clear_pointer (&self->compare_cache, tide_timeline_cache_free);
      if (compared != NULL)
        self->compare_cache = tide_timeline_cache_new (CACHE_BYTES);
    }
  g_set_object (&self->compare_trace, compared);
  g_clear_pointer (&self->compare_pairs, g_array_unref);
  self->compare_process_id = diff != NULL ? diff->after_process->id : 0;
  if (diff != NULL)
    self->compare_pairs = tide_trace_diff_step_pairs (diff);
  /* Reloaded, so that an error of the comparison before does not stay. */
  load_spans (self);
  invalidate_data (self);
}

/* Returns: (transfer none) (nullable): the compared run's lanes of the last frame */
const TideTimelineData *
tide_timeline_view_get_compare_data (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  return self->compare_data;
}
