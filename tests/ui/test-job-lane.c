/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The job lane and the process a view opens on, on the two-rank trace of
 * tide_test_job_trace_write(), whose values are known exactly.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>

#include "tide-job-lane.h"
#include "tide-processes.h"
#include "tide-render.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-png.h"
#include "tide-test-util.h"
#include "tide-test-trace.h"

#define WIDTH      400
#define HEIGHT     300

typedef struct
{
  char          *dir;
  char          *path;
  TideTrace     *trace;
  TideTimeWindow window;    /* whole_trace()'s */
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;

  f->dir = tide_test_make_dir ("tide-job-lane");
  f->path = tide_test_job_trace_write (f->dir);
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  unused)
{
  g_clear_object (&f->trace);
  tide_test_remove_dir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

static gint64
trace_span (Fixture *f)
{
  return tide_trace_get_end_ns (f->trace) - tide_trace_get_start_ns (f->trace);
}

/* The whole trace in @n_columns, as the export draws it. */
static const TideTimeWindow *
whole_trace (Fixture *f,
             guint    n_columns)
{
  f->window = (TideTimeWindow) { 0, trace_span (f), n_columns };
  return &f->window;
}

/* The column whose time is the middle of rank 1's step @k. */
static guint
column_of_rank1_step (Fixture *f,
                      gint     k)
{
  gint64 t = JOB_STEP_NS / 2 + (k - 1) * JOB_STEP_NS + JOB_STEP_NS / 2;

  return (guint) (t * WIDTH / trace_span (f));
}

static void
test_bands (Fixture       *f,
            gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideJobLane) job = tide_job_lane_query_job (f->trace, whole_trace (f, WIDTH), &error);
  guint c = column_of_rank1_step (f, 6);
  const TideJobBand *band;

  g_assert_no_error (error);
  /* The job's footprint: PSS, which counts shared pages once. */
  g_assert_true (job->by_pss);
  g_assert_cmpuint (job->bands->len, ==, 2);
  band = g_ptr_array_index (job->bands, 0);
  g_assert_cmpint (band->process_id, ==, 1);
  g_assert_cmpstr (band->label, ==, "rank 0");
  g_assert_cmpint (band->last[c], ==, job_rank0_pss (6));
  band = g_ptr_array_index (job->bands, 1);
  g_assert_cmpint (band->process_id, ==, 2);
  g_assert_cmpint (band->last[c], ==, job_rank1_pss (6));
  g_assert_cmpint (tide_job_lane_total_below (job, 2, c), ==, job_rank0_pss (6) + job_rank1_pss (6));
  g_assert_cmpint (job->peak, ==, job_rank0_pss (JOB_N_STEPS) + job_rank1_pss (JOB_N_STEPS));
  /* What a click picks: rank 0's band at the bottom, rank 1's above it. */
  g_assert_cmpint (tide_job_lane_process_at (job, c, 0), ==, 1);
  g_assert_cmpint (tide_job_lane_process_at (job, c, job_rank0_pss (6) - 1), ==, 1);
  g_assert_cmpint (tide_job_lane_process_at (job, c, job_rank0_pss (6)), ==, 2);
  g_assert_cmpint (tide_job_lane_process_at (job, c, job_rank0_pss (6) + job_rank1_pss (6)), ==, 0);
  /* A counter a process never sampled is no lane, and no error: what makes
   * a trace without PSS fall back to RSS. */
  g_assert_null (tide_timeline_data_query_lane (f->trace, NULL, 1, TIDE_COUNTER_RSS_SHMEM, -1,
                                                whole_trace (f, WIDTH), &error));
  g_assert_no_error (error);
}

/* The leaking rank, although it is not the first process. */
static void
test_default_process (Fixture       *f,
                      gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (tide_report_pick_process (f->trace, NULL, &error), ==, 2);
  g_assert_no_error (error);
}

/* The exported PNG: the job lane shows both ranks in their colours, stacked
 * exactly; the strip below shows rank 1's steps only. */
