/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The points that draw the live heap (tide-counter-envelope.c): each
 * bucket's extremes and last value at their times, in order, none twice.
 */
#include "config.h"

#include <glib.h>

#include "tide-counter-envelope.h"

#define ORIGIN 1000
#define WIDTH  100

static void
add_point (gint64   ts_ns,
           gint64   value,
           gpointer user_data)
{
  g_string_append_printf (user_data, "%" G_GINT64_FORMAT "=%" G_GINT64_FORMAT " ",
                          ts_ns - ORIGIN, value);
}

/* What a write at @now (from the origin) with @value hands on, as
 * "t=value " pairs. */
static char *
write_points (TideCounterEnvelope *envelope,
              gint64               now,
              gint64               value)
{
  GString *points = g_string_new (NULL);

  tide_counter_envelope_write (envelope, ORIGIN + now, value, add_point, points);
  return g_string_free (points, FALSE);
}

static void
note (TideCounterEnvelope *envelope,
      gint64               t,
      gint64               value)
{
  tide_counter_envelope_note (envelope, ORIGIN + t, value);
}

/* A bucket's highest, lowest and last value, in the order reached; a
 * bucket per width; a rise and fall between two writes is kept. */
static void
test_buckets (void)
{
  TideCounterEnvelope e;
  g_autofree char *first = NULL, *second = NULL, *third = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH);
  note (&e, 10, 50);
  note (&e, 20, 900);   /* the bucket's high */
  note (&e, 30, 40);    /* its low */
  note (&e, 40, 60);    /* where it ends */
  note (&e, 150, 70);   /* the next bucket: one change */
  first = write_points (&e, 190, 70);
  g_assert_cmpstr (first, ==, "20=900 30=40 40=60 150=70 ");
  /* Nothing changed: nothing written. */
  second = write_points (&e, 290, 70);
  g_assert_cmpstr (second, ==, "");
  /* A low reached before the high; the value now differs from both. */
  note (&e, 310, 5);
  note (&e, 320, 300);
  note (&e, 330, 80);
  third = write_points (&e, 395, 80);
  g_assert_cmpstr (third, ==, "310=5 320=300 330=80 ");
  tide_counter_envelope_clear (&e);
}

/* A change noted after its bucket was written follows the last point;
 * one noted late for a pending bucket joins it; none is past the write's
 * time; a value now that is not the points' last (changes noted out of
 * order) follows them, not at the write's time. */
static void
test_late_changes (void)
{
  TideCounterEnvelope e;
  g_autofree char *first = NULL, *second = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH);
  note (&e, 250, 10);
  note (&e, 120, 30);   /* another thread's, an older bucket still pending */
  note (&e, 260, 20);
  first = write_points (&e, 270, 25);
  g_assert_cmpstr (first, ==, "120=30 250=10 260=20 261=25 ");
  note (&e, 200, 90);   /* for a bucket written already */
  note (&e, 400, 95);   /* after the write's time */
  second = write_points (&e, 300, 95);
  g_assert_cmpstr (second, ==, "262=90 300=95 ");
  tide_counter_envelope_clear (&e);
}

/* A counter never changed gets its value at the first write's time, and
 * nothing more until it changes; one that never had a point has none. */
static void
test_first_point (void)
{
  TideCounterEnvelope e;
  g_autofree char *first = NULL, *second = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH);
  g_assert_false (tide_counter_envelope_has_points (&e));
  first = write_points (&e, 50, 0);
  g_assert_cmpstr (first, ==, "50=0 ");
  g_assert_true (tide_counter_envelope_has_points (&e));
  second = write_points (&e, 90, 0);
  g_assert_cmpstr (second, ==, "");
  tide_counter_envelope_clear (&e);
}

/* Buckets are floored from the origin, before it too. */
static void
test_before_origin (void)
{
  TideCounterEnvelope e;
  g_autofree char *points = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH);
  note (&e, -150, 10);
  note (&e, -120, 7);
  note (&e, -60, 12);   /* bucket -1, not the one of -150 (-2) */
  points = write_points (&e, 0, 12);
  g_assert_cmpstr (points, ==, "-150=10 -120=7 -60=12 ");
  tide_counter_envelope_clear (&e);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/counter-envelope/buckets", test_buckets);
  g_test_add_func ("/counter-envelope/late-changes", test_late_changes);
  g_test_add_func ("/counter-envelope/before-origin", test_before_origin);
  g_test_add_func ("/counter-envelope/first-point", test_first_point);
  return g_test_run ();
}
