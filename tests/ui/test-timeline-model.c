/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The timeline's arithmetic, without a display.
 */
#include "config.h"

#include "tide-timeline-model.h"

#define SEC G_GINT64_CONSTANT (1000000000)

static void
test_mapping (void)
{
  TideTimelineModel m;

  tide_timeline_model_init (&m, 0, 10 * SEC, 1000);
  g_assert_cmpfloat (tide_timeline_model_time_to_x (&m, 0), ==, 0);
  g_assert_cmpfloat (tide_timeline_model_time_to_x (&m, 5 * SEC), ==, 500);
  g_assert_cmpfloat (tide_timeline_model_time_to_x (&m, 10 * SEC), ==, 1000);
  g_assert_cmpint (tide_timeline_model_x_to_time (&m, 250), ==, 2500000000);
  g_assert_cmpint (tide_timeline_model_x_to_time (&m, 0.5), ==, 5000000);
  /* x -> t -> x round trip at every pixel. */
  for (int x = 0; x <= 1000; x++)
    g_assert_cmpfloat_with_epsilon (tide_timeline_model_time_to_x (
                                      &m, tide_timeline_model_x_to_time (&m, x)), x, 1e-6);
}

static void
test_zoom_keeps_pointer_time (void)
{
  TideTimelineModel m;
  gint64 before;

  tide_timeline_model_init (&m, 0, 10 * SEC, 1000);
  before = tide_timeline_model_x_to_time (&m, 300);
  g_assert_true (tide_timeline_model_zoom_around (&m, 300, 4.0));
  g_assert_cmpint (m.end - m.begin, ==, 10 * SEC / 4);
  g_assert_cmpint (tide_timeline_model_x_to_time (&m, 300), ==, before);
  g_assert_true (tide_timeline_model_zoom_around (&m, 300, 0.5));
  g_assert_cmpint (m.end - m.begin, ==, 10 * SEC / 2);
  g_assert_cmpint (tide_timeline_model_x_to_time (&m, 300), ==, before);

  /* Out past the document: clamps to it, no wider. */
  g_assert_true (tide_timeline_model_zoom_around (&m, 300, 0.01));
  g_assert_cmpint (m.begin, ==, 0);
  g_assert_cmpint (m.end, ==, 10 * SEC);
  g_assert_false (tide_timeline_model_zoom_around (&m, 300, 0.5));

  /* In past the floor: one microsecond across. */
  tide_timeline_model_zoom_around (&m, 500, 1e12);
  g_assert_cmpint (m.end - m.begin, ==, TIDE_TIMELINE_MIN_SPAN_NS);
}

static void
test_pan (void)
{
  TideTimelineModel m;

  tide_timeline_model_init (&m, 0, 10 * SEC, 1000);
  tide_timeline_model_set_range (&m, 2 * SEC, 4 * SEC);
  g_assert_true (tide_timeline_model_pan_by (&m, 100));
  g_assert_cmpint (m.begin, ==, 2 * SEC + 200000000);
  g_assert_cmpint (m.end, ==, 4 * SEC + 200000000);
  /* Pushed past the end: slides back, keeps its span. */
  tide_timeline_model_pan_by (&m, 100000);
  g_assert_cmpint (m.end, ==, 10 * SEC);
  g_assert_cmpint (m.begin, ==, 8 * SEC);
  g_assert_false (tide_timeline_model_pan_by (&m, 10));
  tide_timeline_model_pan_by (&m, -100000);
  g_assert_cmpint (m.begin, ==, 0);
  g_assert_true (tide_timeline_model_fit (&m));
  g_assert_cmpint (m.end, ==, 10 * SEC);
}

