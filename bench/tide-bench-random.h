/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-bench-random.h: the allocation benches' random numbers, xorshift32
 * on a state of each worker's own, so that a run is the same every time
 * and no worker waits on another's generator.
 */
#pragma once

#include <stdint.h>

static inline uint32_t
tide_bench_next_random (uint32_t *state)
{
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}
