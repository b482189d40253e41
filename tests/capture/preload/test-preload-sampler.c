/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-preload-sampler.c: the Poisson sampler of libtidemark-preload.so.
 * That its estimates are unbiased is tested through the real hooks and
 * the real countdown, over several seeds, in test-preload-e2e.c
 * (/capture/preload/e2e/sampler-seeds).
 */
#include "config.h"

#include "tide-preload-sampler.h"

#include <glib.h>
#include <math.h>

static void
test_rng_reproducible (void)
{
  TideRng a, b, c;

  tide_rng_seed (&a, 42);
  tide_rng_seed (&b, 42);
  tide_rng_seed (&c, 43);
  for (int i = 0; i < 1000; i++)
    {
      guint64 x = tide_rng_next (&a);

      g_assert_cmpuint (x, ==, tide_rng_next (&b));
      g_assert_cmpuint (x, !=, tide_rng_next (&c));
    }
  /* Threads of one seeded process draw different streams. */
  g_assert_cmpuint (tide_sampler_seed (7, 100), !=, tide_sampler_seed (7, 101));
  g_assert_cmpuint (tide_sampler_seed (7, 100), ==, tide_sampler_seed (7, 100));
}

static void
test_uniform_range (void)
{
  TideRng rng;

  tide_rng_seed (&rng, 1);
  for (int i = 0; i < 100000; i++)
    {
      double u = tide_rng_uniform (&rng);

      g_assert_cmpfloat (u, >, 0.0);
      g_assert_cmpfloat (u, <=, 1.0);
    }
}

/* Exponential draws: mean and standard deviation both equal `mean`. */
static void
test_draw_mean (void)
{
  const guint64 mean = 65536;
  const int n = 200000;
  double sum = 0, sum2 = 0;
  TideRng rng;

  tide_rng_seed (&rng, 12345);
  for (int i = 0; i < n; i++)
    {
      double d = (double) tide_sampler_draw (&rng, mean);

      g_assert_cmpfloat (d, >=, 1.0);
      sum += d;
      sum2 += d * d;
    }
  /* Standard error of the mean is mean/sqrt(n) ~ 0.22%: allow 2%. */
  g_assert_cmpfloat (fabs (sum / n - mean) / mean, <, 0.02);
  g_assert_cmpfloat (fabs (sqrt (sum2 / n - (sum / n) * (sum / n)) - mean) / mean, <, 0.03);
}

static void
test_weight (void)
{
  const guint64 mean = 65536;

  /* Blocks of at least the interval are always recorded, weight 1. */
  g_assert_cmpfloat (tide_sampler_weight (mean, mean), ==, 1.0);
  g_assert_cmpfloat (tide_sampler_weight (10 * mean, mean), ==, 1.0);
  for (guint64 size = 1; size < mean; size = size * 3 + 1)
    {
      double expect = 1.0 / (1.0 - exp (-(double) size / (double) mean));

      g_assert_cmpfloat_with_epsilon (tide_sampler_weight (size, mean), expect, expect * 1e-9);
    }
  /* Small blocks stand for about mean/size blocks. */
  g_assert_cmpfloat (fabs (tide_sampler_weight (64, mean) - 65536.0 / 64) / 1024, <, 0.01);
  g_assert_cmpfloat (tide_sampler_weight (0, mean), ==, tide_sampler_weight (1, mean));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture/preload/sampler/rng-reproducible", test_rng_reproducible);
  g_test_add_func ("/capture/preload/sampler/uniform-range", test_uniform_range);
  g_test_add_func ("/capture/preload/sampler/draw-mean", test_draw_mean);
  g_test_add_func ("/capture/preload/sampler/weight", test_weight);
  return g_test_run ();
}