static void
test_ticks (void)
{
  /* 10 s over 1000 px, ticks at least 90 px apart: 1 s = 100 px. */
  g_assert_cmpint (tide_timeline_tick_interval (10 * SEC, 1000, 90), ==, SEC);
  /* 10 s over 1000 px, 110 px apart: 2 s. */
  g_assert_cmpint (tide_timeline_tick_interval (10 * SEC, 1000, 110), ==, 2 * SEC);
  /* 1 ms over 800 px, 90 px: 0.2 ms = 160 px (0.1 ms would be 80). */
  g_assert_cmpint (tide_timeline_tick_interval (1000000, 800, 90), ==, 200000);
  /* An hour over 1000 px: 5 min = 83 px is too close, 10 min. */
  g_assert_cmpint (tide_timeline_tick_interval (3600 * SEC, 1000, 90), ==, 600 * SEC);
  /* A minute over 1000 px: 5 s = 83 px, 10 s. */
  g_assert_cmpint (tide_timeline_tick_interval (60 * SEC, 1000, 90), ==, 10 * SEC);
}

static void
test_format (void)
{
  struct { gint64 t, interval; const char *text; } cases[] = {
    { 0, SEC, "0" },
    { 2 * SEC, SEC, "2 s" },
    { 1500000000, 500000000, "1.5 s" },
    { 250000000, 50000000, "250 ms" },
    { 1200000, 200000, "1.2 ms" },
    { 40000, 20000, "40 µs" },
    { 90 * SEC, 30 * SEC, "90 s" },
    { 600 * SEC, 300 * SEC, "10:00" },
    { 3660 * SEC, 600 * SEC, "1:01:00" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = tide_timeline_format_time (cases[i].t, cases[i].interval);
      g_assert_cmpstr (text, ==, cases[i].text);
    }
}

static void
test_steps (void)
{
  TideStepSpan steps[] = {
    { .process_id = 1, .number = 1, .start_ns = 0, .end_ns = 100 },
    { .process_id = 2, .number = 1, .start_ns = 10, .end_ns = 50 },
    { .process_id = 1, .number = 2, .start_ns = 100, .end_ns = 200 },
    { .process_id = 1, .number = 3, .start_ns = 300, .end_ns = 400 },
  };

  g_assert_cmpint (tide_timeline_step_at (steps, 4, 0), ==, 0);
  g_assert_cmpint (tide_timeline_step_at (steps, 4, 20), ==, 1);   /* latest start wins */
  g_assert_cmpint (tide_timeline_step_at (steps, 4, 60), ==, 0);
  g_assert_cmpint (tide_timeline_step_at (steps, 4, 100), ==, 2);  /* end is exclusive */
  g_assert_cmpint (tide_timeline_step_at (steps, 4, 250), ==, -1); /* a gap */
  g_assert_cmpint (tide_timeline_step_at (steps, 4, 399), ==, 3);
  g_assert_cmpint (tide_timeline_step_at (steps, 4, 400), ==, -1);
  g_assert_cmpint (tide_timeline_step_at (steps, 4, -1), ==, -1);
  g_assert_cmpint (tide_timeline_step_at (steps, 0, 5), ==, -1);

  g_assert_cmpint (tide_timeline_step_neighbor (steps, 4, 0, 1), ==, 1);
  g_assert_cmpint (tide_timeline_step_neighbor (steps, 4, 0, -1), ==, 3);
  g_assert_cmpint (tide_timeline_step_neighbor (steps, 4, 1, 1), ==, 2);
  g_assert_cmpint (tide_timeline_step_neighbor (steps, 4, 2, -1), ==, 1);
  g_assert_cmpint (tide_timeline_step_neighbor (steps, 4, 3, 1), ==, 0);
  g_assert_cmpint (tide_timeline_step_neighbor (steps, 4, 1, -1), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/timeline-model/mapping", test_mapping);
  g_test_add_func ("/timeline-model/zoom-keeps-pointer-time", test_zoom_keeps_pointer_time);
  g_test_add_func ("/timeline-model/pan", test_pan);
  g_test_add_func ("/timeline-model/ticks", test_ticks);
  g_test_add_func ("/timeline-model/format", test_format);
  g_test_add_func ("/timeline-model/steps", test_steps);
  return g_test_run ();
}
