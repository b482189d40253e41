/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-addrset.h: the set of sampled addresses.
 *
 * In sampled mode most frees are of blocks that were never recorded, and
 * they must cost a lookup, not a record.  Two layers:
 *
 *  - a filter: a bitmap of 2^18 bits (32 KiB) indexed by a hash of the
 *    address, and beside it one 8-bit count per bit.  A clear bit proves
 *    the address is not in the set, so the common free pays one relaxed
 *    load of a bitmap small enough to stay in the L1 and L2 caches; the
 *    counts, touched only when the set changes, say when a bit may be
 *    cleared.  Bit i and count i belong to shard i % 64, whose lock orders
 *    their updates.  History: a 2 MiB counting filter missed the cache on
 *    nearly every free (8% of an allocation-heavy program); 256 KiB of
 *    byte counters still missed on 9 frees in 10 while the program
 *    streamed through its blocks (free() was 5% of the whole run).  The
 *    price is false positives once many sampled blocks are live (about 40%
 *    at 100,000); those cost a lookup in the exact set.  A count that
 *    reaches 0xff sticks there (its bit is never cleared) and only costs
 *    extra lookups.
 *  - an exact set: 64 shards, each an open-addressing table (linear probing,
 *    backward-shift deletion, no tombstones) under its own mutex, grown by
 *    doubling into memory from the kernel.
 *
 * Pure code (no hooks, no globals), unit-tested directly.
 */
#pragma once

#include "tide-hash.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define TIDE_ADDRSET_FILTER_BITS 18
#define TIDE_ADDRSET_SHARD_BITS  6
#define TIDE_ADDRSET_SHARDS      (1u << TIDE_ADDRSET_SHARD_BITS)

typedef struct
{
  uint64_t addr;   /* 0: empty slot */
  uint64_t size;
  uint32_t kind;   /* TideAllocKind */
  uint32_t reserved;
} TideAddrEntry;

typedef struct
{
  pthread_mutex_t lock;
  TideAddrEntry  *slots;
  uint32_t        mask;   /* capacity - 1 */
  uint32_t        count;
} __attribute__ ((aligned (64))) TideAddrShard;

typedef struct
{
  _Atomic uint64_t *filter;   /* 2^FILTER_BITS bits */
  uint8_t          *counts;   /* one per bit, under the lock of its shard */
  TideAddrShard     shards[TIDE_ADDRSET_SHARDS];
} TideAddrSet;

bool     tide_addrset_init        (TideAddrSet         *set);
void     tide_addrset_clear       (TideAddrSet         *set);
void     tide_addrset_lock_all    (TideAddrSet         *set);
void     tide_addrset_unlock_all  (TideAddrSet         *set);
void     tide_addrset_reset_locks (TideAddrSet         *set);
bool     tide_addrset_insert      (TideAddrSet         *set,
                                   uint64_t             addr,
                                   uint64_t             size,
                                   uint32_t             kind);
bool     tide_addrset_remove      (TideAddrSet         *set,
                                   uint64_t             addr,
                                   uint32_t             kind,
                                   TideAddrEntry       *out);
bool     tide_addrset_lookup      (TideAddrSet         *set,
                                   uint64_t             addr,
                                   TideAddrEntry       *out);
uint64_t tide_addrset_count       (TideAddrSet         *set);

static inline uint64_t
tide_addrset_hash (uint64_t addr)
{
  return tide_hash_u64 (addr);
}

/* The filter bit of a hash: its top bits. */
static inline uint32_t
tide_addrset_filter_index (uint64_t h)
{
  return (uint32_t) (h >> (64 - TIDE_ADDRSET_FILTER_BITS));
}

/* False proves addr is not in the set; true means "look it up". */
static inline bool
tide_addrset_maybe (const TideAddrSet *set,
                    uint64_t           addr)
{
  uint32_t i = tide_addrset_filter_index (tide_addrset_hash (addr));

  return (atomic_load_explicit (&set->filter[i / 64], memory_order_relaxed)
          >> (i % 64)) & 1;
}
