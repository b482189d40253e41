/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTimelineView: host and device lanes on one time axis with numbered
 * step bands, drawn by tide_render_timeline().  The frame is cached as a
 * render node keyed on everything it shows; pointer motion only redraws
 * the hover line on top of it.
 *
 * What it shows is its TideSession's: the trace, the process, the step
 * or range chosen, the visible window and the compared trace are read
 * from the session when drawing, never copied here, and what the user
 * does on the view (a click, a drag, a zoom) is written to the session,
 * which every other view follows.  The view keeps only what it derives
 * from them: the rows read for the window, and their caches.
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
  PROP_SESSION,
  N_PROPS
};

enum {
  SELECTION_RANGE,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

void
_tide_timeline_view_invalidate_frame (TideTimelineView *self)
{
  g_clear_pointer (&self->frame, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
_tide_timeline_view_invalidate_data (TideTimelineView *self)
{
  g_clear_pointer (&self->data, tide_timeline_data_free);
  g_clear_pointer (&self->compare_data, tide_timeline_data_free);
  g_clear_pointer (&self->job, tide_job_lane_free);
  _tide_timeline_view_invalidate_frame (self);
}

static TideTrace *
get_trace (TideTimelineView *self)
{
  return tide_session_get_trace (self->session);
}

/* The compared run is drawn only with a comparison, which aligns its
 * steps with ours. */
static TideTrace *
get_compare_trace (TideTimelineView *self)
{
  if (tide_session_get_comparison (self->session) == NULL)
    return NULL;
  return tide_session_get_compare_trace (self->session);
}

void
_tide_timeline_view_set_error (TideTimelineView *self,
                               GError           *error)
{
  g_free (self->error);
  self->error = error ? g_strdup (error->message) : NULL;
}

/* The job's processes as the session's tables list them (host by host,
 * in the order they started), which the job lane stacks in that order:
 * NULL where the tables could not list them. */
static GPtrArray *
session_processes (TideTimelineView *self)
{
  TideTraceTables *tables = tide_session_get_tables (self->session);
  GPtrArray *processes = tables != NULL ? tide_trace_tables_get_processes (tables) : NULL;

  return processes != NULL ? g_ptr_array_ref (processes) : NULL;
}

/* Steps and transfers are read once per trace and process. */
void
_tide_timeline_view_load_spans (TideTimelineView *self)
{
  TideTrace *trace = get_trace (self);
  gint64 process_id = tide_session_get_process_id (self->session);
  g_autoptr(GError) error = NULL;

  g_clear_pointer (&self->steps, g_array_unref);
  g_clear_pointer (&self->transfers, g_array_unref);
  g_clear_pointer (&self->job_processes, g_ptr_array_unref);
  self->job_peak = (TideJobPeak) { .step = -1 };
  _tide_timeline_view_set_error (self, NULL);
  if (trace == NULL)
    return;
  self->steps = tide_timeline_steps (trace, process_id, &error);
  if (self->steps != NULL)
    self->transfers = tide_timeline_transfers (trace, process_id, &error);
  if (self->transfers != NULL)
    self->job_processes = session_processes (self);
  /* The job lane, which says it, is drawn with two processes or more. */
  if (self->job_processes != NULL && self->job_processes->len >= 2)
    tide_report_job_peak (trace, &self->job_peak, &error);
  if (error != NULL)
    _tide_timeline_view_set_error (self, error);
}

/* The compared run's lanes in the columns of ours, through its own cache. */
static TideTimelineData *
query_compare (TideTimelineView     *self,
               TideTrace            *compared,
               const TideTimeWindow *window,
               GError              **error)
{
  const TideTraceDiff *diff = tide_session_get_comparison (self->session);

  if (self->compare_cache == NULL)
    self->compare_cache = tide_timeline_cache_new (TIDE_TIMELINE_VIEW_CACHE_BYTES);
  return tide_timeline_compare_query (compared, self->compare_cache, diff->after_process->id,
                                      (const TideStepPair *) self->compare_pairs->data,
                                      self->compare_pairs->len, window, error);
}

static gboolean
ensure_data (TideTimelineView *self,
             int               width)
{
  TideTrace *trace = get_trace (self);
  TideTrace *compared = get_compare_trace (self);
  g_autoptr(GError) error = NULL;
  TideTimelineModel model;
  TideTimeWindow window;

  if (trace == NULL || self->error != NULL)
    return FALSE;
  _tide_timeline_view_get_model (self, &model);
  window = (TideTimeWindow) { model.begin, model.end, (guint) width };
  if (self->data != NULL && self->data->window.n_columns == window.n_columns &&
      self->data->window.begin_ns == window.begin_ns && self->data->window.end_ns == window.end_ns)
    return TRUE;
  g_clear_pointer (&self->data, tide_timeline_data_free);
  g_clear_pointer (&self->compare_data, tide_timeline_data_free);
  g_clear_pointer (&self->job, tide_job_lane_free);
  self->data = tide_timeline_data_query_cached (trace, self->cache,
                                                tide_session_get_process_id (self->session),
                                                &window, &error);
  /* Through the same cache as the lanes: a pan reads only new columns. */
  if (self->data != NULL && self->job_processes != NULL)
    self->job = tide_job_lane_query (trace, self->cache, self->job_processes, &window, &error);
  if (self->data != NULL && self->job != NULL && compared != NULL)
    self->compare_data = query_compare (self, compared, &window, &error);
  if (self->data == NULL || self->job == NULL || (compared != NULL && self->compare_data == NULL))
    _tide_timeline_view_set_error (self, error);
  return self->data != NULL && self->job != NULL && self->error == NULL;
}

static void
fill_scene (TideTimelineView *self,
            TideRenderScene  *scene)
{
  gint64 process_id = tide_session_get_process_id (self->session);

  *scene = (TideRenderScene) {
    .data = self->data,
    .steps = self->steps ? (const TideStepSpan *) self->steps->data : NULL,
    .n_steps = self->steps ? self->steps->len : 0,
    .transfers = self->transfers ? (const TideTransferMark *) self->transfers->data : NULL,
    .n_transfers = self->transfers ? self->transfers->len : 0,
    .selected_step = tide_session_get_step (self->session),
    .palette = self->palette,
    .show_labels = TRUE,
    .job = self->job,
    .job_peak = &self->job_peak,
    .chosen_process = process_id,
    .compare = self->compare_data,
  };
  tide_session_get_visible (self->session, &scene->begin_ns, &scene->end_ns);
  tide_session_get_range (self->session, &scene->selection_begin, &scene->selection_end);
  if (self->highlight != NULL && self->highlight_process_id == process_id)
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

  if (width <= 0 || height <= 0 || get_trace (self) == NULL)
    return;
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
  _tide_timeline_view_invalidate_frame (TIDE_TIMELINE_VIEW (widget));
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

/* The palette is the stylesheet's named colours (app/gui/style.css, and
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
      _tide_timeline_view_invalidate_frame (self);
    }
}

/* A range the user dragged out is the session's; handlers of the signal
 * find it there already. */
static void
tide_timeline_view_real_selection_range (TideTimelineView *self,
                                         gint64            begin,
                                         gint64            end)
{
  tide_session_set_range (self->session, begin, end);
}

/* ---- GObject --------------------------------------------------------------- */

static void
tide_timeline_view_constructed (GObject *object)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (object);

  G_OBJECT_CLASS (tide_timeline_view_parent_class)->constructed (object);

  /* A view made without one (a bare g_object_new) still has a session to
   * read and write, its own. */
  if (self->session == NULL)
    self->session = tide_session_new ();
  _tide_timeline_view_session_init (self);
}

static void
tide_timeline_view_dispose (GObject *object)
{
  TideTimelineView *self = TIDE_TIMELINE_VIEW (object);

  /* Others may hold the session on: it no longer reaches this view. */
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_clear_object (&self->session);
  g_clear_pointer (&self->steps, g_array_unref);
  g_clear_pointer (&self->transfers, g_array_unref);
  g_clear_pointer (&self->highlight, g_array_unref);
  g_clear_pointer (&self->cache, tide_timeline_cache_free);
  g_clear_pointer (&self->data, tide_timeline_data_free);
  g_clear_pointer (&self->job, tide_job_lane_free);
  g_clear_pointer (&self->job_processes, g_ptr_array_unref);
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
    case PROP_SESSION: g_value_set_object (value, self->session); break;
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
    case PROP_SESSION: self->session = g_value_dup_object (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_timeline_view_class_init (TideTimelineViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->constructed = tide_timeline_view_constructed;
  object_class->dispose = tide_timeline_view_dispose;
  object_class->finalize = tide_timeline_view_finalize;
  object_class->get_property = tide_timeline_view_get_property;
  object_class->set_property = tide_timeline_view_set_property;
  widget_class->snapshot = tide_timeline_view_snapshot;
  widget_class->size_allocate = tide_timeline_view_size_allocate;
  widget_class->measure = tide_timeline_view_measure;
  widget_class->css_changed = tide_timeline_view_css_changed;

  /* One for the view's life: every view of a window shares it. */
  properties[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, TIDE_TYPE_SESSION,
                                                  G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                  G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * TideTimelineView::selection-range:
   * @begin: nanoseconds from the trace start
   * @end: exclusive end
   *
   * The user dragged out a range; the default handler makes it the
   * session's.
   */
  signals[SELECTION_RANGE] =
    g_signal_new_class_handler ("selection-range", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_FIRST,
                                G_CALLBACK (tide_timeline_view_real_selection_range),
                                NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_INT64);

  gtk_widget_class_set_css_name (widget_class, "timeline");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
  _tide_timeline_view_class_input_init (widget_class);
}

static void
tide_timeline_view_init (TideTimelineView *self)
{
  self->palette_value = tide_palette_light;
  self->palette = &self->palette_value;
  self->hover_x = -1;
  self->cache = tide_timeline_cache_new (TIDE_TIMELINE_VIEW_CACHE_BYTES);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  _tide_timeline_view_input_init (self);
}

/* ---- public API ------------------------------------------------------------ */

GtkWidget *
tide_timeline_view_new (TideSession *session)
{
  g_return_val_if_fail (TIDE_IS_SESSION (session), NULL);
  return g_object_new (TIDE_TYPE_TIMELINE_VIEW, "session", session, NULL);
}

/**
 * tide_timeline_view_get_session:
 *
 * Returns: (transfer none): what the view shows, and where what the user
 *   does on it goes
 */
TideSession *
tide_timeline_view_get_session (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  return self->session;
}

void
tide_timeline_view_reload (TideTimelineView *self)
{
  g_return_if_fail (TIDE_IS_TIMELINE_VIEW (self));
  _tide_timeline_view_load_spans (self);
  _tide_timeline_view_invalidate_data (self);
}

/*
 * _tide_timeline_view_set_highlight:
 * @process_id: the suspect's process; drawn while the view shows it
 * @growth_step: the step its growth began in; 0 or a %NULL @series clears
 * @device: -1 for host memory (drawn over the live heap lane), else the
 *   device whose first lane it is drawn over
 * @series: (nullable) (element-type TideSeriesPoint): its live bytes per
 *   step end, from tide_timeline_group_series(); referenced
 *
 * Highlights the session's leak suspect's growth: the steps from
 * @growth_step on are tinted and its live bytes drawn over its lane.
 */
void
_tide_timeline_view_set_highlight (TideTimelineView *self,
                                   gint64            process_id,
                                   gint              growth_step,
                                   gint              device,
                                   GArray           *series)
{
  g_clear_pointer (&self->highlight, g_array_unref);
  if (series != NULL && growth_step > 0)
    self->highlight = g_array_ref (series);
  self->highlight_process_id = process_id;
  self->highlight_step = self->highlight != NULL ? growth_step : 0;
  self->highlight_device = device;
  _tide_timeline_view_invalidate_frame (self);
}

gint
tide_timeline_view_get_highlight_step (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), 0);
  return self->highlight_step;
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

/* Returns: (transfer none) (nullable): the lanes of the last frame drawn */
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
 * tide_timeline_view_get_compare_trace:
 *
 * Returns: (transfer none) (nullable): the run drawn dashed over this one:
 *   the session's compared trace, while it has a comparison
 */
TideTrace *
tide_timeline_view_get_compare_trace (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  return get_compare_trace (self);
}

/* Returns: (transfer none) (nullable): the compared run's lanes of the last frame */
const TideTimelineData *
tide_timeline_view_get_compare_data (TideTimelineView *self)
{
  g_return_val_if_fail (TIDE_IS_TIMELINE_VIEW (self), NULL);
  return self->compare_data;
}
