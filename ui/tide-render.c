/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Drawing passes, in order: job lane, step bands (strip and lane
 * backgrounds), lane curves, selection, transfers, axis, legend.  Every pass culls to the
 * visible range and draws at most one primitive per pixel column, so a
 * frame costs O(width x lanes + visible steps) whatever the trace size.
 */
#include "config.h"

#include "tide-render.h"

#include <gio/gio.h>
#include <math.h>
#include <pango/pangocairo.h>

#include "tide-format-bytes.h"
#include "tide-report.h"
#include "tide-saturate.h"
#include "tide-schema.h"
#include "tide-timeline-compare.h"
#include "tide-timeline-model.h"

#define JOB_H        72.0
#define STRIP_H      22.0
#define AXIS_H       22.0
#define LEGEND_H     24.0
#define TRANSFERS_H  16.0
#define LABEL_PAD    18.0
#define TICK_MIN_PX  90.0
#define FONT         "Sans 9"

const TidePalette tide_palette_light = {
  .background = 0xffffff, .text = 0x241f31, .text_dim = 0x77767b, .grid = 0xdeddda,
  .band_even = 0xffffff, .band_odd = 0xf6f5f4, .band_leak = 0xfbe0e1,
  .strip_even = 0xdeddda, .strip_odd = 0xc0bfbc, .strip_leak = 0xe01b24,
  .strip_text = 0x241f31, .strip_leak_text = 0xffffff, .accent = 0x3584e4,
  .transfer_to_device = 0x1a5fb4, .transfer_to_host = 0xc64600,
  .lane_line = { 0x1c71d8, 0x26a269, 0xe66100, 0x813d9c, 0xc01c28, 0x986a44, 0xe5a50a, 0x5e5c64 },
  .lane_fill = { 0xc6dcf5, 0xc9e8da, 0xf9d8bf, 0xe0cee6, 0xefc6c9, 0xe5dad0, 0xf8e8c2, 0xd7d6d8 },
  .lane_envelope = { 0x8eb8ec, 0x92d0b4, 0xf2b080, 0xc09ece, 0xe08e94, 0xccb4a2, 0xf2d284,
                     0xaeaeb2 },
  .band_highlight = 0xf1e7f6, .highlight = 0xa51d8c,
  .process = { 0x3584e4, 0xe66100, 0x2ec27e, 0x9141ac, 0xc01c28, 0x865e3c, 0xe5a50a, 0x5e5c64 },
  .rss_class = { 0xdeddda, 0xb5e3e0, 0xc6dcf5, 0xf6e0b0 },
  .compare = 0x3d3846,
  .death = 0xe01b24, .limit = 0x241f31,
};

static void
set_rgb (cairo_t *cr,
         guint32  rgb)
{
  cairo_set_source_rgb (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                        (rgb & 0xff) / 255.0);
}

static void
set_rgba (cairo_t *cr,
          guint32  rgb,
          double   alpha)
{
  cairo_set_source_rgba (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                         (rgb & 0xff) / 255.0, alpha);
}

guint
tide_render_lane_color_index (gint counter,
                              gint device)
{
  if (device < 0)
    switch (counter)
      {
      case TIDE_COUNTER_RSS: return 0;
      case TIDE_COUNTER_HEAP_LIVE: return 1;
      case TIDE_COUNTER_MAPPED: return 2;
      case TIDE_COUNTER_PINNED: return 3;
      default: return 7;
      }
  return 4 + (guint) (device + counter) % 4;
}

/* The compared run's lane of the same counter and device as the shown
 * lane @index, or NULL. */
static const TideLaneData *
compare_lane (const TideRenderScene *scene,
              guint                  index)
{
  const TideLaneData *lane = g_ptr_array_index (scene->data->lanes, index);

  if (scene->compare == NULL)
    return NULL;
  return tide_timeline_data_find_lane (scene->compare, lane->counter, lane->device);
}

/* A lane's scale: its peak, or the compared run's where that is larger. */
gint64
tide_render_lane_peak (const TideRenderScene *scene,
                       guint                  index)
{
  const TideLaneData *lane = g_ptr_array_index (scene->data->lanes, index);
  const TideLaneData *other = compare_lane (scene, index);

  return other != NULL ? MAX (lane->peak, other->peak) : lane->peak;
}

void
tide_render_layout (const TideRenderScene *scene,
                    int                    width,
                    int                    height,
                    TideRenderLayout      *layout)
{
  double rest;

  layout->n_lanes = scene->data != NULL ? scene->data->lanes->len : 0;
  layout->job_y = 0;
  layout->job_h = scene->job != NULL && scene->job->bands->len > 1 ? JOB_H : 0;
  layout->strip_y = layout->job_y + layout->job_h;
  layout->strip_h = STRIP_H;
  layout->axis_h = AXIS_H;
  layout->legend_h = scene->show_legend ? LEGEND_H : 0;
  layout->transfers_h = scene->n_transfers > 0 ? TRANSFERS_H : 0;
  layout->lanes_y = layout->strip_y + layout->strip_h;
  rest = height - layout->lanes_y - layout->axis_h - layout->legend_h - layout->transfers_h;
  layout->lane_h = floor (MAX (rest, 0) / MAX (layout->n_lanes, 1));
  layout->transfers_y = layout->lanes_y + layout->lane_h * MAX (layout->n_lanes, 1);
  layout->axis_y = layout->transfers_y + layout->transfers_h;
  layout->legend_y = layout->axis_y + layout->axis_h;
}

