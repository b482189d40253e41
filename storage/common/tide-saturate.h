/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Sums and differences of byte counts read from a trace.  A damaged or
 * hostile file may hold any 64-bit value there, and a signed overflow is
 * undefined behaviour; these saturate instead, so a damaged value shows
 * as a huge one rather than as whatever the overflow made of it.
 */
#pragma once

#include <math.h>
#include <stdint.h>

static inline int64_t
tide_sat_add (int64_t a,
              int64_t b)
{
  int64_t sum;

  if (__builtin_add_overflow (a, b, &sum))
    return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

static inline int64_t
tide_sat_sub (int64_t a,
              int64_t b)
{
  int64_t difference;

  if (__builtin_sub_overflow (a, b, &difference))
    return b < 0 ? INT64_MAX : INT64_MIN;
  return difference;
}

/* A sum of weighted sizes (a double, as SQLite's sum () of REALs gives it)
 * as bytes, rounded half away from zero; out of range it saturates, where
 * a plain cast would be undefined behaviour, and NaN is 0. */
static inline int64_t
tide_sat_from_double (double value)
{
  if (isnan (value))
    return 0;
  if (value >= 0x1p63)
    return INT64_MAX;
  if (value <= -0x1p63)
    return INT64_MIN;
  return (int64_t) llround (value);
}
