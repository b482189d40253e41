/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-preload-addrset.h"

#include "tide-preload-raw.h"

#include <string.h>

#define TIDE_ADDRSET_FILTER_LEN  ((size_t) 1 << TIDE_ADDRSET_FILTER_BITS >> 3)
#define TIDE_ADDRSET_MIN_SLOTS   64u

/* The shard's lock guards the bits of its filter lines and the entries
 * behind them (tide_addrset_filter_index). */
static inline TideAddrShard *
shard_of (TideAddrSet *set,
          uint64_t     addr)
{
  return &set->shards[tide_addrset_shard_index (addr)];
}

/* An entry's home slot: by its filter bit, so that the entries that share
 * a bit share a home, and a probe run from it finds them all. */
static inline uint32_t
home_of (const TideAddrShard *shard,
         uint64_t             addr)
{
  uint64_t h = tide_addrset_hash (tide_addrset_filter_index (addr));

  return (uint32_t) (h >> TIDE_ADDRSET_SHARD_BITS) & shard->mask;
}

/* Sets or clears addr's filter bit.  The caller holds the lock of addr's
 * shard.  Readers do not lock, hence atomic loads and stores; a filter
 * word's bits all belong to one shard, whose lock the writer holds, so its
 * update needs no atomic read-modify-write (a locked instruction would
 * weigh on every insert and remove). */
static void
filter_put (TideAddrSet *set,
            uint64_t     addr,
            bool         on)
{
  uint32_t i = tide_addrset_filter_index (addr);
  _Atomic uint64_t *word = &set->filter[i / 64];
  uint64_t bit = UINT64_C (1) << (i % 64);
  uint64_t old = atomic_load_explicit (word, memory_order_relaxed);
  uint64_t new_ = on ? old | bit : old & ~bit;

  if (new_ != old)
    atomic_store_explicit (word, new_, memory_order_relaxed);
}

static bool
shard_alloc (TideAddrShard *shard,
             uint32_t       n_slots)
{
  TideAddrEntry *slots = tide_raw_mmap ((size_t) n_slots * sizeof (TideAddrEntry));

  if (slots == NULL)
    return false;
  shard->slots = slots;
  shard->mask = n_slots - 1;
  shard->count = 0;
  return true;
}

bool
tide_addrset_init (TideAddrSet *set)
{
  memset (set, 0, sizeof *set);
  set->filter = tide_raw_mmap (TIDE_ADDRSET_FILTER_LEN);
  if (set->filter == NULL)
    return false;
  for (uint32_t i = 0; i < TIDE_ADDRSET_SHARDS; i++)
    {
      pthread_mutex_init (&set->shards[i].lock, NULL);
      if (!shard_alloc (&set->shards[i], TIDE_ADDRSET_MIN_SLOTS))
        return false;
    }
  return true;
}

/* Forgets every address.  Callers hold every shard lock or are alone. */
void
tide_addrset_clear (TideAddrSet *set)
{
  /* MADV_DONTNEED on a private anonymous mapping reads back as zeros. */
  if (madvise ((void *) set->filter, TIDE_ADDRSET_FILTER_LEN, MADV_DONTNEED) != 0)
    memset ((void *) set->filter, 0, TIDE_ADDRSET_FILTER_LEN);
  for (uint32_t i = 0; i < TIDE_ADDRSET_SHARDS; i++)
    {
      TideAddrShard *shard = &set->shards[i];

      memset (shard->slots, 0, ((size_t) shard->mask + 1) * sizeof (TideAddrEntry));
      shard->count = 0;
    }
}

/* Adds @flags to every entry.  Callers hold every shard lock or are alone. */
void
tide_addrset_mark_all (TideAddrSet *set,
                       uint32_t     flags)
{
  for (uint32_t i = 0; i < TIDE_ADDRSET_SHARDS; i++)
    {
      TideAddrShard *shard = &set->shards[i];

      for (uint32_t j = 0; j <= shard->mask; j++)
        if (shard->slots[j].addr != 0)
          shard->slots[j].flags |= flags;
    }
}

void
tide_addrset_lock_all (TideAddrSet *set)
{
  for (uint32_t i = 0; i < TIDE_ADDRSET_SHARDS; i++)
    pthread_mutex_lock (&set->shards[i].lock);
}

void
tide_addrset_unlock_all (TideAddrSet *set)
{
  for (uint32_t i = TIDE_ADDRSET_SHARDS; i-- > 0;)
    pthread_mutex_unlock (&set->shards[i].lock);
}

/* In the child of a fork, where the forking thread is the only one left. */
void
tide_addrset_reset_locks (TideAddrSet *set)
{
  for (uint32_t i = 0; i < TIDE_ADDRSET_SHARDS; i++)
    pthread_mutex_init (&set->shards[i].lock, NULL);
}

static void
shard_put (TideAddrShard       *shard,
           const TideAddrEntry *e)
{
  uint32_t i = home_of (shard, e->addr);

  while (shard->slots[i].addr != 0)
    i = (i + 1) & shard->mask;
  shard->slots[i] = *e;
  shard->count++;
}