/* Whole pixel rows, so that the 2 px curve covers rows y - 1 and y exactly. */
double
tide_render_value_to_y (const TideRenderLayout *layout,
                        guint                   lane,
                        gint64                  value,
                        gint64                  peak)
{
  double top = layout->lanes_y + lane * layout->lane_h;
  double pad = layout->lane_h >= 3 * LABEL_PAD ? LABEL_PAD : 2;
  double usable = MAX (layout->lane_h - pad - 1, 1);
  double frac = peak > 0 ? CLAMP ((double) value / (double) peak, 0.0, 1.0) : 0;

  return round (top + layout->lane_h - 1 - frac * usable);
}

/* The job lane's scale, with the same rounding and padding as a lane's. */
double
tide_render_job_value_to_y (const TideRenderLayout *layout,
                            gint64                  value,
                            gint64                  peak)
{
  double pad = layout->job_h >= 3 * LABEL_PAD ? LABEL_PAD : 2;
  double usable = MAX (layout->job_h - pad - 1, 1);
  double frac = peak > 0 ? CLAMP ((double) value / (double) peak, 0.0, 1.0) : 0;

  return round (layout->job_y + layout->job_h - 1 - frac * usable);
}

/**
 * tide_render_job_process_at:
 *
 * The process whose band of the job lane is drawn at (@x, @y), or 0 when
 * (@x, @y) is not on a band: what a click on the job lane chooses.
 */
gint64
tide_render_job_process_at (const TideRenderScene *scene,
                            int                    width,
                            int                    height,
                            double                 x,
                            double                 y)
{
  TideRenderLayout l;
  guint column;

  tide_render_layout (scene, width, height, &l);
  if (l.job_h <= 0 || y < l.job_y || y >= l.job_y + l.job_h || x < 0 || x >= width)
    return 0;
  column = (guint) x;
  if (column >= scene->job->window.n_columns)
    return 0;
  for (guint i = 0; i < scene->job->bands->len; i++)
    {
      gint64 below = tide_job_lane_total_below (scene->job, i, column);
      gint64 above = tide_job_lane_total_below (scene->job, i + 1, column);

      if (y >= tide_render_job_value_to_y (&l, above, scene->job->scale) &&
          y < tide_render_job_value_to_y (&l, below, scene->job->scale))
        return ((const TideJobBand *) g_ptr_array_index (scene->job->bands, i))->process_id;
    }
  return 0;
}

static double
x_of (const TideRenderScene *scene,
      int                    width,
      gint64                 t)
{
  return (double) (t - scene->begin_ns) * width / (double) (scene->end_ns - scene->begin_ns);
}

/* Index of the first step that may be visible (steps are sorted by start;
 * one process's steps do not overlap, so ends are sorted too). */
static guint
first_visible_step (const TideRenderScene *scene)
{
  guint lo = 0, hi = scene->n_steps;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (scene->steps[mid].end_ns <= scene->begin_ns)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo > 64 ? lo - 64 : 0;
}

static PangoLayout *
make_layout (cairo_t *cr)
{
  PangoLayout *layout = pango_cairo_create_layout (cr);
  PangoFontDescription *font = pango_font_description_from_string (FONT);

  pango_layout_set_font_description (layout, font);
  pango_font_description_free (font);
  return layout;
}

static void
draw_text (cairo_t     *cr,
           PangoLayout *layout,
           const char  *text,
           double       x,
           double       y,
           guint32      rgb)
{
  set_rgb (cr, rgb);
  pango_layout_set_text (layout, text, -1);
  cairo_move_to (cr, x, y);
  pango_cairo_show_layout (cr, layout);
}

static double
text_width (PangoLayout *layout,
            const char  *text)
{
  int w, h;

  pango_layout_set_text (layout, text, -1);
  pango_layout_get_pixel_size (layout, &w, &h);
  return w;
}

static void
band_colors (const TideRenderScene *scene,
             const TideStepSpan    *step,
             guint32               *band,
             guint32               *strip,
             guint32               *text)
{
  const TidePalette *p = scene->palette;
  gboolean selected = scene->selected_step != 0 && step->number == scene->selected_step;

  *band = step->leak ? p->band_leak : step->number % 2 == 0 ? p->band_even : p->band_odd;
  if (scene->highlight_step > 0 && step->number >= scene->highlight_step)
    *band = p->band_highlight;
  *strip = selected ? p->accent : step->leak ? p->strip_leak
           : step->number % 2 == 0 ? p->strip_even : p->strip_odd;
  *text = selected || step->leak ? p->strip_leak_text : p->strip_text;
}

/* Rectangles gathered by colour, so that a view of a thousand steps costs
 * a few fills rather than two a step. */
#define MAX_BATCH_COLORS 8

typedef struct
{
  guint    n;
  guint32  color[MAX_BATCH_COLORS];
  GArray  *rects[MAX_BATCH_COLORS];  /* double x, y, w, h */
} RectBatch;

static void
batch_add (RectBatch *batch,
           guint32    color,
           double     x,
           double     y,
           double     w,
           double     h)
{
  double r[4] = { x, y, w, h };
  guint i = 0;

  while (i < batch->n && batch->color[i] != color)
    i++;
  if (i == batch->n)
    {
      g_return_if_fail (batch->n < MAX_BATCH_COLORS);
      batch->color[i] = color;
      batch->rects[i] = g_array_new (FALSE, FALSE, 4 * sizeof (double));
      batch->n++;
    }
  g_array_append_vals (batch->rects[i], r, 1);
}

static void
batch_fill (cairo_t   *cr,
            RectBatch *batch)
{
  for (guint i = 0; i < batch->n; i++)
    {
      const double *r = (const double *) batch->rects[i]->data;

      for (guint j = 0; j < batch->rects[i]->len; j++, r += 4)
        cairo_rectangle (cr, r[0], r[1], r[2], r[3]);
      set_rgb (cr, batch->color[i]);
      cairo_fill (cr);
      g_array_unref (batch->rects[i]);
    }
  batch->n = 0;
}

