/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A binary search over sorted 64-bit keys: a time or a bucket, alone in an
 * array or a field of each element of an array of structs.  @array holds
 * @n elements of @stride bytes, each with its key @offset bytes into it
 * (@array may be NULL when @n is 0, as an empty GArray's data is).  The
 * samples, the step pairs and the LOD chunks are searched by time or
 * bucket through here, so that the bounds of the loop are written once.
 * Header only, no dependencies, as the rest of common/.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* How many of the @n keys are at most @key: the index where @key would go
 * after its equals. */
static inline size_t
tide_sorted_count_at_most (const void *array,
                           size_t      n,
                           size_t      stride,
                           size_t      offset,
                           int64_t     key)
{
  size_t lo = 0, hi = n;

  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;

      if (*(const int64_t *) ((const char *) array + mid * stride + offset) <= key)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* How many of the @n keys are below @key: the index of the first key at
 * or after it.  The keys are integers, so below @key is at most @key - 1. */
static inline size_t
tide_sorted_count_below (const void *array,
                         size_t      n,
                         size_t      stride,
                         size_t      offset,
                         int64_t     key)
{
  return key == INT64_MIN ? 0 : tide_sorted_count_at_most (array, n, stride, offset, key - 1);
}