static void
test_png (Fixture       *f,
          gconstpointer  unused)
{
  const TidePalette *p = &tide_palette_light;
  g_autoptr(GError) error = NULL;
  g_autofree char *png = g_build_filename (f->dir, "job.png", NULL);
  g_autoptr(TideJobLane) job = tide_job_lane_query_job (f->trace, whole_trace (f, WIDTH), &error);
  TideRenderScene scene = { .job = job, .begin_ns = 0, .end_ns = trace_span (f) };
  guint c = column_of_rank1_step (f, 6);
  cairo_surface_t *image;
  TideRenderLayout l;
  double y_total, y_rank0, y_bottom;

  g_assert_true (tide_render_timeline_png (f->trace, png, WIDTH, HEIGHT, &error));
  g_assert_no_error (error);
  image = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);

  tide_render_layout (&scene, WIDTH, HEIGHT, &l);
  g_assert_cmpfloat (l.job_h, >, 0);
  y_total = tide_render_job_value_to_y (&l, job_rank0_pss (6) + job_rank1_pss (6), job->peak);
  y_rank0 = tide_render_job_value_to_y (&l, job_rank0_pss (6), job->peak);
  y_bottom = tide_render_job_value_to_y (&l, 0, job->peak);
  for (int y = (int) y_total; y < (int) y_rank0; y++)
    g_assert_cmphex (tide_test_pixel (image, c, y), ==, p->process[1]);
  for (int y = (int) y_rank0; y < (int) y_bottom; y++)
    g_assert_cmphex (tide_test_pixel (image, c, y), ==, p->process[0]);
  g_assert_cmphex (tide_test_pixel (image, c, (int) y_total - 1), ==, p->background);

  /* One set of step bands, rank 1's: from its first leaking step on, every
   * strip column is the leak colour, or the one-pixel gap between two
   * steps, which is the background. */
  for (guint x = column_of_rank1_step (f, JOB_LEAK_FROM); x < column_of_rank1_step (f, JOB_N_STEPS); x++)
    {
      guint32 strip = tide_test_pixel (image, x, (int) (l.strip_y + l.strip_h - 2));
      if (strip != p->strip_leak)
        g_assert_cmphex (strip, ==, p->background);
    }
  cairo_surface_destroy (image);
  g_unlink (png);
}

/* The RSS lane of the exported process is stacked by class, bottom up:
 * file-backed, shmem, anonymous, allocator free, under the RSS curve. */
static void
test_png_rss_classes (Fixture       *f,
                      gconstpointer  unused)
{
  const TidePalette *p = &tide_palette_light;
  g_autoptr(GError) error = NULL;
  g_autofree char *png = g_build_filename (f->dir, "classes.png", NULL);
  g_autoptr(TideJobLane) job = tide_job_lane_query_job (f->trace, whole_trace (f, WIDTH), &error);
  g_autoptr(TideTimelineData) data = tide_timeline_data_query (f->trace, 2, whole_trace (f, WIDTH),
                                                               &error);
  TideRenderScene scene = { .job = job, .data = data, .begin_ns = 0, .end_ns = trace_span (f),
                            .show_legend = TRUE };
  const TideLaneData *rss = tide_timeline_data_find_lane (data, TIDE_COUNTER_RSS, -1);
  gint64 bounds[] = { 0, JOB_RANK1_FILE, JOB_RANK1_FILE + JOB_RANK1_SHMEM,
                      job_rank1_rss (6) - JOB_RANK1_FREE, job_rank1_rss (6) };
  guint c = column_of_rank1_step (f, 6);
  cairo_surface_t *image;
  TideRenderLayout l;

  g_assert_no_error (error);
  g_assert_nonnull (rss);
  g_assert_true (tide_render_process_png (f->trace, 2, png, WIDTH, HEIGHT, &error));
  g_assert_no_error (error);
  image = cairo_image_surface_create_from_png (png);
  tide_render_layout (&scene, WIDTH, HEIGHT, &l);
  g_assert_cmpuint (l.n_lanes, ==, 1);
  for (guint k = 0; k < TIDE_RSS_N_CLASSES; k++)
    {
      int bottom = (int) (k == 0 ? l.lanes_y + l.lane_h
                                 : tide_render_value_to_y (&l, 0, bounds[k], rss->peak));
      int top = (int) tide_render_value_to_y (&l, 0, bounds[k + 1], rss->peak);

      g_assert_cmpint (bottom - top, >, 2);
      /* Inside the class's part, clear of the curve's two rows at the top. */
      for (int y = top + 1; y < bottom - 1; y++)
        if (k < TIDE_RSS_N_CLASSES - 1 || y > top + 1)
          g_assert_cmphex (tide_test_pixel (image, c, y), ==, p->rss_class[k]);
    }
  cairo_surface_destroy (image);
  g_unlink (png);
}

/* A job that ran into its memory limit: the exported PNG draws the limit
 * dashed across the job lane where the lane's scale puts it, and a mark
 * where rank 1 died, over the job lane and over its own lanes. */
