/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * bench-timeline TRACE: what the timeline costs on a (large) trace.
 *
 *  - first frame: open the trace, read steps (with leak suspects) and
 *    transfers, query the lanes for the whole trace and draw it, as the
 *    view does on opening;
 *  - pan/zoom frames: a scripted mix of zooms (x1.5 around a pointer) and
 *    pans (120 px), each one a lane query plus a full redraw; the same
 *    script twice, reading SQLite every frame (the baseline) and through
 *    the view's TideTimelineCache, which keeps the LOD rows it read;
 *  - drill-down: selecting a step, as the window does it: the retained
 *    groups of the step's span with their frames (tide_drilldown_retained),
 *    for --drill steps spread over the trace;
 *  - baseline: one scan of the raw counters table over the whole trace,
 *    the work the LOD summaries avoid; the ratio is printed.
 *
 * Medians over --runs runs (at least 5), and the process's peak RSS,
 * then a table against the targets; the exit status is 1 when one is
 * missed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tide-bench-median.h"
#include "tide-drilldown.h"
#include "tide-render.h"
#include "tide-timeline-data.h"
#include "tide-timeline-model.h"
#include "tide-trace-private.h"

typedef struct
{
  double first_frame_ms;
  double frame_median_ms;
  double frame_p95_ms;
  double frame_max_ms;
  double cached_median_ms;
  double cached_p95_ms;
  double cached_max_ms;
  double pan_p95_ms[2];      /* pan only: baseline, cached */
  double pan_max_ms[2];
  double drill_median_ms;
  double drill_max_ms;
  double raw_scan_ms;
} Run;

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

static gboolean
draw (TideTrace         *trace,
      TideTimelineCache *cache,
      TideRenderScene   *scene,
      cairo_t           *cr,
      int                width,
      int                height)
{
  g_autoptr(GError) error = NULL;
  TideTimeWindow window = { scene->begin_ns, scene->end_ns, width };
  g_autoptr(TideTimelineData) data = tide_timeline_data_query_cached (trace, cache, 0, &window,
                                                                      &error);
  if (data == NULL)
    {
      g_printerr ("bench-timeline: %s\n", error->message);
      return FALSE;
    }
  scene->data = data;
  tide_render_timeline (cr, scene, width, height);
  cairo_surface_flush (cairo_get_target (cr));
  scene->data = NULL;
  return TRUE;
}

static double
raw_scan (TideTrace *trace)
{
  sqlite3_stmt *stmt = NULL;
  double t0 = now_ms ();
  gint64 sum = 0;

  sqlite3_prepare_v2 (_tide_trace_get_db (trace),
                      "SELECT ts_ns, value FROM counters WHERE process_id = 1 AND counter = 1",
                      -1, &stmt, NULL);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    sum += sqlite3_column_int64 (stmt, 1);
  sqlite3_finalize (stmt);
  return sum == -1 ? 0 : now_ms () - t0;
}

/* The frame script from the whole trace: zoom in for 3 frames, pan for 1,
 * and start over when narrow.  Fills @frames with each frame's time. */
static gboolean
pan_zoom (TideTrace         *trace,
          TideTimelineCache *cache,
          TideRenderScene   *scene,
          cairo_t           *cr,
          int                width,
          int                height,
          guint              n_frames,
          double            *frames)
{
  GRand *rand = g_rand_new_with_seed (7);
  TideTimelineModel model;
  gboolean ok = TRUE;

  tide_timeline_model_init (&model, 0,
                            tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace), width);
  for (guint i = 0; i < n_frames && ok; i++)
    {
      double x = g_rand_double_range (rand, 0, width);
      double f0 = now_ms ();

      if (model.end - model.begin < 1000000)
        tide_timeline_model_fit (&model);
      else if (i % 4 == 3)
        tide_timeline_model_pan_by (&model, g_rand_boolean (rand) ? 120 : -120);
      else
        tide_timeline_model_zoom_around (&model, x, 1.5);
      scene->begin_ns = model.begin;
      scene->end_ns = model.end;
      ok = draw (trace, cache, scene, cr, width, height);
      frames[i] = now_ms () - f0;
    }
  g_rand_free (rand);
  return ok;
}

/* Panning only, 120 px left and right around the middle of a 10 s view,
 * as a user scrubs back and forth over a region. */
static gboolean
pan_only (TideTrace         *trace,
          TideTimelineCache *cache,
          TideRenderScene   *scene,
          cairo_t           *cr,
          int                width,
          int                height,
          guint              n_frames,
          double            *frames)
{
  gint64 span = tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace);
  TideTimelineModel model;
  gboolean ok = TRUE;

  tide_timeline_model_init (&model, 0, span, width);
  tide_timeline_model_set_range (&model, span / 2, span / 2 + 10 * G_GINT64_CONSTANT (1000000000));
  for (guint i = 0; i < n_frames && ok; i++)
    {
      double f0 = now_ms ();

      tide_timeline_model_pan_by (&model, (i / 8) % 2 == 0 ? 120 : -120);
      scene->begin_ns = model.begin;
      scene->end_ns = model.end;
      ok = draw (trace, cache, scene, cr, width, height);
      frames[i] = now_ms () - f0;
    }
  return ok;
}

