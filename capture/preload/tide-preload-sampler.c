/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-preload-sampler.h"

#include "tide-hash.h"

#include <math.h>

uint64_t
tide_splitmix64 (uint64_t *state)
{
  return tide_hash_u64 (*state += 0x9E3779B97F4A7C15ull);
}

void
tide_rng_seed (TideRng  *rng,
               uint64_t  seed)
{
  uint64_t st = seed;

  rng->s = tide_splitmix64 (&st);
  if (rng->s == 0)
    rng->s = 0x2545F4914F6CDD1Dull;  /* xorshift must not start at 0 */
}

/* xorshift64*: fast, good enough for choosing sample points. */
uint64_t
tide_rng_next (TideRng *rng)
{
  uint64_t x = rng->s;

  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng->s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in (0, 1], 53 bits, so log() never sees 0. */
double
tide_rng_uniform (TideRng *rng)
{
  return ((double) (tide_rng_next (rng) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

/* One seed per thread from a process seed and a stream number (the tid,
 * or with a fixed $TIDEMARK_SEED the order in which threads first sample,
 * which repeats from run to run), so that each thread has its own stream. */
uint64_t
tide_sampler_seed (uint64_t base,
                   uint32_t stream)
{
  uint64_t st = base ^ ((uint64_t) stream * 0xD6E8FEB86659FD93ull);

  return tide_splitmix64 (&st);
}

int64_t
tide_sampler_draw (TideRng  *rng,
                   uint64_t  mean)
{
  double d = -log (tide_rng_uniform (rng)) * (double) mean;

  if (d < 1.0)
    return 1;
  if (d > 4.0e18)
    return INT64_C (4000000000000000000);
  return (int64_t) d;
}

double
tide_sampler_weight (uint64_t size,
                     uint64_t mean)
{
  double p;

  if (mean == 0 || size >= mean)
    return 1.0;
  if (size == 0)
    size = 1;  /* malloc(0) still returns a block: weigh it as one byte */
  p = -expm1 (-(double) size / (double) mean);
  return 1.0 / p;
}