static void
test_png_death (Fixture       *f,
                gconstpointer  unused)
{
  const TidePalette *p = &tide_palette_light;
  g_autoptr(GError) error = NULL;
  g_autofree char *png = g_build_filename (f->dir, "death.png", NULL);
  g_autoptr(TideJobLane) job = NULL;
  g_autoptr(TideTimelineData) data = NULL;
  g_autofree char *sql = NULL;
  gint64 peak = job_rank0_pss (JOB_N_STEPS) + job_rank1_pss (JOB_N_STEPS);
  gint64 limit = peak / 4 * 5;
  gint64 death_ns = JOB_STEP_NS / 2 + 7 * JOB_STEP_NS + JOB_STEP_NS / 2;
  TideRenderScene scene;
  cairo_surface_t *image;
  TideRenderLayout l;
  int x, y_limit, y_mid;

  g_clear_object (&f->trace);
  sql = g_strdup_printf ("UPDATE processes SET end_ns = %" G_GINT64_FORMAT " WHERE id = 2;"
                         "INSERT OR REPLACE INTO process_ends VALUES (2, 2, -1, 9, 0, 2, %" G_GINT64_FORMAT ");"
                         "INSERT INTO meta VALUES ('memory_limit', %" G_GINT64_FORMAT ");",
                         death_ns, limit, limit);
  tide_test_exec_sql (f->path, sql);
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);

  job = tide_job_lane_query_job (f->trace, whole_trace (f, WIDTH), &error);
  g_assert_no_error (error);
  g_assert_cmpint (job->limit, ==, limit);
  g_assert_cmpint (job->scale, ==, limit);
  g_assert_cmpuint (job->deaths->len, ==, 1);
  data = tide_timeline_data_query (f->trace, 2, whole_trace (f, WIDTH), &error);
  scene = (TideRenderScene) { .job = job, .data = data, .begin_ns = 0, .end_ns = trace_span (f),
                              .show_legend = TRUE };
  g_assert_true (tide_render_timeline_png (f->trace, png, WIDTH, HEIGHT, &error));
  g_assert_no_error (error);
  image = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  tide_render_layout (&scene, WIDTH, HEIGHT, &l);

  /* The limit: six columns on, six off, on the row of its value. */
  y_limit = (int) tide_render_job_value_to_y (&l, limit, job->scale);
  for (int c = 0; c < WIDTH / 2; c++)
    if (c % (2 * TIDE_RENDER_LIMIT_DASH) < TIDE_RENDER_LIMIT_DASH)
      g_assert_cmphex (tide_test_pixel (image, c, y_limit), ==, p->limit);
    else
      g_assert_cmphex (tide_test_pixel (image, c, y_limit), !=, p->limit);
  /* The death: two columns at its time, down the job lane and rank 1's lanes. */
  x = (int) floor ((double) death_ns * WIDTH / trace_span (f));
  y_mid = (int) (l.job_y + l.job_h / 2);
  g_assert_cmphex (tide_test_pixel (image, x - 1, y_mid), ==, p->death);
  g_assert_cmphex (tide_test_pixel (image, x, y_mid), ==, p->death);
  g_assert_cmphex (tide_test_pixel (image, x + 2, y_mid), !=, p->death);
  g_assert_cmphex (tide_test_pixel (image, x, (int) (l.lanes_y + l.lane_h / 2)), ==, p->death);
  cairo_surface_destroy (image);
  g_unlink (png);
}

/* tide_render_job_process_at() maps a click to the band drawn there. */
static void
test_click (Fixture       *f,
            gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideJobLane) job = tide_job_lane_query_job (f->trace, whole_trace (f, WIDTH), &error);
  TideRenderScene scene = { .job = job, .begin_ns = 0, .end_ns = trace_span (f) };
  guint c = column_of_rank1_step (f, 6);
  TideRenderLayout l;
  double y_total, y_rank0;

  tide_render_layout (&scene, WIDTH, HEIGHT, &l);
  y_total = tide_render_job_value_to_y (&l, job_rank0_pss (6) + job_rank1_pss (6), job->peak);
  y_rank0 = tide_render_job_value_to_y (&l, job_rank0_pss (6), job->peak);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, y_total), ==, 2);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, y_rank0 - 1), ==, 2);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, y_rank0), ==, 1);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, y_total - 1), ==, 0);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, l.strip_y), ==, 0);
}

/* The leftmost column of the job lane's title, right-aligned on its first
 * row, in the right half of @image (the band labels are in the left). */
static int
title_left (cairo_surface_t        *image,
            const TideRenderLayout *l,
            int                     width)
{
  const TidePalette *p = &tide_palette_light;
  int left = width;

  for (int y = (int) l->job_y + 2; y < (int) l->job_y + 14; y++)
    for (int x = width / 2; x < left; x++)
      if (tide_test_pixel (image, x, y) != p->background)
        left = x;
  return left;
}

static int
render_title_left (Fixture *f,
                   int      width)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *png = g_build_filename (f->dir, "title.png", NULL);
  TideRenderScene scene = { .begin_ns = 0, .end_ns = trace_span (f) };
  g_autoptr(TideJobLane) job = tide_job_lane_query_job (f->trace, whole_trace (f, width), &error);
  cairo_surface_t *image;
  TideRenderLayout l;
  int left;

  g_assert_true (tide_render_timeline_png (f->trace, png, width, HEIGHT, &error));
  g_assert_no_error (error);
  image = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  scene.job = job;
  tide_render_layout (&scene, width, HEIGHT, &l);
  left = title_left (image, &l, width);
  cairo_surface_destroy (image);
  g_unlink (png);
  return left;
}