/* Moves the entries to a table of @n_slots, a power of two. */
static bool
shard_resize (TideAddrShard *shard,
              uint32_t       n_slots)
{
  TideAddrEntry *old = shard->slots;
  uint32_t old_n = shard->mask + 1;

  if (!shard_alloc (shard, n_slots))
    return false;
  for (uint32_t i = 0; i < old_n; i++)
    if (old[i].addr != 0)
      shard_put (shard, &old[i]);
  tide_raw_munmap (old, (size_t) old_n * sizeof (TideAddrEntry));
  return true;
}

/* Index of addr's slot, or -1. */
static int64_t
shard_find (const TideAddrShard *shard,
            uint64_t             addr)
{
  for (uint32_t i = home_of (shard, addr);; i = (i + 1) & shard->mask)
    {
      if (shard->slots[i].addr == addr)
        return i;
      if (shard->slots[i].addr == 0)
        return -1;
    }
}

/* Inserts or replaces @entry (by its addr).  False only when the table
 * could not grow. */
bool
tide_addrset_insert_entry (TideAddrSet         *set,
                           const TideAddrEntry *entry)
{
  uint64_t addr = entry->addr;
  TideAddrShard *shard = shard_of (set, addr);
  int64_t at;
  bool ok = true;

  if (addr == 0)
    return false;
  pthread_mutex_lock (&shard->lock);
  at = shard_find (shard, addr);
  if (at >= 0)
    shard->slots[at] = *entry;
  else if ((shard->count + 1) * 2 > shard->mask + 1 && !shard_resize (shard, (shard->mask + 1) * 2))
    ok = false;
  else
    {
      shard_put (shard, entry);
      filter_put (set, addr, true);
    }
  pthread_mutex_unlock (&shard->lock);
  return ok;
}

bool
tide_addrset_insert (TideAddrSet *set,
                     uint64_t     addr,
                     uint64_t     size,
                     uint32_t     kind)
{
  TideAddrEntry e = { .addr = addr, .size = size, .kind = kind };

  return tide_addrset_insert_entry (set, &e);
}

/* Backward-shift deletion: pull later members of the probe run into the
 * hole so that lookups never need tombstones. */
static void
shard_delete_at (TideAddrShard *shard,
                 uint32_t       hole)
{
  uint32_t j = hole;

  for (;;)
    {
      uint32_t home;

      j = (j + 1) & shard->mask;
      if (shard->slots[j].addr == 0)
        break;
      home = home_of (shard, shard->slots[j].addr);
      /* Move j into the hole unless its home lies cyclically in (hole, j]. */
      if (((j - home) & shard->mask) >= ((j - hole) & shard->mask))
        {
          shard->slots[hole] = shard->slots[j];
          hole = j;
        }
    }
  shard->slots[hole].addr = 0;
  shard->count--;
}

/* Whether an entry has the filter bit of @addr: those that have it all
 * sit in the probe run from its home. */
static bool
shard_has_bit (const TideAddrShard *shard,
               uint64_t             addr)
{
  uint32_t bit = tide_addrset_filter_index (addr);

  for (uint32_t i = home_of (shard, addr); shard->slots[i].addr != 0; i = (i + 1) & shard->mask)
    if (tide_addrset_filter_index (shard->slots[i].addr) == bit)
      return true;
  return false;
}

/* Removes addr if it is there with one of these kinds (TIDE_ADDRSET_KIND
 * bits; 0: any kind), and its filter bit with it unless another entry has
 * that bit too.  A table that has emptied to an eighth gives half its
 * memory back. */
bool
tide_addrset_remove (TideAddrSet   *set,
                     uint64_t       addr,
                     uint32_t       kinds,
                     TideAddrEntry *out)
{
  TideAddrShard *shard = shard_of (set, addr);
  int64_t at;
  bool found = false;

  pthread_mutex_lock (&shard->lock);
  at = shard_find (shard, addr);
  if (at >= 0 && tide_addrset_kind_in (shard->slots[at].kind, kinds))
    {
      if (out != NULL)
        *out = shard->slots[at];
      shard_delete_at (shard, (uint32_t) at);
      if (!shard_has_bit (shard, addr))
        filter_put (set, addr, false);
      if (shard->mask + 1 > TIDE_ADDRSET_MIN_SLOTS && (uint64_t) shard->count * 8 < shard->mask + 1)
        (void) shard_resize (shard, (shard->mask + 1) / 2);  /* a failed shrink keeps the table */
      found = true;
    }
  pthread_mutex_unlock (&shard->lock);
  return found;
}

bool
tide_addrset_lookup (TideAddrSet   *set,
                     uint64_t       addr,
                     TideAddrEntry *out)
{
  TideAddrShard *shard = shard_of (set, addr);
  int64_t at;

  pthread_mutex_lock (&shard->lock);
  at = shard_find (shard, addr);
  if (at >= 0 && out != NULL)
    *out = shard->slots[at];
  pthread_mutex_unlock (&shard->lock);
  return at >= 0;
}

uint64_t
tide_addrset_count (TideAddrSet *set)
{
  uint64_t n = 0;

  for (uint32_t i = 0; i < TIDE_ADDRSET_SHARDS; i++)
    {
      pthread_mutex_lock (&set->shards[i].lock);
      n += set->shards[i].count;
      pthread_mutex_unlock (&set->shards[i].lock);
    }
  return n;
}
