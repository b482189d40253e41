/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-preload-addrset.h"

#include "tide-preload-raw.h"

#include <string.h>

#define TIDE_ADDRSET_FILTER_LEN  ((size_t) 1 << TIDE_ADDRSET_FILTER_BITS >> 3)
#define TIDE_ADDRSET_SHARD_WORDS (1u << (TIDE_ADDRSET_FILTER_BITS - TIDE_ADDRSET_SHARD_BITS) >> 6)
#define TIDE_ADDRSET_MIN_SLOTS   64u
#define TIDE_ADDRSET_STALE_SLACK 256u
/* A shard recomputes its lines after (slots / this) lookups that its
 * filter sent in vain: each costs the lock, a recompute a scan of the
 * slots, so either way a miss costs a small constant. */
#define TIDE_ADDRSET_MISS_RATIO  16u

/* The shard's lock guards the bits of its filter lines and the entries
 * behind them (tide_addrset_filter_index). */
static inline TideAddrShard *
shard_of (TideAddrSet *set,
          uint64_t     addr)
{
  return &set->shards[tide_addrset_shard_index (addr)];
}

static inline uint32_t
home_of (const TideAddrShard *shard,
         uint64_t             h)
{
  return (uint32_t) (h >> TIDE_ADDRSET_SHARD_BITS) & shard->mask;
}

/* The caller holds the lock of addr's shard.  Readers do not lock, hence
 * atomic loads and stores; a filter word's bits all belong to one shard,
 * whose lock the writer holds, so its update needs no atomic
 * read-modify-write (a locked instruction, 16% of an insert's samples). */
static void
filter_set (TideAddrSet *set,
            uint64_t     addr)
{
  uint32_t i = tide_addrset_filter_index (addr);
  _Atomic uint64_t *word = &set->filter[i / 64];
  uint64_t bit = UINT64_C (1) << (i % 64);
  uint64_t old = atomic_load_explicit (word, memory_order_relaxed);

  if ((old & bit) == 0)
    atomic_store_explicit (word, old | bit, memory_order_relaxed);
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
      shard->stale = 0;
      shard->misses = 0;
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
  uint32_t i = home_of (shard, tide_addrset_hash (e->addr));

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

/* Recomputes the shard's filter lines from its entries, which drops the
 * bits of removed addresses.  Called once the bits that may be stale
 * outnumber the live entries (and a slack), so that the scan, at most a
 * few slots per live entry, costs each remove a small constant; a table
 * that has emptied to an eighth shrinks first, so that the scan stays
 * that short.  Every word goes from its old value to its new one in one
 * store, and both have the bit of every entry (no insert or remove can run
 * in this shard meanwhile), so a lock-free reader never misses one. */
static void
shard_refilter (TideAddrSet   *set,
                TideAddrShard *shard)
{
  uint32_t first = (uint32_t) (shard - set->shards) * TIDE_ADDRSET_SHARD_WORDS;
  uint64_t words[TIDE_ADDRSET_SHARD_WORDS] = { 0 };
  uint32_t n_slots = shard->mask + 1;

  while (n_slots > TIDE_ADDRSET_MIN_SLOTS && (uint64_t) shard->count * 8 < n_slots)
    n_slots /= 2;
  if (n_slots != shard->mask + 1)
    (void) shard_resize (shard, n_slots);  /* a failed shrink keeps the table */
  for (uint32_t i = 0; shard->count > 0 && i <= shard->mask; i++)
    if (shard->slots[i].addr != 0)
      {
        uint32_t bit = tide_addrset_filter_index (shard->slots[i].addr);

        words[bit / 64 - first] |= UINT64_C (1) << (bit % 64);
      }
  for (uint32_t w = 0; w < TIDE_ADDRSET_SHARD_WORDS; w++)
    if (atomic_load_explicit (&set->filter[first + w], memory_order_relaxed) != words[w])
      atomic_store_explicit (&set->filter[first + w], words[w], memory_order_relaxed);
  shard->stale = 0;
  shard->misses = 0;
}

/* Index of addr's slot, or -1. */
static int64_t
shard_find (const TideAddrShard *shard,
            uint64_t             addr,
            uint64_t             h)
{
  for (uint32_t i = home_of (shard, h);; i = (i + 1) & shard->mask)
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
  uint64_t h = tide_addrset_hash (addr);
  TideAddrShard *shard = shard_of (set, addr);
  int64_t at;
  bool ok = true;

  if (addr == 0)
    return false;
  pthread_mutex_lock (&shard->lock);
  at = shard_find (shard, addr, h);
  if (at >= 0)
    shard->slots[at] = *entry;
  else if ((shard->count + 1) * 2 > shard->mask + 1 && !shard_resize (shard, (shard->mask + 1) * 2))
    ok = false;
  else
    {
      shard_put (shard, entry);
      filter_set (set, addr);
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
      home = home_of (shard, tide_addrset_hash (shard->slots[j].addr));
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

/* Removes addr if it is there with this kind (0: any kind). */
bool
tide_addrset_remove (TideAddrSet   *set,
                     uint64_t       addr,
                     uint32_t       kind,
                     TideAddrEntry *out)
{
  uint64_t h = tide_addrset_hash (addr);
  TideAddrShard *shard = shard_of (set, addr);
  int64_t at;
  bool found = false;

  pthread_mutex_lock (&shard->lock);
  at = shard_find (shard, addr, h);
  if (at >= 0 && (kind == 0 || shard->slots[at].kind == kind))
    {
      if (out != NULL)
        *out = shard->slots[at];
      shard_delete_at (shard, (uint32_t) at);
      /* Its bit may be another entry's too: it stays, stale, until the
       * next refilter, and costs at most a lookup meanwhile. */
      if (++shard->stale > shard->count + TIDE_ADDRSET_STALE_SLACK || shard->count == 0)
        shard_refilter (set, shard);
      found = true;
    }
  else if (at < 0 && ++shard->misses > (shard->mask + 1) / TIDE_ADDRSET_MISS_RATIO + 8)
    shard_refilter (set, shard);
  pthread_mutex_unlock (&shard->lock);
  return found;
}

bool
tide_addrset_lookup (TideAddrSet   *set,
                     uint64_t       addr,
                     TideAddrEntry *out)
{
  uint64_t h = tide_addrset_hash (addr);
  TideAddrShard *shard = shard_of (set, addr);
  int64_t at;

  pthread_mutex_lock (&shard->lock);
  at = shard_find (shard, addr, h);
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
