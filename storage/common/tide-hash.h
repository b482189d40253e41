/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-hash.h: the 64-bit mixer of the address tables (the preload's
 * sampled-address set, the recorder's live table) and of the sampler's
 * random numbers: splitmix64's finalizer.  Heap addresses share their low
 * bits (alignment) and their high bits (the arena), so an index into a
 * table needs every bit mixed into it.  Header only, no dependencies: the
 * preload includes it too, and so does storage.
 *
 * Keys of several ids, which the recorder's and the queries' hash tables
 * use, hash through here too: tide_hash_ids() for up to three (a stack, a
 * scope, a device), tide_hash_mix() one field at a time for longer keys
 * (a timeline lane and its bucket).
 */
#pragma once

#include <stdint.h>

static inline uint64_t
tide_hash_u64 (uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The hash of a key whose fields so far hashed to @h, with @field next. */
static inline uint64_t
tide_hash_mix (uint64_t h,
               uint64_t field)
{
  return tide_hash_u64 ((h ^ field) + 0x9E3779B97F4A7C15ull);
}

/* The hash of a key of up to three ids (0 for a field the key lacks), for
 * the GHashTables keyed by a stack, a scope and a device, which reduce a
 * hash modulo a prime: each id times its own odd constant, the high half
 * folded into the low, no further rounds, since those tables look up a
 * group for every row a query reads.  A table indexed by the low bits of
 * a hash wants tide_hash_u64() instead.  A signed id goes in as its
 * unsigned bits: a damaged trace may hold any. */
static inline uint64_t
tide_hash_ids (uint64_t a,
               uint64_t b,
               uint64_t c)
{
  uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ c;

  return h ^ (h >> 32);
}