static void
draw_step_labels (cairo_t                *cr,
                  const TideRenderScene  *scene,
                  const TideRenderLayout *l,
                  int                     width,
                  PangoLayout            *text)
{
  for (guint i = first_visible_step (scene); i < scene->n_steps; i++)
    {
      const TideStepSpan *s = &scene->steps[i];
      double x0 = CLAMP (round (x_of (scene, width, s->start_ns)), 0, width);
      double x1 = CLAMP (round (x_of (scene, width, s->end_ns)), 0, width);
      guint32 band, strip, fg;
      char label[16];
      double tw;

      if (s->start_ns >= scene->end_ns)
        break;
      /* Too narrow for any number: skip without asking pango. */
      if (s->end_ns <= scene->begin_ns || x1 - x0 < 12)
        continue;
      band_colors (scene, s, &band, &strip, &fg);
      g_snprintf (label, sizeof label, "%d", s->number);
      tw = text_width (text, label);
      if (tw + 4 <= x1 - x0)
        draw_text (cr, text, label, (x0 + x1 - tw) / 2, l->strip_y + 4, fg);
    }
}

static void
draw_step_bands (cairo_t                *cr,
                 const TideRenderScene  *scene,
                 const TideRenderLayout *l,
                 int                     width,
                 PangoLayout            *text)
{
  double lanes_h = l->lane_h * MAX (l->n_lanes, 1);
  RectBatch bands = { 0 }, strips = { 0 };

  for (guint i = first_visible_step (scene); i < scene->n_steps; i++)
    {
      const TideStepSpan *s = &scene->steps[i];
      double x0 = CLAMP (round (x_of (scene, width, s->start_ns)), 0, width);
      double x1 = CLAMP (round (x_of (scene, width, s->end_ns)), 0, width);
      guint32 band, strip, fg;

      if (s->start_ns >= scene->end_ns)
        break;
      if (s->end_ns <= scene->begin_ns || x1 <= x0)
        continue;
      band_colors (scene, s, &band, &strip, &fg);
      batch_add (&bands, band, x0, l->lanes_y, x1 - x0, lanes_h);
      /* A one-pixel gap keeps neighbouring leak steps apart in the strip. */
      batch_add (&strips, strip, x1 - x0 > 3 ? x0 + 1 : x0, l->strip_y,
                 x1 - x0 > 3 ? x1 - x0 - 1 : x1 - x0, l->strip_h);
    }
  batch_fill (cr, &bands);
  batch_fill (cr, &strips);
  if (text != NULL)
    draw_step_labels (cr, scene, l, width, text);
}

const char *
tide_render_rss_class_name (TideRssClass rss_class)
{
  static const char *const names[TIDE_RSS_N_CLASSES] = {
    [TIDE_RSS_CLASS_FILE] = "file-backed",
    [TIDE_RSS_CLASS_SHMEM] = "shmem",
    [TIDE_RSS_CLASS_ANON] = "anonymous",
    [TIDE_RSS_CLASS_ALLOC_FREE] = "allocator free",
  };

  g_return_val_if_fail (rss_class < TIDE_RSS_N_CLASSES, "?");
  return names[rss_class];
}

/* The RSS lane's fill as a stack of its classes, one fill per class. */
static void
fill_by_class (cairo_t                *cr,
               const TideRenderScene  *scene,
               const TideRenderLayout *l,
               guint                   index,
               const TideLaneData     *lane)
{
  double bottom = l->lanes_y + (index + 1) * l->lane_h;
  gint64 peak = tide_render_lane_peak (scene, index);

  if (lane->counter != TIDE_COUNTER_RSS || lane->device >= 0 ||
      scene->data->rss_classes[TIDE_RSS_CLASS_ANON] == NULL)
    return;
  for (guint k = 0; k < TIDE_RSS_N_CLASSES; k++)
    {
      for (guint c = 0; c < lane->n_columns; c++)
        {
          gint64 split[TIDE_RSS_N_CLASSES], below = 0;
          double y0, y1;

          if (!lane->has[c] ||
              !tide_timeline_data_rss_split (scene->data, c, lane->last[c], split))
            continue;
          for (guint j = 0; j < k; j++)
            below += split[j];
          y0 = k == 0 ? bottom : tide_render_value_to_y (l, index, below, peak);
          y1 = tide_render_value_to_y (l, index, below + split[k], peak);
          if (y0 > y1)
            cairo_rectangle (cr, c, y1, 1, y0 - y1);
        }
      set_rgb (cr, scene->palette->rss_class[k]);
      cairo_fill (cr);
    }
}

/* The 2 px curve as boxes, which cairo fills much faster than it strokes
 * a path of thousands of segments: per column a tread on rows y - 1 and
 * y, and where the value changes a riser on columns c - 1 and c, the
 * pixels a mitred 2 px stroke of the steps would cover.  With @dash > 0,
 * only the columns c with (c / @dash) even. */
static void
add_curve_boxes (cairo_t                *cr,
                 const TideRenderLayout *l,
                 guint                   index,
                 const TideLaneData     *lane,
                 gint64                  peak,
                 guint                   dash)
{
  double previous_y = 0;
  gboolean open = FALSE;

  for (guint c = 0; c < lane->n_columns; c++)
    {
      double y;

      if (!lane->has[c])
        {
          open = FALSE;
          continue;
        }
      y = tide_render_value_to_y (l, index, lane->last[c], peak);
      if (dash == 0 || (c / dash) % 2 == 0)
        {
          if (open && y != previous_y)
            cairo_rectangle (cr, c - 1.0, MIN (y, previous_y) - 1, 2, fabs (y - previous_y) + 2);
          cairo_rectangle (cr, c, y - 1, 1, 2);
        }
      previous_y = y;
      open = TRUE;
    }
}

/* The compared run's curve over lane @index, dashed so that the shown
 * curve stays visible under it. */
