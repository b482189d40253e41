/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * bench-timeline TRACE: what the timeline costs on a (large) trace.
 *
 *  - first frame: open the trace, read steps (with leak suspects) and
 *    transfers, query the lanes for the whole trace and draw it, as the
 *    view does on opening;
 *  - pan/zoom frames: a scripted mix of zooms (x1.5 around a pointer) and
 *    pans (120 px), each one a lane query plus a full redraw;
 *  - baseline: one scan of the raw counters table over the whole trace,
 *    the work the LOD summaries avoid; the ratio is printed.
 *
 * Medians over --runs runs (at least 5), and the process's peak RSS.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

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
  double raw_scan_ms;
} Run;

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

static int
compare_double (gconstpointer a,
                gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v,
        guint   n)
{
  qsort (v, n, sizeof *v, (GCompareFunc) compare_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static gboolean
draw (TideTrace       *trace,
      TideRenderScene *scene,
      cairo_t         *cr,
      int              width,
      int              height)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTimelineData) data = tide_timeline_data_query (trace, 0, scene->begin_ns,
                                                               scene->end_ns, width, &error);
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

static gboolean
run_once (const char *path,
          int         width,
          int         height,
          guint       n_frames,
          Run        *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GArray) steps = NULL;
  g_autoptr(GArray) transfers = NULL;
  g_autofree double *frames = g_new (double, n_frames);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
  cairo_t *cr = cairo_create (surface);
  GRand *rand = g_rand_new_with_seed (7);
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
  if (!draw (trace, &scene, cr, width, height))
    goto out;
  out->first_frame_ms = now_ms () - t0;

  for (guint i = 0; i < n_frames; i++)
    {
      double x = g_rand_double_range (rand, 0, width);
      double f0 = now_ms ();

      /* Zoom in for 3 frames, pan for 1, and start over when narrow. */
      if (model.end - model.begin < 1000000)
        tide_timeline_model_fit (&model);
      else if (i % 4 == 3)
        tide_timeline_model_pan_by (&model, g_rand_boolean (rand) ? 120 : -120);
      else
        tide_timeline_model_zoom_around (&model, x, 1.5);
      scene.begin_ns = model.begin;
      scene.end_ns = model.end;
      if (!draw (trace, &scene, cr, width, height))
        goto out;
      frames[i] = now_ms () - f0;
    }
  out->frame_median_ms = median (frames, n_frames);
  out->frame_p95_ms = frames[(n_frames * 95) / 100];
  out->frame_max_ms = frames[n_frames - 1];
  out->raw_scan_ms = raw_scan (trace);
  ok = TRUE;

out:
  g_rand_free (rand);
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

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = g_option_context_new ("TRACE - time the timeline");
  g_autoptr(GError) error = NULL;
  int runs = 5, frames = 60, width = 1600, height = 900;
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Runs (at least 5)", "N" },
    { "frames", 0, 0, G_OPTION_ARG_INT, &frames, "Pan/zoom frames per run", "N" },
    { "width", 0, 0, G_OPTION_ARG_INT, &width, "Width", "W" },
    { "height", 0, 0, G_OPTION_ARG_INT, &height, "Height", "H" },
    { NULL }
  };
  g_autofree double *first = NULL, *med = NULL, *p95 = NULL, *max = NULL, *raw = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2 || runs < 5 ||
      frames < 1 || width < 64 || height < 64)
    {
      g_printerr ("usage: bench-timeline [--runs N>=5] [--frames N] TRACE\n");
      return 2;
    }
  first = g_new (double, runs);
  med = g_new (double, runs);
  p95 = g_new (double, runs);
  max = g_new (double, runs);
  raw = g_new (double, runs);
  for (int r = 0; r < runs; r++)
    {
      Run run;

      if (!run_once (argv[1], width, height, frames, &run))
        return 1;
      first[r] = run.first_frame_ms;
      med[r] = run.frame_median_ms;
      p95[r] = run.frame_p95_ms;
      max[r] = run.frame_max_ms;
      raw[r] = run.raw_scan_ms;
    }
  g_print ("timeline %dx%d, %d runs of %d pan/zoom frames (medians over runs)\n",
           width, height, runs, frames);
  g_print ("  open to first frame   %8.1f ms   (target < 1000)\n", median (first, runs));
  g_print ("  pan/zoom frame median %8.2f ms   (target < 16)\n", median (med, runs));
  g_print ("  pan/zoom frame p95    %8.2f ms\n", median (p95, runs));
  g_print ("  pan/zoom frame max    %8.2f ms\n", median (max, runs));
  g_print ("  raw counter scan      %8.1f ms   (baseline: one lane, whole trace, no LOD;"
           " %.0fx a frame)\n", median (raw, runs), median (raw, runs) / MAX (median (med, runs), 0.001));
  g_print ("  peak RSS              %8.1f MiB  (target < 300)\n", peak_rss_kib () / 1024.0);
  return 0;
}
