/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The job lane and the process a view opens on, on a synthetic two-rank
 * trace whose values are known exactly:
 *
 *   rank 0 (pid 100, process 1): RSS 100 MiB throughout, 10 steps, no leak;
 *   rank 1 (pid 101, process 2): RSS 60 MiB + k * 20 MiB in its step k,
 *     10 steps, and 64 blocks of 16 KiB kept every step from step 3 on.
 *
 * Rank 1's steps start half a step later than rank 0's, so that two sets of
 * step bands drawn over each other would show in the strip.  Rank 0 comes
 * first, as the rank that does not leak did in the job.
 */
#include "config.h"

#include <glib/gstdio.h>

#include "tide-job-lane.h"
#include "tide-render.h"
#include "tide-schema.h"
#include "tide-storage-error.h"
#include "tide-test-png.h"
#include "tide-test-util.h"
#include "tide-trace-writer.h"

#define N_STEPS    10
#define STEP_NS    (100 * G_GINT64_CONSTANT (1000000))
#define SAMPLE_NS  (10 * G_GINT64_CONSTANT (1000000))
#define LEAK_FROM  3
#define MIB        G_GINT64_CONSTANT (1048576)
#define WIDTH      400
#define HEIGHT     300

#define rank0_rss(k) (100 * MIB)
#define rank1_rss(k) (60 * MIB + (k) * 20 * MIB)

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
} Fixture;

static void
add_rank (TideTraceWriter *w,
          gint64           id,
          gint64          *step_id,
          gint64          *alloc_id)
{
  gint64 offset = id == 2 ? STEP_NS / 2 : 0;
  TideProcessRow proc = { .id = id, .pid = 99 + id, .ppid = 1, .start_ns = 0, .all_mode = TRUE,
                          .exe = "/usr/bin/python3", .cmdline = "python3 train.py" };

  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_set_process_rank (w, id, (gint) id - 1);
  for (gint k = 1; k <= N_STEPS; k++)
    {
      gint64 start = offset + (k - 1) * STEP_NS;

      tide_trace_writer_add_step (w, (*step_id)++, id, k, "", start, start + STEP_NS);
      for (gint64 t = start; t < start + STEP_NS; t += SAMPLE_NS)
        tide_trace_writer_add_counter (w, id, TIDE_COUNTER_RSS, -1, t,
                                       id == 1 ? rank0_rss (k) : rank1_rss (k));
      for (gint i = 0; id == 2 && k >= LEAK_FROM && i < 64; i++, (*alloc_id)++)
        {
          TideAllocRow row = { .process_id = id, .alloc_ns = start + 1000 + i,
                               .address = 0x10000 * *alloc_id, .size = 16384, .weight = 1,
                               .stack_id = 1, .device = -1, .kind = 1 };
          tide_trace_writer_add_allocation (w, &row);
        }
    }
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  TideFrameRow frame = { .id = 1, .kind = TIDE_FRAME_NATIVE, .function = "keep_outputs",
                         .file = "/src/train.c", .line = 25, .module = "/usr/bin/train" };
  TideTraceWriter *w;
  gint64 step_id = 1, alloc_id = 1;

  f->dir = tide_test_make_dir ("tide-job-lane");
  f->path = g_build_filename (f->dir, "job.tide", NULL);
  w = tide_trace_writer_new (f->path, &error);
  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_frame (w, &frame);
  tide_trace_writer_add_stack_node (w, 1, 0, 1, 1);
  add_rank (w, 1, &step_id, &alloc_id);
  add_rank (w, 2, &step_id, &alloc_id);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  tide_trace_writer_free (w);
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

/* The column whose time is the middle of rank 1's step @k. */
static guint
column_of_rank1_step (Fixture *f,
                      gint     k)
{
  gint64 t = STEP_NS / 2 + (k - 1) * STEP_NS + STEP_NS / 2;

  return (guint) (t * WIDTH / trace_span (f));
}

static void
test_bands (Fixture       *f,
            gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideJobLane) job = tide_job_lane_query_job (f->trace, 0, trace_span (f), WIDTH,
                                                        &error);
  guint c = column_of_rank1_step (f, 6);
  const TideJobBand *band;

  g_assert_no_error (error);
  g_assert_cmpuint (job->bands->len, ==, 2);
  band = g_ptr_array_index (job->bands, 0);
  g_assert_cmpint (band->process_id, ==, 1);
  g_assert_cmpstr (band->label, ==, "pid 100");
  g_assert_cmpint (band->last[c], ==, rank0_rss (6));
  band = g_ptr_array_index (job->bands, 1);
  g_assert_cmpint (band->process_id, ==, 2);
  g_assert_cmpint (band->last[c], ==, rank1_rss (6));
  g_assert_cmpint (tide_job_lane_total_below (job, 2, c), ==, rank0_rss (6) + rank1_rss (6));
  g_assert_cmpint (job->peak, ==, rank0_rss (N_STEPS) + rank1_rss (N_STEPS));
  /* What a click picks: rank 0's band at the bottom, rank 1's above it. */
  g_assert_cmpint (tide_job_lane_process_at (job, c, 0), ==, 1);
  g_assert_cmpint (tide_job_lane_process_at (job, c, rank0_rss (6) - 1), ==, 1);
  g_assert_cmpint (tide_job_lane_process_at (job, c, rank0_rss (6)), ==, 2);
  g_assert_cmpint (tide_job_lane_process_at (job, c, rank0_rss (6) + rank1_rss (6)), ==, 0);
}