static void
draw_compare_curve (cairo_t                *cr,
                    const TideRenderScene  *scene,
                    const TideRenderLayout *l,
                    guint                   index)
{
  const TideLaneData *other = compare_lane (scene, index);

  if (other == NULL)
    return;
  add_curve_boxes (cr, l, index, other, tide_render_lane_peak (scene, index),
                   TIDE_RENDER_COMPARE_DASH);
  set_rgb (cr, scene->palette->compare);
  cairo_fill (cr);
}

/* Below-the-curve fill, then the min..max envelope, then the curve. */
static void
draw_lane_curve (cairo_t                *cr,
                 const TideRenderScene  *scene,
                 const TideRenderLayout *l,
                 guint                   index,
                 const TideLaneData     *lane)
{
  guint color = tide_render_lane_color_index (lane->counter, lane->device);
  double bottom = l->lanes_y + (index + 1) * l->lane_h;
  gint64 peak = tide_render_lane_peak (scene, index);

  /* Columns whose classes are not known yet get the plain fill under the
   * stack: the stack is drawn over it. */
  for (guint c = 0; c < lane->n_columns; c++)
    if (lane->has[c])
      {
        double y = tide_render_value_to_y (l, index, lane->last[c], peak);
        cairo_rectangle (cr, c, y, 1, bottom - y);
      }
  set_rgb (cr, scene->palette->lane_fill[color]);
  cairo_fill (cr);
  fill_by_class (cr, scene, l, index, lane);

  for (guint c = 0; c < lane->n_columns; c++)
    if (lane->has[c])
      {
        double ymax = tide_render_value_to_y (l, index, lane->max[c], peak);
        double ymin = tide_render_value_to_y (l, index, lane->min[c], peak);
        if (ymin - ymax >= 1)
          cairo_rectangle (cr, c, ymax, 1, ymin - ymax);
      }
  set_rgb (cr, scene->palette->lane_envelope[color]);
  cairo_fill (cr);

  add_curve_boxes (cr, l, index, lane, peak, 0);
  set_rgb (cr, scene->palette->lane_line[color]);
  cairo_fill (cr);
}

static gint
highlight_lane (const TideRenderScene *scene)
{
  for (guint i = 0; i < scene->data->lanes->len; i++)
    {
      const TideLaneData *lane = g_ptr_array_index (scene->data->lanes, i);

      if (scene->highlight_device < 0 ? lane->device < 0 && lane->counter == TIDE_COUNTER_HEAP_LIVE
                                      : lane->device == scene->highlight_device)
        return (gint) i;
    }
  return -1;
}

/* The suspect's live bytes at each step end from its growth step on, as a
 * tread across the step on the lane's scale: the part of the lane's curve
 * that the suspect explains. */
static void
draw_highlight (cairo_t                *cr,
                const TideRenderScene  *scene,
                const TideRenderLayout *l,
                int                     width)
{
  gint lane_index = scene->highlight_step > 0 ? highlight_lane (scene) : -1;

  if (lane_index < 0)
    return;
  for (guint i = 0; i < scene->n_highlight; i++)
    {
      const TideSeriesPoint *p = &scene->highlight_series[i];
      double y;

      if (p->number < scene->highlight_step || p->end_ns <= scene->begin_ns ||
          p->start_ns >= scene->end_ns)
        continue;
      y = tide_render_value_to_y (l, lane_index, p->live_bytes,
                                  MAX (tide_render_lane_peak (scene, lane_index), 1));
      cairo_move_to (cr, CLAMP (round (x_of (scene, width, p->start_ns)), -1, width + 1), y);
      cairo_line_to (cr, CLAMP (round (x_of (scene, width, p->end_ns)), -1, width + 1), y);
    }
  set_rgb (cr, scene->palette->highlight);
  cairo_set_line_width (cr, 2);
  cairo_stroke (cr);
}

static void
draw_lane_labels (cairo_t                *cr,
                  const TideRenderScene  *scene,
                  const TideRenderLayout *l,
                  int                     width,
                  PangoLayout            *text)
{
  for (guint i = 0; i < l->n_lanes; i++)
    {
      const TideLaneData *lane = g_ptr_array_index (scene->data->lanes, i);
      g_autofree char *peak = tide_format_bytes (tide_render_lane_peak (scene, i));
      double y = l->lanes_y + i * l->lane_h + 2;

      if (l->lane_h < LABEL_PAD)
        break;
      draw_text (cr, text, lane->name, 4, y, scene->palette->text);
      draw_text (cr, text, peak, width - 4 - text_width (text, peak), y,
                 scene->palette->text_dim);
    }
}

static void draw_deaths (cairo_t               *cr,
                         const TideRenderScene *scene,
                         double                 top,
                         double                 height,
                         int                    width,
                         PangoLayout           *text,
                         gint64                 process_id);

static void
draw_lanes (cairo_t                *cr,
            const TideRenderScene  *scene,
            const TideRenderLayout *l,
            int                     width,
            PangoLayout            *text)
{
  if (scene->data == NULL)
    return;
  cairo_save (cr);
  cairo_rectangle (cr, 0, l->lanes_y, width, l->lane_h * l->n_lanes);
  cairo_clip (cr);
  for (guint i = 0; i < l->n_lanes; i++)
    draw_lane_curve (cr, scene, l, i, g_ptr_array_index (scene->data->lanes, i));
  for (guint i = 0; i < l->n_lanes; i++)
    draw_compare_curve (cr, scene, l, i);
  draw_highlight (cr, scene, l, width);
  draw_deaths (cr, scene, l->lanes_y, l->lane_h * l->n_lanes, width, NULL,
               scene->chosen_process != 0 ? scene->chosen_process : -1);
  /* Lane separators on the lane's first row. */
  set_rgb (cr, scene->palette->grid);
  for (guint i = 1; i < l->n_lanes; i++)
    cairo_rectangle (cr, 0, l->lanes_y + i * l->lane_h, width, 1);
  cairo_fill (cr);
  cairo_restore (cr);
  if (text != NULL)
    draw_lane_labels (cr, scene, l, width, text);
}

