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
