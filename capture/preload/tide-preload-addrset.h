/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-addrset.h: the set of sampled addresses.
 *
 * In sampled mode most frees are of blocks that were never recorded, and
 * they must cost a lookup, not a record.  Two layers:
 *
 *  - a filter: a bitmap of 2^23 bits (1 MiB of address space, of which
 *    only the lines of shards in use are ever written).  An address's 64
 *    MiB region picks one of 64 shards, each of which owns 256 lines of
 *    512 bits; the address's 64 KiB granule picks one of its shard's
 *    lines, the address itself the bit in that line
 *    (tide_addrset_filter_index).
 *    A clear bit proves the address is not in the set, so the common free
 *    pays one relaxed load of a line that its own thread mostly keeps to
 *    itself.  The bits are exact: an insert sets its bit, and a remove
 *    clears it unless another entry has the same bit.  Every bit and the
 *    entries behind it belong to one shard, whose lock orders their
 *    updates.
 *    History: a counting filter, and then a bitmap indexed by a hash of
 *    the whole address, missed the cache on nearly every free; lines by
 *    granule keep a thread's frees on lines of its own.  A count per bit
 *    missed the cache on most inserts and removes.  Bits that removes left
 *    set until the shard recomputed its lines cost every allocator that
 *    hands a freed block straight back out (CPython's pools, glibc's
 *    tcache) a lock and a failed lookup on most frees of the blocks that
 *    next took a sampled block's address.  What is left are false
 *    positives where live sampled blocks share bits with other blocks,
 *    more as more of them live in one region; each costs a lookup in the
 *    exact set.  A region is one shard, so one region's blocks have only
 *    their shard's lines: CPython's arenas lie in one or two regions, and
 *    their objects are freed by the million, so a shard has 256 lines
 *    (test-preload-addrset's one-region test states the rate).
 *  - an exact set: 64 shards, each an open-addressing table (linear
 *    probing, backward-shift deletion, no tombstones) under its own
 *    mutex, grown by doubling into memory from the kernel and shrunk by
 *    halving once less than an eighth full.  An entry's home slot comes
 *    from its filter bit, not from its address, so the entries that share
 *    a bit share one probe run, which a remove reads to know whether the
 *    bit may go.  A shard holds the addresses of whole 64 MiB regions,
 *    because glibc gives each thread an arena of its own in 64
 *    MiB-aligned heaps: a thread's sampled blocks then share one shard,
 *    whose lock and table stay in its core's cache.  With shards by
 *    filter line instead, the four threads of alloc-bench shared most of
 *    them, and the lock, the table slot and the count of nearly every
 *    insert and remove came from the other core.  Allocators that mix
 *    threads' blocks in one region (jemalloc's extents) share its shard's
 *    lock.
 *
 * Pure code (no hooks, no globals), unit-tested directly.
 */
#pragma once

#include "tide-hash.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define TIDE_ADDRSET_SHARD_BITS      6
#define TIDE_ADDRSET_SHARDS          (1u << TIDE_ADDRSET_SHARD_BITS)
#define TIDE_ADDRSET_SHARD_LINE_BITS 8   /* 256 filter lines per shard */
#define TIDE_ADDRSET_LINE_BITS       9   /* 512 bits: one 64-byte cache line */
#define TIDE_ADDRSET_FILTER_BITS     (TIDE_ADDRSET_SHARD_BITS + TIDE_ADDRSET_SHARD_LINE_BITS \
                                      + TIDE_ADDRSET_LINE_BITS)
#define TIDE_ADDRSET_REGION_SHIFT    26  /* 64 MiB: glibc's heap of an arena */
#define TIDE_ADDRSET_GRANULE_SHIFT   16  /* 64 KiB of address space per line */

/* record_serial and record_offset say where the block's ALLOC record waits
 * unsent, so that its free can fold into it (tide-preload-buffer.h);
 * serial 0: nowhere. */
typedef struct
{
  uint64_t addr;           /* 0: empty slot */
  uint64_t size;
  uint32_t kind;           /* TideAllocKind; the CUDA sets add a device */
  uint32_t record_serial;
  uint32_t record_offset;
  uint32_t flags;          /* TIDE_ADDR_*; 32 bytes: two entries per cache line */
} TideAddrEntry;