/* The memory limit the job ran under, dashed across the lane where the
 * lane's scale reaches it: how close each step came is then seen. */
static void
draw_job_limit (cairo_t                *cr,
                const TideRenderScene  *scene,
                const TideRenderLayout *l,
                int                     width)
{
  const TideJobLane *job = scene->job;
  double y;

  if (job->limit <= 0 || job->limit > job->scale)
    return;
  y = floor (tide_render_job_value_to_y (l, job->limit, job->scale));
  set_rgb (cr, scene->palette->limit);
  for (int x = 0; x < width; x += 2 * TIDE_RENDER_LIMIT_DASH)
    cairo_rectangle (cr, x, y, MIN (TIDE_RENDER_LIMIT_DASH, width - x), 1);
  cairo_fill (cr);
}

/* Where processes of the job died, as a two-column mark from @top down
 * @height, with the signal by the first death in view; @process_id
 * non-zero keeps that process's deaths only. */
static void
draw_deaths (cairo_t               *cr,
             const TideRenderScene *scene,
             double                 top,
             double                 height,
             int                    width,
             PangoLayout           *text,
             gint64                 process_id)
{
  const TideJobLane *job = scene->job;
  gboolean labelled = FALSE;

  for (guint i = 0; job != NULL && i < job->deaths->len; i++)
    {
      const TideJobDeath *death = &g_array_index (job->deaths, TideJobDeath, i);
      const TideJobBand *band = g_ptr_array_index (job->bands, death->band);
      double x = floor (x_of (scene, width, death->ns));

      if (process_id != 0 && band->process_id != process_id)
        continue;
      if (x < -1 || x > width)
        continue;
      /* A job that died ends the trace: its mark is the last columns. */
      x = MIN (x, width - 1);
      set_rgb (cr, scene->palette->death);
      cairo_rectangle (cr, x - 1, top, 2, height);
      cairo_fill (cr);
      if (text != NULL && !labelled && height >= LABEL_PAD)
        {
          g_autofree char *cause = tide_process_end_describe_short (&death->end);

          draw_text (cr, text, cause, x + 3 + text_width (text, cause) < width
                                      ? x + 3 : x - 3 - text_width (text, cause),
                     top + height - LABEL_PAD, scene->palette->death);
          labelled = TRUE;
        }
    }
}

/* "PSS 429.99 MiB", or "PSS 429.99 MiB (+80.88 MiB RSS later)" where the
 * job's RSS rose after the peak's reading, "(+32.00 MiB anon later)" where
 * its anonymous memory did (tide_report_job_peak()). */
static char *
job_peak_figure (const TideJobPeak *peak)
{
  g_autofree char *bytes = tide_format_bytes (peak->bytes);
  g_autofree char *rise = NULL;

  if (peak->rise_bytes <= 0)
    return g_strdup_printf ("%s %s", peak->by_pss ? "PSS" : "RSS", bytes);
  rise = tide_format_bytes (peak->rise_bytes);
  return g_strdup_printf ("PSS %s (+%s %s later)", bytes, rise, peak->rise_anon ? "anon" : "RSS");
}

/* One column-wide box per band and column, from the total of the bands
 * below it to the total with it, so that each process shows as a band of
 * its own colour; then each band's label with its colour. */
static void
draw_job_lane (cairo_t                *cr,
               const TideRenderScene  *scene,
               const TideRenderLayout *l,
               int                     width,
               PangoLayout            *text)
{
  const TideJobLane *job = scene->job;
  g_autofree gint64 *below = NULL;
  double x = 4;

  if (l->job_h <= 0)
    return;
  /* Each column's total under the band being drawn, kept from one band to
   * the next rather than summed again for each (saturating, as
   * tide_job_lane_total_below() sums). */
  below = g_new0 (gint64, job->window.n_columns);
  for (guint i = 0; i < job->bands->len; i++)
    {
      const TideJobBand *band = g_ptr_array_index (job->bands, i);

      for (guint c = 0; c < job->window.n_columns && c < (guint) width; c++)
        {
          gint64 above = tide_sat_add (below[c], band->last[c]);
          double top = tide_render_job_value_to_y (l, above, job->scale);
          double bottom = tide_render_job_value_to_y (l, below[c], job->scale);

          if (bottom > top)
            cairo_rectangle (cr, c, top, 1, bottom - top);
          below[c] = above;
        }
      set_rgb (cr, scene->palette->process[i % TIDE_RENDER_N_PROCESS_COLORS]);
      cairo_fill (cr);
    }
  set_rgb (cr, scene->palette->grid);
  cairo_rectangle (cr, 0, l->job_y + l->job_h - 1, width, 1);
  cairo_fill (cr);
  draw_job_limit (cr, scene, l, width);
  draw_deaths (cr, scene, l->job_y, l->job_h, width, text, 0);
  if (text == NULL || l->job_h < LABEL_PAD)
    return;
  for (guint i = 0; i < job->bands->len && x < width; i++)
    {
      const TideJobBand *band = g_ptr_array_index (job->bands, i);
      g_autofree char *label = g_strdup_printf ("%s%s", band->label,
                                                band->process_id == scene->chosen_process
                                                ? " (shown below)" : "");

      set_rgb (cr, scene->palette->process[i % TIDE_RENDER_N_PROCESS_COLORS]);
      cairo_rectangle (cr, x, l->job_y + 5, 10, 10);
      cairo_fill (cr);
      draw_text (cr, text, label, x + 14, l->job_y + 2,
                 band->process_id == scene->chosen_process ? scene->palette->text
                                                           : scene->palette->text_dim);
      x += 14 + text_width (text, label) + 12;
    }
  /* The job's peak over the whole trace, as the summary and `report
   * --processes` give it, not the top of the columns in view. */
  if (x < width && scene->job_peak != NULL && scene->job_peak->known)
    {
      g_autofree char *peak = job_peak_figure (scene->job_peak);
      g_autofree char *limit = job->limit > 0 ? tide_format_bytes (job->limit) : NULL;
      g_autofree char *title = limit != NULL
        ? g_strdup_printf ("Job peak %s of %s limit", peak, limit)
        : g_strdup_printf ("Job peak %s", peak);

      draw_text (cr, text, title, width - 4 - text_width (text, title), l->job_y + 2,
                 scene->palette->text_dim);
    }
}

