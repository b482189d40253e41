/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The one cairo drawing of the timeline, shared by TideTimelineView and PNG
 * export.  It needs no display: cairo and pango only.
 *
 * Layout, top to bottom: the job lane when the job has several processes
 * (every process's RSS stacked, one band of colour per process, in
 * process[i % 8] for the i-th process from the bottom), the chosen
 * process's step strip (numbered step bands), one lane per counter (host
 * lanes, then device lanes), a transfers row when the trace has transfers,
 * the time axis, and (in exports) the legend.  The plot spans
 * the full width: pixel column i shows data column i.
 *
 * Inside a lane, the background is the step band colour (band_even,
 * band_odd by step number parity, band_leak for leak steps, background
 * outside steps); below the curve of the last value the lane is filled with
 * lane_fill[i]; where a column's min and max differ by a pixel or more the
 * span is lane_envelope[i]; the curve itself is a 2 px line of lane_line[i]
 * on whole pixels, so those colours appear exactly in the image.
 *
 * PNG export always uses tide_palette_light, whose values are fixed (0xRRGGBB);
 * the app takes its colours from its stylesheet (app/gui/style.css, the same
 * light values, and app/gui/style-dark.css):
 *   background 0xffffff, band_even 0xffffff, band_odd 0xf6f5f4, band_leak 0xfbe0e1,
 *   strip_even 0xdeddda, strip_odd 0xc0bfbc, strip_leak 0xe01b24, accent 0x3584e4,
 *   lane i by tide_render_lane_color_index(): RSS 0, live heap 1, mapped 2,
 *   pinned 3, device lanes 4 + (device + counter) % 4;
 *   lane_line     0x1c71d8 0x26a269 0xe66100 0x813d9c 0xc01c28 0x986a44 0xe5a50a 0x5e5c64
 *   lane_fill     0xc6dcf5 0xc9e8da 0xf9d8bf 0xe0cee6 0xefc6c9 0xe5dad0 0xf8e8c2 0xd7d6d8
 *   lane_envelope 0x8eb8ec 0x92d0b4 0xf2b080 0xc09ece 0xe08e94 0xccb4a2 0xf2d284 0xaeaeb2
 *   band_highlight 0xf1e7f6, highlight 0xa51d8c
 *   process       0x3584e4 0xe66100 0x2ec27e 0x9141ac 0xc01c28 0x865e3c 0xe5a50a 0x5e5c64
 *   rss_class     file 0xdeddda, shmem 0xb5e3e0, anon 0xc6dcf5, allocator free 0xf6e0b0
 *   compare 0x3d3846
 *
 * Where the trace has the RSS's classes (TideTimelineData.rss_classes), the
 * RSS lane's fill is stacked by class, bottom up as TideRssClass orders
 * them, each part scaled so that the stack fills the curve
 * (tide_timeline_data_rss_split); anon's colour is the lane's own fill.
 *
 * A chosen leak suspect (highlight_step > 0) tints the lanes of the steps
 * from its growth step on with band_highlight (over the leak colour), and
 * its live bytes at each of those step ends are drawn over its lane as a
 * 2 px staircase of highlight on the lane's scale, one tread per step.
 *
 * A compared run (scene->compare, its lanes already mapped onto the shown
 * columns step by step, tide-timeline-compare.h) is drawn over each lane
 * of the same counter and device as a dashed 2 px curve of compare: the
 * curve's boxes of the columns c with (c / COMPARE_DASH) even, risers
 * included; the lane's scale is then the larger of the two peaks, so
 * neither run is clipped.
 */
#pragma once

#include <cairo.h>

#include "tide-job-lane.h"
#include "tide-report.h"
#include "tide-timeline-data.h"

G_BEGIN_DECLS

#define TIDE_RENDER_N_LANE_COLORS 8
#define TIDE_RENDER_N_PROCESS_COLORS 8
#define TIDE_RENDER_COMPARE_DASH 4     /* columns on, then off, of the compared curve */
#define TIDE_RENDER_LIMIT_DASH   6     /* columns on, then off, of the job's memory limit */