/* The block was recorded at another address, its place, which is held for
 * it (a Python object: tide-preload-pymalloc.c). */
#define TIDE_ADDR_PLACED    1u
/* The block was recorded by the parent of a fork: this process records
 * nothing of it, but lets its place go. */
#define TIDE_ADDR_INHERITED 2u

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
  TideAddrShard     shards[TIDE_ADDRSET_SHARDS];
} TideAddrSet;

bool     tide_addrset_init        (TideAddrSet         *set);
void     tide_addrset_clear       (TideAddrSet         *set);
void     tide_addrset_mark_all    (TideAddrSet         *set,
                                   uint32_t             flags);
void     tide_addrset_lock_all    (TideAddrSet         *set);
void     tide_addrset_unlock_all  (TideAddrSet         *set);
void     tide_addrset_reset_locks (TideAddrSet         *set);
bool     tide_addrset_insert      (TideAddrSet         *set,
                                   uint64_t             addr,
                                   uint64_t             size,
                                   uint32_t             kind);
bool     tide_addrset_insert_entry (TideAddrSet        *set,
                                   const TideAddrEntry *entry);
bool     tide_addrset_remove      (TideAddrSet         *set,
                                   uint64_t             addr,
                                   uint32_t             kinds,
                                   TideAddrEntry       *out);
bool     tide_addrset_lookup      (TideAddrSet         *set,
                                   uint64_t             addr,
                                   TideAddrEntry       *out);
uint64_t tide_addrset_count       (TideAddrSet         *set);

/* The set of kinds that tide_addrset_remove() takes: 0 is any kind. */
#define TIDE_ADDRSET_KIND(kind) (1u << (kind))

static inline bool
tide_addrset_kind_in (uint32_t kind,
                      uint32_t kinds)
{
  return kinds == 0 || (kind < 32 && ((kinds >> kind) & 1));
}

static inline uint64_t
tide_addrset_hash (uint64_t addr)
{
  return tide_hash_u64 (addr);
}

/* The top @bits bits of @key times 2^64 / phi (Fibonacci hashing).  Region
 * and granule numbers are small and run in sequence, which one multiply
 * spreads evenly; every free() computes two of these, and one multiply
 * each costs a third of splitmix64's two rounds. */
static inline uint32_t
tide_addrset_spread (uint64_t key,
                     unsigned bits)
{
  return (uint32_t) ((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* The shard of an address: that of its 64 MiB region. */
static inline uint32_t
tide_addrset_shard_index (uint64_t addr)
{
  return tide_addrset_spread (addr >> TIDE_ADDRSET_REGION_SHIFT, TIDE_ADDRSET_SHARD_BITS);
}

/* The filter bit of an address: its shard's lines come first, then its 64
 * KiB granule picks one of them, and its own bits the bit in that line.
 * glibc gives each thread its own arena, so a thread's frees read, and its
 * sampled blocks write, lines of their own: with bits spread by a hash of
 * the whole address, every free() loaded a random line of the filter,
 * which the other core had often just written or the program's own
 * traffic had evicted (most of what the profiler cost the target in
 * alloc-bench). */
static inline uint32_t
tide_addrset_filter_index (uint64_t addr)
{
  uint32_t line = tide_addrset_spread (addr >> TIDE_ADDRSET_GRANULE_SHIFT,
                                       TIDE_ADDRSET_SHARD_LINE_BITS);
  uint32_t bit = (uint32_t) ((addr >> 4) ^ (addr >> 13)) & ((1u << TIDE_ADDRSET_LINE_BITS) - 1);

  line |= tide_addrset_shard_index (addr) << TIDE_ADDRSET_SHARD_LINE_BITS;
  return line << TIDE_ADDRSET_LINE_BITS | bit;
}

/* False proves addr is not in the set; true means "look it up". */
static inline bool
tide_addrset_maybe (const TideAddrSet *set,
                    uint64_t           addr)
{
  uint32_t i = tide_addrset_filter_index (addr);

  return (atomic_load_explicit (&set->filter[i / 64], memory_order_relaxed)
          >> (i % 64)) & 1;
}