static void
draw_selection (cairo_t                *cr,
                const TideRenderScene  *scene,
                const TideRenderLayout *l,
                int                     width)
{
  double bottom = l->lanes_y + l->lane_h * MAX (l->n_lanes, 1);

  if (scene->selected_step != 0)
    for (guint i = first_visible_step (scene); i < scene->n_steps; i++)
      {
        const TideStepSpan *s = &scene->steps[i];

        if (s->start_ns >= scene->end_ns)
          break;
        if (s->number != scene->selected_step)
          continue;
        set_rgb (cr, scene->palette->accent);
        cairo_rectangle (cr, round (x_of (scene, width, s->start_ns)), l->lanes_y, 2,
                         bottom - l->lanes_y);
        cairo_rectangle (cr, round (x_of (scene, width, s->end_ns)) - 2, l->lanes_y, 2,
                         bottom - l->lanes_y);
        cairo_fill (cr);
      }
  if (scene->selection_begin >= 0 && scene->selection_end > scene->selection_begin)
    {
      double x0 = x_of (scene, width, scene->selection_begin);
      double x1 = x_of (scene, width, scene->selection_end);

      set_rgba (cr, scene->palette->accent, 0.22);
      cairo_rectangle (cr, x0, l->strip_y, x1 - x0, bottom - l->strip_y);
      cairo_fill (cr);
    }
}

static void
draw_transfers (cairo_t                *cr,
                const TideRenderScene  *scene,
                const TideRenderLayout *l,
                int                     width)
{
  gint64 biggest = 1;
  double cy = l->transfers_y + l->transfers_h / 2;

  if (l->transfers_h <= 0)
    return;
  for (guint i = 0; i < scene->n_transfers; i++)
    biggest = MAX (biggest, scene->transfers[i].bytes);
  for (guint i = 0; i < scene->n_transfers; i++)
    {
      const TideTransferMark *m = &scene->transfers[i];
      double x = x_of (scene, width, m->start_ns);
      double r = 1.5 + 5.0 * sqrt ((double) MAX (m->bytes, 0) / (double) biggest);

      if (x < -r || x > width + r)
        continue;
      set_rgb (cr, m->direction == 1 ? scene->palette->transfer_to_device
                   : m->direction == 2 ? scene->palette->transfer_to_host
                   : scene->palette->text_dim);
      cairo_new_sub_path (cr);
      cairo_arc (cr, x, cy, r, 0, 2 * G_PI);
      cairo_fill (cr);
    }
}

static void
draw_axis (cairo_t                *cr,
           const TideRenderScene  *scene,
           const TideRenderLayout *l,
           int                     width,
           PangoLayout            *text)
{
  gint64 span = scene->end_ns - scene->begin_ns;
  gint64 interval = tide_timeline_tick_interval (span, width, TICK_MIN_PX);
  gint64 first = scene->begin_ns <= 0 ? 0 : (scene->begin_ns + interval - 1) / interval * interval;
  /* Counted rather than compared with the end, which may lie at the last
   * nanosecond a gint64 holds; and at most one a pixel, since the longest
   * interval, a day, is short beside a span that a damaged trace claims. */
  gint64 n_ticks = first > scene->end_ns ? 0 : MIN ((scene->end_ns - first) / interval + 1, width);

  set_rgb (cr, scene->palette->grid);
  cairo_rectangle (cr, 0, l->axis_y, width, 1);
  for (gint64 i = 0, t = first; i < n_ticks; i++, t += interval)
    cairo_rectangle (cr, floor (x_of (scene, width, t)), l->axis_y, 1, 6);
  cairo_fill (cr);
  if (text == NULL)
    return;
  for (gint64 i = 0, t = first; i < n_ticks; i++, t += interval)
    {
      g_autofree char *label = tide_timeline_format_time (t, interval);
      double x = floor (x_of (scene, width, t)) + 3;

      if (x + text_width (text, label) <= width)
        draw_text (cr, text, label, x, l->axis_y + 5, scene->palette->text_dim);
    }
}

static double
legend_item (cairo_t     *cr,
             PangoLayout *text,
             double       x,
             double       y,
             guint32      swatch,
             const char  *name,
             guint32      fg)
{
  set_rgb (cr, swatch);
  cairo_rectangle (cr, x, y + 6, 12, 12);
  cairo_fill (cr);
  draw_text (cr, text, name, x + 16, y + 4, fg);
  return x + 16 + text_width (text, name) + 16;
}