typedef struct
{
  guint32 background;
  guint32 text;
  guint32 text_dim;
  guint32 grid;
  guint32 band_even;
  guint32 band_odd;
  guint32 band_leak;
  guint32 strip_even;
  guint32 strip_odd;
  guint32 strip_leak;
  guint32 strip_text;
  guint32 strip_leak_text;
  guint32 accent;
  guint32 transfer_to_device;
  guint32 transfer_to_host;
  guint32 lane_line[TIDE_RENDER_N_LANE_COLORS];
  guint32 lane_fill[TIDE_RENDER_N_LANE_COLORS];
  guint32 lane_envelope[TIDE_RENDER_N_LANE_COLORS];
  guint32 band_highlight;   /* steps of a chosen suspect's growth */
  guint32 highlight;        /* the suspect's live bytes over its lane */
  guint32 process[TIDE_RENDER_N_PROCESS_COLORS]; /* the job lane's bands */
  guint32 rss_class[TIDE_RSS_N_CLASSES]; /* the RSS lane's fill, by TideRssClass */
  guint32 compare;          /* a compared run's lanes, dashed over the shown ones */
  guint32 death;            /* where a process of the job died */
  guint32 limit;            /* the job's memory limit, dashed across the job lane */
} TidePalette;

extern const TidePalette tide_palette_light;

typedef struct
{
  const TideTimelineData *data;          /* nullable; columns = width */
  const TideStepSpan     *steps;
  guint                   n_steps;
  const TideTransferMark *transfers;
  guint                   n_transfers;
  gint64                  begin_ns;      /* visible range */
  gint64                  end_ns;
  gint                    selected_step; /* step number, 0: none */
  gint64                  selection_begin; /* -1: no range selected */
  gint64                  selection_end;
  const TidePalette      *palette;
  gint                    highlight_step;  /* a suspect's growth step, 0: none */
  gint                    highlight_device; /* its lane: -1 live heap, else the device's first */
  const TideSeriesPoint  *highlight_series; /* its live bytes per step end */
  guint                   n_highlight;
  gboolean                show_labels;   /* off in pixel tests: glyphs vary */
  gboolean                show_legend;
  const TideJobLane      *job;           /* nullable; drawn with two processes or more */
  const TideJobPeak      *job_peak;      /* nullable: the job lane's title, the job's peak */
  gint64                  chosen_process; /* whose lanes are drawn below the job lane */
  const TideTimelineData *compare;       /* nullable: a compared run's lanes, same columns */
} TideRenderScene;

typedef struct
{
  double job_y, job_h;
  double strip_y, strip_h;
  double lanes_y, lane_h;
  guint  n_lanes;
  double transfers_y, transfers_h;
  double axis_y, axis_h;
  double legend_y, legend_h;
} TideRenderLayout;

guint    tide_render_lane_color_index (gint                   counter,
                                       gint                   device);
void     tide_render_layout           (const TideRenderScene *scene,
                                       int                    width,
                                       int                    height,
                                       TideRenderLayout      *layout);
gint64   tide_render_lane_peak        (const TideRenderScene *scene,
                                       guint                  lane);
double   tide_render_value_to_y       (const TideRenderLayout *layout,
                                       guint                  lane,
                                       gint64                 value,
                                       gint64                 peak);
const char *tide_render_rss_class_name (TideRssClass          rss_class);
double   tide_render_job_value_to_y   (const TideRenderLayout *layout,
                                       gint64                 value,
                                       gint64                 peak);
gint64   tide_render_job_process_at   (const TideRenderScene *scene,
                                       int                    width,
                                       int                    height,
                                       double                 x,
                                       double                 y);
void     tide_render_timeline         (cairo_t               *cr,
                                       const TideRenderScene *scene,
                                       int                    width,
                                       int                    height);
void     tide_render_hover            (cairo_t               *cr,
                                       const TideRenderScene *scene,
                                       int                    width,
                                       int                    height,
                                       double                 x);
gboolean tide_render_timeline_png     (TideTrace             *trace,
                                       const char            *path,
                                       int                    width,
                                       int                    height,
                                       GError               **error);
gboolean tide_render_process_png      (TideTrace             *trace,
                                       gint64                 process_id,
                                       const char            *path,
                                       int                    width,
                                       int                    height,
                                       GError               **error);
gboolean tide_render_compare_png      (TideTrace             *trace,
                                       gint64                 process_id,
                                       TideTrace             *compared,
                                       const char            *path,
                                       int                    width,
                                       int                    height,
                                       GError               **error);

G_END_DECLS
