/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Sums and differences of byte counts read from a trace.  A damaged or
 * hostile file may hold any gint64 there, and a signed overflow is
 * undefined behaviour; these saturate instead, so a damaged value shows
 * as a huge one rather than as whatever the overflow made of it.
 */
#pragma once

#include <glib.h>
#include <math.h>

static inline gint64
tide_sat_add (gint64 a,
              gint64 b)
{
  gint64 sum;

  if (__builtin_add_overflow (a, b, &sum))
    return b > 0 ? G_MAXINT64 : G_MININT64;
  return sum;
}

static inline gint64
tide_sat_sub (gint64 a,
              gint64 b)
{
  gint64 difference;

  if (__builtin_sub_overflow (a, b, &difference))
    return b < 0 ? G_MAXINT64 : G_MININT64;
  return difference;
}

/* A sum of weighted sizes (a double, as SQLite's sum () of REALs gives it)
 * as bytes, rounded half away from zero; out of range it saturates, where
 * a plain cast would be undefined behaviour, and NaN is 0. */
static inline gint64
tide_sat_from_double (double value)
{
  if (isnan (value))
    return 0;
  if (value >= 0x1p63)
    return G_MAXINT64;
  if (value <= -0x1p63)
    return G_MININT64;
  return (gint64) llround (value);
}