static void
draw_legend (cairo_t                *cr,
             const TideRenderScene  *scene,
             const TideRenderLayout *l,
             PangoLayout            *text)
{
  const TidePalette *p = scene->palette;
  double x = 4;

  if (l->legend_h <= 0 || text == NULL)
    return;
  for (guint i = 0; i < l->n_lanes; i++)
    {
      const TideLaneData *lane = g_ptr_array_index (scene->data->lanes, i);
      x = legend_item (cr, text, x, l->legend_y, p->lane_line[tide_render_lane_color_index (
                         lane->counter, lane->device)], lane->name, p->text);
    }
  if (scene->data != NULL && scene->data->rss_classes[TIDE_RSS_CLASS_ANON] != NULL)
    for (guint k = 0; k < TIDE_RSS_N_CLASSES; k++)
      x = legend_item (cr, text, x, l->legend_y, p->rss_class[k], tide_render_rss_class_name (k),
                       p->text);
  x = legend_item (cr, text, x, l->legend_y, p->strip_leak, "leak step", p->text);
  if (scene->compare != NULL)
    x = legend_item (cr, text, x, l->legend_y, p->compare, "compared run (dashed)", p->text);
  if (scene->n_transfers > 0)
    {
      x = legend_item (cr, text, x, l->legend_y, p->transfer_to_device, "to device", p->text);
      legend_item (cr, text, x, l->legend_y, p->transfer_to_host, "to host", p->text);
    }
}

void
tide_render_timeline (cairo_t               *cr,
                      const TideRenderScene *scene,
                      int                    width,
                      int                    height)
{
  g_autoptr(PangoLayout) text = NULL;
  TideRenderLayout l;

  g_return_if_fail (scene->end_ns > scene->begin_ns);
  tide_render_layout (scene, width, height, &l);
  if (scene->show_labels)
    text = make_layout (cr);
  cairo_save (cr);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_DEFAULT);
  set_rgb (cr, scene->palette->background);
  cairo_paint (cr);
  draw_job_lane (cr, scene, &l, width, text);
  draw_step_bands (cr, scene, &l, width, text);
  draw_lanes (cr, scene, &l, width, text);
  draw_selection (cr, scene, &l, width);
  draw_transfers (cr, scene, &l, width);
  draw_axis (cr, scene, &l, width, text);
  draw_legend (cr, scene, &l, text);
  cairo_restore (cr);
}

/* What each class holds of the RSS under the pointer, and what it is. */
static void
append_rss_split (GString                *s,
                  const TideTimelineData *data,
                  guint                   column,
                  gint64                  rss)
{
  static const char *const meaning[TIDE_RSS_N_CLASSES] = {
    [TIDE_RSS_CLASS_FILE] = "code, mapped files",
    [TIDE_RSS_CLASS_SHMEM] = "/dev/shm, memfd, shared tensors",
    [TIDE_RSS_CLASS_ANON] = "heap, stacks, tensors",
    [TIDE_RSS_CLASS_ALLOC_FREE] = "freed, kept by malloc",
  };
  gint64 split[TIDE_RSS_N_CLASSES];

  if (!tide_timeline_data_rss_split (data, column, rss, split))
    return;
  for (gint k = TIDE_RSS_N_CLASSES - 1; k >= 0; k--)
    {
      g_autofree char *size = tide_format_bytes (split[k]);

      g_string_append_printf (s, "\n    %s: %s (%s)", tide_render_rss_class_name (k), size,
                              meaning[k]);
    }
}

/* The compared run's value in the same lane and column, if it has one. */
static void
append_compared (GString               *s,
                 const TideRenderScene *scene,
                 guint                  index,
                 guint                  column)
{
  const TideLaneData *other = compare_lane (scene, index);
  g_autofree char *size = NULL;
  gint64 value;

  if (other == NULL || !tide_lane_data_value_at (other, column, &value))
    return;
  size = tide_format_bytes (value);
  g_string_append_printf (s, " (compared: %s)", size);
}

static GString *
hover_text (const TideRenderScene *scene,
            int                    width,
            double                 x)
{
  gint64 span = scene->end_ns - scene->begin_ns;
  gint64 t = scene->begin_ns + (gint64) floor (x * (double) span / width);
  g_autofree char *when = tide_timeline_format_time (t, MAX (span / width, 1));
  gint step = tide_timeline_step_at (scene->steps, scene->n_steps, t);
  GString *s = g_string_new (when);

  if (step >= 0)
    g_string_append_printf (s, "  ·  step %d%s", scene->steps[step].number,
                            scene->steps[step].leak ? " (leak)" : "");
  for (guint i = 0; scene->data != NULL && i < scene->data->lanes->len; i++)
    {
      const TideLaneData *lane = g_ptr_array_index (scene->data->lanes, i);
      gint64 value;

      if (tide_lane_data_value_at (lane, (guint) CLAMP (x, 0, width - 1), &value))
        {
          g_autofree char *size = tide_format_bytes (value);
          g_string_append_printf (s, "\n%s: %s", lane->name, size);
          append_compared (s, scene, i, (guint) CLAMP (x, 0, width - 1));
          if (lane->counter == TIDE_COUNTER_RSS && lane->device < 0)
            append_rss_split (s, scene->data, (guint) CLAMP (x, 0, width - 1), value);
        }
    }
  return s;
}

/* The pointer line and a box with the values under it: drawn on top of the
 * cached frame, so moving the pointer redraws only this. */
void
tide_render_hover (cairo_t               *cr,
                   const TideRenderScene *scene,
                   int                    width,
                   int                    height,
                   double                 x)
{
  g_autoptr(GString) s = hover_text (scene, width, x);
  g_autoptr(PangoLayout) text = make_layout (cr);
  TideRenderLayout l;
  int tw, th;
  double bx;

  tide_render_layout (scene, width, height, &l);
  set_rgba (cr, scene->palette->text, 0.6);
  cairo_rectangle (cr, floor (x), l.strip_y, 1, l.axis_y - l.strip_y);
  cairo_fill (cr);

  pango_layout_set_text (text, s->str, -1);
  pango_layout_get_pixel_size (text, &tw, &th);
  bx = x + 12 + tw + 12 <= width ? x + 12 : MAX (x - 12 - tw - 12, 0);
  set_rgba (cr, scene->palette->background, 0.94);
  cairo_rectangle (cr, bx, l.lanes_y + 4, tw + 12, th + 8);
  cairo_fill_preserve (cr);
  set_rgb (cr, scene->palette->grid);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
  draw_text (cr, text, s->str, bx + 6, l.lanes_y + 8, scene->palette->text);
}

