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
 * "t=value " pairs; @cut: the open bucket too. */
static char *
write_points (TideCounterEnvelope *envelope,
              gint64               now,
              gint64               value,
              gboolean             cut)
{
  GString *points = g_string_new (NULL);

  tide_counter_envelope_write (envelope, ORIGIN + now, value, cut, add_point, points);
  return g_string_free (points, FALSE);
}

static void
note (TideCounterEnvelope *envelope,
      gint64               t,
      gint64               value)
{
  tide_counter_envelope_note (envelope, ORIGIN + t, value);
}

/* A bucket's highest, lowest and last value, in the order reached, once
 * it is closed; a bucket per width; a rise and fall between two writes is
 * kept. */
static void
test_buckets (void)
{
  TideCounterEnvelope e;
  g_autofree char *first = NULL, *second = NULL, *third = NULL, *fourth = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH, 0);
  note (&e, 10, 50);
  note (&e, 20, 900);   /* the bucket's high */
  note (&e, 30, 40);    /* its low */
  note (&e, 40, 60);    /* where it ends */
  note (&e, 150, 70);   /* the next bucket, still open at 190 */
  first = write_points (&e, 190, 70, FALSE);
  g_assert_cmpstr (first, ==, "20=900 30=40 40=60 ");
  second = write_points (&e, 290, 70, FALSE);
  g_assert_cmpstr (second, ==, "150=70 ");
  /* Nothing changed: nothing written. */
  third = write_points (&e, 390, 70, FALSE);
  g_assert_cmpstr (third, ==, "");
  /* A low reached before the high. */
  note (&e, 410, 5);
  note (&e, 420, 300);
  note (&e, 430, 80);
  fourth = write_points (&e, 505, 80, FALSE);
  g_assert_cmpstr (fourth, ==, "410=5 420=300 430=80 ");
  tide_counter_envelope_clear (&e);
}

/* The open bucket waits for its end, however many writes meet it, unless
 * a write cuts it (a step end): then it is written up to there, and what
 * follows in the same bucket is a bucket of its own. */
static void
test_open_bucket (void)
{
  TideCounterEnvelope e;
  g_autofree char *first = NULL, *second = NULL, *third = NULL, *fourth = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH, 0);
  note (&e, 110, 10);
  note (&e, 120, 30);
  first = write_points (&e, 130, 30, FALSE);
  g_assert_cmpstr (first, ==, "");
  note (&e, 140, 20);
  second = write_points (&e, 150, 20, TRUE);
  g_assert_cmpstr (second, ==, "110=10 120=30 140=20 ");
  note (&e, 160, 25);
  third = write_points (&e, 170, 25, FALSE);
  g_assert_cmpstr (third, ==, "");
  fourth = write_points (&e, 200, 25, FALSE);
  g_assert_cmpstr (fourth, ==, "160=25 ");
  tide_counter_envelope_clear (&e);
}

/* A bucket is written once its changes have had time to come: one that
 * comes within the settle time after its end joins it. */
static void
test_settle (void)
{
  TideCounterEnvelope e;
  g_autofree char *first = NULL, *second = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH, 50);
  note (&e, 10, 40);
  note (&e, 120, 45);
  first = write_points (&e, 140, 45, FALSE);
  g_assert_cmpstr (first, ==, "");
  note (&e, 30, 70);    /* late, but within the settle time */
  second = write_points (&e, 150, 45, FALSE);
  g_assert_cmpstr (second, ==, "10=40 30=70 ");
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
  g_autofree char *first = NULL, *second = NULL, *third = NULL, *fourth = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH, 0);
  note (&e, 250, 10);
  note (&e, 120, 30);   /* another thread's, an older bucket still pending */
  note (&e, 260, 20);
  first = write_points (&e, 270, 20, FALSE);
  g_assert_cmpstr (first, ==, "120=30 ");
  second = write_points (&e, 310, 25, FALSE);
  g_assert_cmpstr (second, ==, "250=10 260=20 261=25 ");
  note (&e, 200, 90);   /* for a bucket written already */
  note (&e, 400, 95);
  third = write_points (&e, 450, 95, FALSE);
  g_assert_cmpstr (third, ==, "262=90 ");
  fourth = write_points (&e, 500, 95, FALSE);
  g_assert_cmpstr (fourth, ==, "400=95 ");
  tide_counter_envelope_clear (&e);
}

/* Buckets are floored from the origin, before it too. */
static void
test_before_origin (void)
{
  TideCounterEnvelope e;
  g_autofree char *points = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH, 0);
  note (&e, -150, 10);
  note (&e, -120, 7);
  note (&e, -60, 12);   /* bucket -1, not the one of -150 (-2) */
  points = write_points (&e, 0, 12, FALSE);
  g_assert_cmpstr (points, ==, "-150=10 -120=7 -60=12 ");
  tide_counter_envelope_clear (&e);
}

/* Times that run backwards or far ahead (a program's clock) keep the
 * pending buckets few: past 64 a change joins a bucket next to its own,
 * and a cut writes them all, each extreme still at its time. */
static void
test_pending_bound (void)
{
  TideCounterEnvelope e;
  g_autofree char *points = NULL;
  guint n_points = 0;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH, 0);
  for (gint i = 0; i < 1000; i++)
    note (&e, (1000 - i) * WIDTH, i);
  g_assert_cmpuint (e.pending->len, ==, 64);
  note (&e, G_MAXINT64 / 2, 5000);   /* clamped, and past every bucket */
  g_assert_cmpuint (e.pending->len, ==, 64);
  points = write_points (&e, 2000 * WIDTH, 5000, TRUE);
  for (const char *p = points; *p != '\0'; p++)
    n_points += *p == '=';
  g_assert_cmpuint (n_points, <=, 3 * 64 + 1);
  g_assert_true (g_str_has_suffix (points, "=5000 "));
  tide_counter_envelope_clear (&e);
}

/* A counter never changed gets its value at the first write's time, and
 * nothing more until it changes; one that never had a point has none. */
static void
test_first_point (void)
{
  TideCounterEnvelope e;
  g_autofree char *first = NULL, *second = NULL;

  tide_counter_envelope_init (&e, ORIGIN, WIDTH, 0);
  g_assert_false (tide_counter_envelope_has_points (&e));
  first = write_points (&e, 50, 0, FALSE);
  g_assert_cmpstr (first, ==, "50=0 ");
  g_assert_true (tide_counter_envelope_has_points (&e));
  second = write_points (&e, 90, 0, FALSE);
  g_assert_cmpstr (second, ==, "");
  tide_counter_envelope_clear (&e);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/counter-envelope/buckets", test_buckets);
  g_test_add_func ("/counter-envelope/open-bucket", test_open_bucket);
  g_test_add_func ("/counter-envelope/settle", test_settle);
  g_test_add_func ("/counter-envelope/late-changes", test_late_changes);
  g_test_add_func ("/counter-envelope/before-origin", test_before_origin);
  g_test_add_func ("/counter-envelope/first-point", test_first_point);
  g_test_add_func ("/counter-envelope/pending-bound", test_pending_bound);
  return g_test_run ();
}