/* Selecting a step: its retained groups with their frames, as the window
 * fills the drill-down model and the flame graph from them. */
static gboolean
drill_down (TideTrace *trace,
            GArray    *steps,
            guint      n_drill,
            double    *times)
{
  for (guint i = 0; i < n_drill; i++)
    {
      const TideStepSpan *step = &g_array_index (steps, TideStepSpan,
                                                 (steps->len - 1) * (i + 1) / (n_drill + 1));
      g_autoptr(GPtrArray) groups = NULL;
      g_autoptr(GError) error = NULL;
      double t0 = now_ms ();

      groups = tide_drilldown_retained (trace, step->process_id, step->start_ns, step->end_ns,
                                        &error);
      if (groups == NULL)
        {
          g_printerr ("bench-timeline: %s\n", error->message);
          return FALSE;
        }
      times[i] = now_ms () - t0;
    }
  return TRUE;
}

static gboolean
run_once (const char *path,
          int         width,
          int         height,
          guint       n_frames,
          guint       n_drill,
          guint       cached_first,
          Run        *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GArray) steps = NULL;
  g_autoptr(GArray) transfers = NULL;
  g_autofree double *frames = g_new (double, n_frames);
  g_autofree double *drills = g_new (double, n_drill);
  g_autoptr(TideTimelineCache) cache = NULL;
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
  cairo_t *cr = cairo_create (surface);
  TideRenderScene scene = { .selection_begin = -1, .palette = &tide_palette_light,
                            .show_labels = TRUE };
  TideTimelineModel model;
  double t0 = now_ms ();
  gboolean ok = FALSE;

  if ((trace = tide_trace_open (path, &error)) == NULL ||
      (steps = tide_timeline_steps (trace, 0, &error)) == NULL ||
      (transfers = tide_timeline_transfers (trace, 0, &error)) == NULL)
    {
      g_printerr ("bench-timeline: %s\n", error->message);
      goto out;
    }
  tide_timeline_model_init (&model, 0, tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace),
                            width);
  scene.steps = (TideStepSpan *) steps->data;
  scene.n_steps = steps->len;
  scene.transfers = (TideTransferMark *) transfers->data;
  scene.n_transfers = transfers->len;
  scene.begin_ns = model.begin;
  scene.end_ns = model.end;
  if (!draw (trace, NULL, &scene, cr, width, height))
    goto out;
  out->first_frame_ms = now_ms () - t0;

  /* Baseline and cached in turn first, so that neither always finds the
   * other's pages in SQLite's and the kernel's caches. */
  cache = tide_timeline_cache_new (64 * 1024 * 1024);
  for (guint pass = 0; pass < 2; pass++)
    {
      gboolean cached = (pass + cached_first) % 2 == 1;

      if (!pan_zoom (trace, cached ? cache : NULL, &scene, cr, width, height, n_frames, frames))
        goto out;
      *(cached ? &out->cached_median_ms : &out->frame_median_ms) =
        tide_bench_median (frames, n_frames);
      *(cached ? &out->cached_p95_ms : &out->frame_p95_ms) = frames[(n_frames * 95) / 100];
      *(cached ? &out->cached_max_ms : &out->frame_max_ms) = frames[n_frames - 1];
    }
  for (guint pass = 0; pass < 2; pass++)
    {
      gboolean cached = (pass + cached_first) % 2 == 1;

      if (!pan_only (trace, cached ? cache : NULL, &scene, cr, width, height, n_frames, frames))
        goto out;
      tide_bench_median (frames, n_frames);
      out->pan_p95_ms[cached] = frames[(n_frames * 95) / 100];
      out->pan_max_ms[cached] = frames[n_frames - 1];
    }
  if (!drill_down (trace, steps, n_drill, drills))
    goto out;
  out->drill_median_ms = tide_bench_median (drills, n_drill);
  out->drill_max_ms = drills[n_drill - 1];
  out->raw_scan_ms = raw_scan (trace);
  ok = TRUE;

out:
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  return ok;
}

static gint64
peak_rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL) ||
      (line = strstr (status, "VmHWM:")) == NULL)
    return -1;
  return g_ascii_strtoll (line + 6, NULL, 10);
}

static gboolean
print_target (const char *what,
              double      value,
              double      target,
              const char *unit)
{
  g_print ("  %-30s %10.1f %-4s < %6.0f %-4s %s\n", what, value, unit, target, unit,
           value < target ? "met" : "MISSED");
  return value < target;
}