/* Where the job's RSS rose after its highest PSS reading, the job lane's
 * title says so beside the peak, as the summary and `report --processes`
 * do: the ranks' PSS made equal to their RSS (they share nothing), and
 * their PSS no longer read after step 7, whose reading is then the peak,
 * 100 + 200 MiB; their RSS rose to 100 + 260 MiB by step 10. */
static void
test_png_title_rise (Fixture       *f,
                     gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *sql = NULL;
  int plain, rise;
  TideJobPeak peak;

  plain = render_title_left (f, 2 * WIDTH);
  g_clear_object (&f->trace);
  sql = g_strdup_printf ("UPDATE counters SET value = value + 30 * 1048576 WHERE counter = %d;"
                         "DELETE FROM counters WHERE counter = %d AND ts_ns >"
                         " (SELECT min (ts_ns) FROM counters) + 7 * %" G_GINT64_FORMAT,
                         TIDE_COUNTER_PSS, TIDE_COUNTER_PSS, JOB_STEP_NS);
  tide_test_exec_sql (f->path, sql);
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
  g_assert_true (tide_report_job_peak (f->trace, &peak, &error));
  g_assert_no_error (error);
  g_test_message ("peak %" G_GINT64_FORMAT ", rise %" G_GINT64_FORMAT, peak.bytes,
                  peak.rise_bytes);
  g_assert_cmpint (peak.bytes, ==, job_rank0_rss (7) + job_rank1_rss (7));
  g_assert_cmpint (peak.rise_bytes, ==, job_rank1_rss (JOB_N_STEPS) - job_rank1_rss (7));
  rise = render_title_left (f, 2 * WIDTH);
  g_test_message ("title from column %d, %d with the rise", plain, rise);
  /* "(+60.00 MiB RSS later)" more, at least 6 pixels a character. */
  g_assert_cmpint (rise, <, plain - 22 * 6);
}

/* A merged trace whose hosts' order is not its processes' (rank 0 ran on
 * "node-b", rank 1 on "node-a"): the export stacks them host by host, as
 * the app's process list and its job lane do, rank 1 at the bottom.  The
 * export once stacked them by id. */
static void
test_host_order (Fixture       *f,
                 gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideJobLane) job = NULL;
  g_autoptr(GPtrArray) processes = NULL;
  guint c = column_of_rank1_step (f, 6);

  g_clear_object (&f->trace);
  tide_test_exec_sql (f->path,
    "CREATE TABLE merge_sources (id INTEGER PRIMARY KEY, path TEXT NOT NULL, host TEXT,"
    " boot_id TEXT, launcher_rank INTEGER, realtime_offset_ns INTEGER,"
    " shift_ns INTEGER NOT NULL, skew_ns INTEGER, complete INTEGER NOT NULL) STRICT;"
    "CREATE TABLE merge_processes (process_id INTEGER PRIMARY KEY,"
    " source_id INTEGER NOT NULL REFERENCES merge_sources (id)) STRICT;"
    "INSERT INTO merge_sources (id, path, host, shift_ns, complete)"
    " VALUES (1, 'b.tide', 'node-b', 0, 1), (2, 'a.tide', 'node-a', 0, 1);"
    "INSERT INTO merge_processes VALUES (1, 1), (2, 2);");
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
  processes = tide_trace_list_processes (f->trace, &error);
  g_assert_no_error (error);
  tide_processes_sort_by_host (processes);
  g_assert_cmpint (((TideProcess *) g_ptr_array_index (processes, 0))->id, ==, 2);

  job = tide_job_lane_query_job (f->trace, whole_trace (f, WIDTH), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (job->bands->len, ==, 2);
  g_assert_cmpint (((TideJobBand *) g_ptr_array_index (job->bands, 0))->process_id, ==, 2);
  g_assert_cmpint (((TideJobBand *) g_ptr_array_index (job->bands, 1))->process_id, ==, 1);
  g_assert_cmpint (tide_job_lane_process_at (job, c, 0), ==, 2);
  g_assert_cmpint (tide_job_lane_process_at (job, c, job_rank1_pss (6)), ==, 1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/job-lane/bands", test_bands);
  ADD ("/job-lane/default-process", test_default_process);
  ADD ("/job-lane/png", test_png);
  ADD ("/job-lane/png-rss-classes", test_png_rss_classes);
  ADD ("/job-lane/click", test_click);
  ADD ("/job-lane/png-death", test_png_death);
  ADD ("/job-lane/png-title-rise", test_png_title_rise);
  ADD ("/job-lane/host-order", test_host_order);
#undef ADD
  return g_test_run ();
}