/* The leaking rank, although it is not the first process. */
static void
test_default_process (Fixture       *f,
                      gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (tide_job_default_process (f->trace, &error), ==, 2);
  g_assert_no_error (error);
}

static void
test_find_process (Fixture       *f,
                   gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (tide_job_find_process (f->trace, "rank:1", &error), ==, 2);
  g_assert_cmpint (tide_job_find_process (f->trace, "rank:0", &error), ==, 1);
  g_assert_cmpint (tide_job_find_process (f->trace, "101", &error), ==, 2);
  g_assert_no_error (error);
  g_assert_cmpint (tide_job_find_process (f->trace, "rank:7", &error), ==, -1);
  g_assert_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_FOUND);
  g_assert_cmpstr (error->message, ==, "the trace has no process rank:7");
  g_clear_error (&error);
  g_assert_cmpint (tide_job_find_process (f->trace, "rank:x", &error), ==, -1);
  g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
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
  g_autoptr(TideJobLane) job = tide_job_lane_query_job (f->trace, 0, trace_span (f), WIDTH,
                                                        &error);
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
  y_total = tide_render_job_value_to_y (&l, rank0_rss (6) + rank1_rss (6), job->peak);
  y_rank0 = tide_render_job_value_to_y (&l, rank0_rss (6), job->peak);
  y_bottom = tide_render_job_value_to_y (&l, 0, job->peak);
  for (int y = (int) y_total; y < (int) y_rank0; y++)
    g_assert_cmphex (tide_test_pixel (image, c, y), ==, p->process[1]);
  for (int y = (int) y_rank0; y < (int) y_bottom; y++)
    g_assert_cmphex (tide_test_pixel (image, c, y), ==, p->process[0]);
  g_assert_cmphex (tide_test_pixel (image, c, (int) y_total - 1), ==, p->background);

  /* One set of step bands, rank 1's: from its first leaking step on, every
   * strip column is the leak colour, or the one-pixel gap between two
   * steps, which is the background. */
  for (guint x = column_of_rank1_step (f, LEAK_FROM); x < column_of_rank1_step (f, N_STEPS); x++)
    {
      guint32 strip = tide_test_pixel (image, x, (int) (l.strip_y + l.strip_h - 2));
      if (strip != p->strip_leak)
        g_assert_cmphex (strip, ==, p->background);
    }
  cairo_surface_destroy (image);
  g_unlink (png);
}

/* tide_render_job_process_at() maps a click to the band drawn there. */
static void
test_click (Fixture       *f,
            gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideJobLane) job = tide_job_lane_query_job (f->trace, 0, trace_span (f), WIDTH,
                                                        &error);
  TideRenderScene scene = { .job = job, .begin_ns = 0, .end_ns = trace_span (f) };
  guint c = column_of_rank1_step (f, 6);
  TideRenderLayout l;
  double y_total, y_rank0;

  tide_render_layout (&scene, WIDTH, HEIGHT, &l);
  y_total = tide_render_job_value_to_y (&l, rank0_rss (6) + rank1_rss (6), job->peak);
  y_rank0 = tide_render_job_value_to_y (&l, rank0_rss (6), job->peak);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, y_total), ==, 2);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, y_rank0 - 1), ==, 2);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, y_rank0), ==, 1);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, y_total - 1), ==, 0);
  g_assert_cmpint (tide_render_job_process_at (&scene, WIDTH, HEIGHT, c, l.strip_y), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/job-lane/bands", test_bands);
  ADD ("/job-lane/default-process", test_default_process);
  ADD ("/job-lane/find-process", test_find_process);
  ADD ("/job-lane/png", test_png);
  ADD ("/job-lane/click", test_click);
#undef ADD
  return g_test_run ();
}