/* The app's targets on a big trace, one line each; FALSE when one is missed. */
static gboolean
print_targets (double first_ms,
               double frame_median_ms,
               double frame_max_ms,
               double drill_ms,
               double rss_mib)
{
  gboolean met = TRUE;

  g_print ("against the targets (medians over runs):\n");
  met &= print_target ("open to first frame", first_ms, 300, "ms");
  met &= print_target ("pan/zoom frame, median (view)", frame_median_ms, 16, "ms");
  met &= print_target ("pan/zoom frame, max (view)", frame_max_ms, 16, "ms");
  met &= print_target ("drill-down of a step", drill_ms, 50, "ms");
  met &= print_target ("peak RSS", rss_mib, 300, "MiB");
  return met;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = g_option_context_new ("TRACE - time the timeline");
  g_autoptr(GError) error = NULL;
  int runs = 5, frames = 60, drill = 5, width = 1600, height = 900;
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Runs (at least 5)", "N" },
    { "frames", 0, 0, G_OPTION_ARG_INT, &frames, "Pan/zoom frames per run", "N" },
    { "drill", 0, 0, G_OPTION_ARG_INT, &drill, "Steps drilled into per run", "N" },
    { "width", 0, 0, G_OPTION_ARG_INT, &width, "Width", "W" },
    { "height", 0, 0, G_OPTION_ARG_INT, &height, "Height", "H" },
    { NULL }
  };
  g_autofree double *first = NULL, *med = NULL, *p95 = NULL, *max = NULL, *raw = NULL;
  g_autofree double *cmed = NULL, *cp95 = NULL, *cmax = NULL, *dmed = NULL, *dmax = NULL;
  g_autofree double *pan = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || runs < 5 ||
      frames < 1 || drill < 1 || width < 64 || height < 64)
    {
      g_printerr ("usage: bench-timeline [--runs N>=5] [--frames N] [--drill N] TRACE\n");
      return 2;
    }
  first = g_new (double, runs);
  med = g_new (double, runs);
  p95 = g_new (double, runs);
  max = g_new (double, runs);
  raw = g_new (double, runs);
  cmed = g_new (double, runs);
  cp95 = g_new (double, runs);
  cmax = g_new (double, runs);
  dmed = g_new (double, runs);
  dmax = g_new (double, runs);
  pan = g_new (double, 4 * runs);
  for (int r = 0; r < runs; r++)
    {
      Run run;

      if (!run_once (argv[1], width, height, frames, drill, r % 2, &run))
        return 1;
      first[r] = run.first_frame_ms;
      med[r] = run.frame_median_ms;
      p95[r] = run.frame_p95_ms;
      max[r] = run.frame_max_ms;
      raw[r] = run.raw_scan_ms;
      cmed[r] = run.cached_median_ms;
      cp95[r] = run.cached_p95_ms;
      cmax[r] = run.cached_max_ms;
      dmed[r] = run.drill_median_ms;
      dmax[r] = run.drill_max_ms;
      for (int k = 0; k < 2; k++)
        {
          pan[k * runs + r] = run.pan_p95_ms[k];
          pan[(2 + k) * runs + r] = run.pan_max_ms[k];
        }
    }
  g_print ("timeline %dx%d, %d runs of %d pan/zoom frames (medians over runs)\n",
           width, height, runs, frames);
  g_print ("  open to first frame   %8.1f ms   (target < 300)\n", tide_bench_median (first, runs));
  g_print ("  pan/zoom, SQLite every frame (baseline):\n");
  g_print ("    frame median        %8.2f ms\n", tide_bench_median (med, runs));
  g_print ("    frame p95           %8.2f ms\n", tide_bench_median (p95, runs));
  g_print ("    frame max           %8.2f ms\n", tide_bench_median (max, runs));
  g_print ("  pan/zoom, LOD rows cached (the view):\n");
  g_print ("    frame median        %8.2f ms   (target: every frame < 16)\n",
           tide_bench_median (cmed, runs));
  g_print ("    frame p95           %8.2f ms   (%.2fx the baseline's)\n",
           tide_bench_median (cp95, runs),
           tide_bench_median (cp95, runs) / MAX (tide_bench_median (p95, runs), 0.001));
  g_print ("    frame max           %8.2f ms\n", tide_bench_median (cmax, runs));
  g_print ("  pan only (10 s view, back and forth): p95 %.2f / max %.2f ms baseline,"
           " p95 %.2f / max %.2f ms cached\n", tide_bench_median (pan, runs),
           tide_bench_median (pan + 2 * runs, runs), tide_bench_median (pan + runs, runs),
           tide_bench_median (pan + 3 * runs, runs));
  g_print ("  drill-down of a step, %d steps a run:\n", drill);
  g_print ("    median              %8.1f ms   (target < 50)\n", tide_bench_median (dmed, runs));
  g_print ("    max                 %8.1f ms\n", tide_bench_median (dmax, runs));
  g_print ("  raw counter scan      %8.1f ms   (baseline: one lane, whole trace, no LOD;"
           " %.0fx a frame)\n", tide_bench_median (raw, runs),
           tide_bench_median (raw, runs) / MAX (tide_bench_median (med, runs), 0.001));
  g_print ("  peak RSS              %8.1f MiB  (target < 300)\n", peak_rss_kib () / 1024.0);
  return print_targets (tide_bench_median (first, runs), tide_bench_median (cmed, runs),
                        tide_bench_median (cmax, runs), tide_bench_median (dmed, runs),
                        peak_rss_kib () / 1024.0) ? 0 : 1;
}