/**
 * tide_render_timeline_png:
 * @width: 64 to 16384 pixels
 * @height: 64 to 16384 pixels
 *
 * Draws the whole trace with tide_palette_light, labels and legend into a
 * PNG file: the job lane, then the lanes of the process the app opens on
 * (tide_report_pick_process()).  Needs no display.
 */
gboolean
tide_render_timeline_png (TideTrace   *trace,
                          const char  *path,
                          int          width,
                          int          height,
                          GError     **error)
{
  return tide_render_process_png (trace, 0, path, width, height, error);
}

/* Draws @scene (without its lanes' data, read here) into a PNG file. */
static gboolean
write_png (TideRenderScene *scene,
           const char      *path,
           int              width,
           int              height,
           GError         **error)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
  cairo_t *cr = cairo_create (surface);
  cairo_status_t status;

  tide_render_timeline (cr, scene, width, height);
  cairo_destroy (cr);
  status = cairo_surface_write_to_png (surface, path);
  cairo_surface_destroy (surface);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot write %s: %s", path,
                   cairo_status_to_string (status));
      return FALSE;
    }
  return TRUE;
}

/* 0 stands for the process the app opens on. */
static gint64
resolve_process (TideTrace  *trace,
                 gint64      process_id,
                 GError    **error)
{
  g_autoptr(GError) local_error = NULL;

  if (process_id != 0)
    return process_id;
  process_id = tide_report_pick_process (trace, NULL, &local_error);
  if (local_error != NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return process_id;
}

/* The whole of @trace for @process_id, with @compared's lanes over it when
 * it is given: the export of both PNG functions. */
static gboolean
render_png (TideTrace   *trace,
            gint64       process_id,
            TideTrace   *compared,
            const char  *path,
            int          width,
            int          height,
            GError     **error)
{
  g_autoptr(TideTimelineData) data = NULL;
  g_autoptr(TideTimelineData) compare = NULL;
  g_autoptr(TideTraceDiff) diff = NULL;
  g_autoptr(GArray) pairs = NULL;
  g_autoptr(TideJobLane) job = NULL;
  g_autoptr(GArray) steps = NULL;
  g_autoptr(GArray) transfers = NULL;
  g_autoptr(GError) local_error = NULL;
  TideRenderScene scene = { 0 };
  TideTimeWindow window;
  TideJobPeak job_peak;

  g_return_val_if_fail (TIDE_IS_TRACE (trace), FALSE);
  if (width < 64 || height < 64 || width > 16384 || height > 16384)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "image size %d×%d is out of range (64 to 16384 pixels a side)", width, height);
      return FALSE;
    }
  scene.begin_ns = 0;
  scene.end_ns = MAX (tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace),
                      TIDE_TIMELINE_MIN_SPAN_NS);
  if ((process_id = resolve_process (trace, process_id, &local_error)) == 0 &&
      local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  window = (TideTimeWindow) { scene.begin_ns, scene.end_ns, (guint) width };
  if (!tide_report_job_peak (trace, &job_peak, error) ||
      (job = tide_job_lane_query_job (trace, &window, error)) == NULL ||
      (data = tide_timeline_data_query (trace, process_id, &window, error)) == NULL ||
      (steps = tide_timeline_steps (trace, process_id, error)) == NULL ||
      (transfers = tide_timeline_transfers (trace, process_id, error)) == NULL)
    return FALSE;
  if (compared != NULL)
    {
      if ((diff = tide_trace_diff_new_for_process (trace, process_id, compared, error)) == NULL)
        return FALSE;
      pairs = tide_trace_diff_step_pairs (diff);
      compare = tide_timeline_compare_query (compared, NULL, diff->after_process->id,
                                             (const TideStepPair *) pairs->data, pairs->len,
                                             &window, error);
      if (compare == NULL)
        return FALSE;
    }
  scene.data = data;
  scene.compare = compare;
  scene.job = job;
  scene.job_peak = &job_peak;
  scene.chosen_process = process_id;
  scene.steps = (const TideStepSpan *) steps->data;
  scene.n_steps = steps->len;
  scene.transfers = (const TideTransferMark *) transfers->data;
  scene.n_transfers = transfers->len;
  scene.selection_begin = -1;
  scene.palette = &tide_palette_light;
  scene.show_labels = TRUE;
  scene.show_legend = TRUE;
  return write_png (&scene, path, width, height, error);
}

/**
 * tide_render_process_png:
 * @process_id: the process whose lanes, steps and transfers are drawn
 *   below the job lane, as the window shows it; 0: the default process
 *
 * tide_render_timeline_png() for a chosen process.  One process's steps
 * only: the step bands of two ranks drawn over each other would double
 * every label and mix leaking steps with clean ones.
 */
gboolean
tide_render_process_png (TideTrace   *trace,
                         gint64       process_id,
                         const char  *path,
                         int          width,
                         int          height,
                         GError     **error)
{
  return render_png (trace, process_id, NULL, path, width, height, error);
}

/**
 * tide_render_compare_png:
 * @process_id: as for tide_render_process_png()
 * @compared: the run drawn over it, step on step, as "Compare with…"
 *   shows it: its process of the same role and rank
 *
 * tide_render_process_png() with @compared's lanes dashed over the lanes.
 */
gboolean
tide_render_compare_png (TideTrace   *trace,
                         gint64       process_id,
                         TideTrace   *compared,
                         const char  *path,
                         int          width,
                         int          height,
                         GError     **error)
{
  g_return_val_if_fail (TIDE_IS_TRACE (compared), FALSE);
  return render_png (trace, process_id, compared, path, width, height, error);
}
