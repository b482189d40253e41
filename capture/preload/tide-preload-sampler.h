/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-sampler.h: Poisson sampling of allocated bytes.
 *
 * Sample points fall on the stream of allocated bytes as a Poisson process
 * with mean spacing `mean`.  Each thread keeps a countdown of bytes to the
 * next point; an allocation that covers a point is sampled.  By the
 * memorylessness of the exponential, the countdown after a sampled block is a
 * fresh draw.  A block of s bytes is sampled with p = 1 - exp(-s/mean), so the
 * record stands for 1/p blocks like it (tide-wire.h).  Blocks of at least
 * `mean` bytes are always recorded, with weight 1, outside the countdown.
 * Pure code: no hooks, no globals; unit-tested directly.
 */
#pragma once

#include <stdint.h>

typedef struct
{
  uint64_t s;
} TideRng;

uint64_t tide_splitmix64        (uint64_t *state);
void     tide_rng_seed          (TideRng  *rng,
                                 uint64_t  seed);
uint64_t tide_rng_next          (TideRng  *rng);
double   tide_rng_uniform       (TideRng  *rng);
uint64_t tide_sampler_seed      (uint64_t  base,
                                 uint32_t  stream);
int64_t  tide_sampler_draw      (TideRng  *rng,
                                 uint64_t  mean);
double   tide_sampler_weight    (uint64_t  size,
                                 uint64_t  mean);
