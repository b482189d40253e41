/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The recorder calls this table for every allocation and every free it
 * records, millions of times in one --all recording, so each call costs one
 * probe and, in the common case, no malloc (a GHashTable with a g_new'd entry
 * per block cost an allocation, a free and several lookups).  Blocks live in
 * an open-addressing table of our own: a power-of-two array of slots, linear
 * probing from a splitmix64 mix of the address, at most half full, and
 * backward-shift deletion so that no tombstones build up under churn.  A
 * slot holds the newest block of its address inline (its addr is the key, 0
 * marks an empty slot); the rare older blocks of the same address whose
 * frees are still on their way hang off the slot in a list, newest first.
 * Address 0 cannot be a key, so a block there (which a target should never
 * send, but the wire is not ours to trust) gets a slot of its own beside the
 * array.
 *
 * Orphan frees are rare and short-lived; they stay in a GHashTable, and an
 * allocation looks there only while there are any.
 */
#include "config.h"

#include "tide-live-table.h"

#include <stdlib.h>
#include <string.h>

#include "tide-hash.h"
#include "tide-table-memory.h"

#define MIN_SLOTS 64

typedef struct _Older Older;
struct _Older
{
  TideLiveAlloc alloc;
  Older        *next;     /* same address, allocated earlier still */
};

typedef struct
{
  TideLiveAlloc newest;   /* newest.addr == 0: an empty slot */
  Older        *older;    /* same address, allocated earlier, free not seen yet */
} Slot;

typedef struct _Orphan Orphan;
struct _Orphan
{
  guint64  addr;
  gint64   free_ns;
  Orphan  *next;          /* same address */
  gboolean matched;
};

struct _TideLiveTable
{
  Slot       *slots;      /* NULL until the first block */
  gsize       mask;       /* number of slots - 1 */
  gsize       used;       /* occupied slots: addresses, not blocks */
  Slot        zero;       /* the blocks of address 0, if has_zero */
  GHashTable *orphans;    /* &addr -> Orphan list */
  GQueue      arrivals;   /* Orphan*, oldest arrival first, for expiry */
  guint       size;
  guint       n_orphans;
  guint       has_zero : 1;
};

static inline gsize
hash_addr (guint64 addr)
{
  return (gsize) tide_hash_u64 (addr);
}

static void
older_free_all (Older *o)
{
  while (o != NULL)
    {
      Older *next = o->next;
      g_free (o);
      o = next;
    }
}

TideLiveTable *
tide_live_table_new (void)
{
  TideLiveTable *self = g_new0 (TideLiveTable, 1);

  self->orphans = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_queue_init (&self->arrivals);
  return self;
}

void
tide_live_table_free (TideLiveTable *self)
{
  if (self == NULL)
    return;
  if (self->slots != NULL)
    for (gsize i = 0; i <= self->mask; i++)
      older_free_all (self->slots[i].older);
  older_free_all (self->zero.older);
  tide_table_memory_free (self->slots, self->slots != NULL ? (self->mask + 1) * sizeof (Slot) : 0);
  g_hash_table_unref (self->orphans);
  g_queue_clear_full (&self->arrivals, g_free);
  g_free (self);
}

static Slot *
probe (TideLiveTable *self,
       guint64        addr)
{
  for (gsize i = hash_addr (addr) & self->mask; ; i = (i + 1) & self->mask)
    {
      Slot *s = &self->slots[i];

      if (s->newest.addr == addr || s->newest.addr == 0)
        return s;
    }
}

/* Moves every slot into an array of @n_slots (a power of two); the addresses
 * are distinct, so each probe ends at an empty slot. */
static void
resize (TideLiveTable *self,
        gsize          n_slots)
{
  Slot *old = self->slots;
  gsize old_n = old != NULL ? self->mask + 1 : 0;

  self->slots = tide_table_memory_new (n_slots * sizeof (Slot));
  self->mask = n_slots - 1;
  for (gsize i = 0; i < old_n; i++)
    if (old[i].newest.addr != 0)
      *probe (self, old[i].newest.addr) = old[i];
  tide_table_memory_free (old, old_n * sizeof (Slot));
}

/* The slot of @addr, or an empty one where its first block goes (its
 * newest.addr still 0); the array grows first if taking that one would
 * leave it more than half full. */
static Slot *
find_or_reserve_slot (TideLiveTable *self,
                      guint64        addr)
{
  Slot *s;

  if (G_UNLIKELY (addr == 0))
    return &self->zero;
  if (self->slots == NULL)
    resize (self, MIN_SLOTS);
  s = probe (self, addr);
  if (s->newest.addr == 0 && (self->used + 1) * 2 > self->mask + 1)
    {
      resize (self, (self->mask + 1) * 2);
      s = probe (self, addr);
    }
  return s;
}

static Slot *
find_slot (TideLiveTable *self,
           guint64        addr)
{
  Slot *s;

  if (G_UNLIKELY (addr == 0))
    return self->has_zero ? &self->zero : NULL;
  if (self->slots == NULL)
    return NULL;
  s = probe (self, addr);
  return s->newest.addr != 0 ? s : NULL;
}

/* Empties @s, pulling back each later slot of the probe run that may sit
 * there (its home is not in the cyclic range after the hole up to itself),
 * so that lookups never need tombstones. */
static void
clear_slot (TideLiveTable *self,
            Slot          *s)
{
  gsize hole, j;

  if (G_UNLIKELY (s == &self->zero))
    {
      self->has_zero = FALSE;
      self->zero = (Slot) { 0 };
      return;
    }
  hole = (gsize) (s - self->slots);
  for (j = (hole + 1) & self->mask; self->slots[j].newest.addr != 0; j = (j + 1) & self->mask)
    {
      gsize home = hash_addr (self->slots[j].newest.addr) & self->mask;

      if (((j - home) & self->mask) >= ((j - hole) & self->mask))
        {
          self->slots[hole] = self->slots[j];
          hole = j;
        }
    }
  self->slots[hole] = (Slot) { 0 };
  self->used--;
  /* Give back what a burst of live blocks left behind; at 1/8 full, so that
   * churn around one size does not resize back and forth. */
  if (self->mask + 1 > MIN_SLOTS && self->used * 8 < self->mask + 1)
    resize (self, (self->mask + 1) / 2);
}

/* Removes the earliest orphan free of @addr at or after @alloc_ns. */
static gboolean
take_orphan (TideLiveTable *self,
             guint64        addr,
             gint64         alloc_ns,
             gint64        *free_ns)
{
  Orphan *head = g_hash_table_lookup (self->orphans, &addr);
  Orphan *best = NULL, *best_prev = NULL, *prev = NULL;

  for (Orphan *o = head; o != NULL; prev = o, o = o->next)
    if (o->free_ns >= alloc_ns && (best == NULL || o->free_ns < best->free_ns))
      {
        best = o;
        best_prev = prev;
      }
  if (best == NULL)
    return FALSE;

  if (best_prev != NULL)
    best_prev->next = best->next;
  else if (best->next != NULL)
    g_hash_table_replace (self->orphans, &best->next->addr, best->next);
  else
    g_hash_table_remove (self->orphans, &addr);
  best->matched = TRUE;
  best->next = NULL;
  self->n_orphans--;
  *free_ns = best->free_ns;
  return TRUE;
}

/* Adds @alloc to the occupied slot @s of its address, keeping the blocks
 * newest first even when @alloc arrived late. */
static void
add_to_slot (Slot                *s,
             const TideLiveAlloc *alloc)
{
  Older *o = g_new (Older, 1);
  Older **link = &s->older;

  if (s->newest.alloc_ns <= alloc->alloc_ns)
    {
      o->alloc = s->newest;
      o->next = s->older;
      s->older = o;
      s->newest = *alloc;
      return;
    }
  while (*link != NULL && (*link)->alloc.alloc_ns > alloc->alloc_ns)
    link = &(*link)->next;
  o->alloc = *alloc;
  o->next = *link;
  *link = o;
}

gboolean
tide_live_table_alloc (TideLiveTable       *self,
                       const TideLiveAlloc *block,
                       gint64              *matched_free_ns)
{
  TideLiveAlloc unmarked = *block;
  const TideLiveAlloc *alloc = &unmarked;
  Slot *s;

  unmarked.residency_group = 0;
  if (self->n_orphans > 0 && take_orphan (self, alloc->addr, alloc->alloc_ns, matched_free_ns))
    return TRUE;

  s = find_or_reserve_slot (self, alloc->addr);
  if (G_UNLIKELY (s == &self->zero))
    {
      if (self->has_zero)
        add_to_slot (s, alloc);
      else
        s->newest = *alloc;
      self->has_zero = TRUE;
    }
  else if (s->newest.addr != 0)
    add_to_slot (s, alloc);
  else
    {
      s->newest = *alloc;
      s->older = NULL;
      self->used++;
    }
  self->size++;
  return FALSE;
}

/* Takes the newest block of @s allocated at or before @free_ns into @out. */
static gboolean
take_from_slot (TideLiveTable *self,
                Slot          *s,
                gint64         free_ns,
                TideLiveAlloc *out)
{
  Older *o;

  if (s->newest.alloc_ns <= free_ns)
    {
      *out = s->newest;
      if ((o = s->older) == NULL)
        clear_slot (self, s);
      else
        {
          s->newest = o->alloc;
          s->older = o->next;
          g_free (o);
        }
      return TRUE;
    }
  for (Older **link = &s->older; (o = *link) != NULL; link = &o->next)
    if (o->alloc.alloc_ns <= free_ns)
      {
        *out = o->alloc;
        *link = o->next;
        g_free (o);
        return TRUE;
      }
  return FALSE;
}

gboolean
tide_live_table_release (TideLiveTable *self,
                         guint64        addr,
                         gint64         free_ns,
                         TideLiveAlloc *out)
{
  Slot *s = find_slot (self, addr);
  Orphan *orphan;

  if (s != NULL && take_from_slot (self, s, free_ns, out))
    {
      self->size--;
      return TRUE;
    }

  orphan = g_new0 (Orphan, 1);
  orphan->addr = addr;
  orphan->free_ns = free_ns;
  orphan->next = g_hash_table_lookup (self->orphans, &addr);
  if (orphan->next != NULL)
    g_hash_table_steal (self->orphans, &addr);
  g_hash_table_insert (self->orphans, &orphan->addr, orphan);
  g_queue_push_tail (&self->arrivals, orphan);
  self->n_orphans++;
  return FALSE;
}

/* Forgets orphan frees older than @before_ns: their allocation was never
 * recorded (made before the profiler connected, or not sampled). */
void
tide_live_table_expire_orphans (TideLiveTable *self,
                                gint64         before_ns)
{
  Orphan *o;

  while ((o = g_queue_peek_head (&self->arrivals)) != NULL &&
         (o->matched || o->free_ns < before_ns))
    {
      g_queue_pop_head (&self->arrivals);
      if (!o->matched)
        {
          Orphan *head = g_hash_table_lookup (self->orphans, &o->addr);
          Orphan *prev = NULL;

          for (Orphan *it = head; it != NULL && it != o; it = it->next)
            prev = it;
          if (prev != NULL)
            prev->next = o->next;
          else if (o->next != NULL)
            g_hash_table_replace (self->orphans, &o->next->addr, o->next);
          else
            g_hash_table_remove (self->orphans, &o->addr);
          self->n_orphans--;
        }
      g_free (o);
    }
}

static void
foreach_in_slot (Slot             *s,
                 TideLiveMarkFunc  func,
                 gpointer          user_data)
{
  gint64 newer_alloc_ns = s->newest.alloc_ns;

  func (&s->newest, 0, user_data);
  for (Older *o = s->older; o != NULL; o = o->next)
    {
      func (&o->alloc, newer_alloc_ns, user_data);
      newer_alloc_ns = o->alloc.alloc_ns;
    }
}

/* tide_live_table_foreach(), where @func may change each block's
 * residency_group: the table neither reads nor moves it. */
void
tide_live_table_foreach_to_mark (TideLiveTable    *self,
                                 TideLiveMarkFunc  func,
                                 gpointer          user_data)
{
  if (self->has_zero)
    foreach_in_slot (&self->zero, func, user_data);
  if (self->slots == NULL)
    return;
  for (gsize i = 0; i <= self->mask; i++)
    if (self->slots[i].newest.addr != 0)
      foreach_in_slot (&self->slots[i], func, user_data);
}

typedef struct
{
  TideLiveFunc func;
  gpointer     user_data;
} ReadOnly;

static void
read_only (TideLiveAlloc *alloc,
           gint64         free_ns,
           gpointer       user_data)
{
  ReadOnly *r = user_data;

  r->func (alloc, free_ns, r->user_data);
}

/* In no particular order across addresses; @func must not change the table. */
void
tide_live_table_foreach (TideLiveTable *self,
                         TideLiveFunc   func,
                         gpointer       user_data)
{
  ReadOnly r = { func, user_data };

  tide_live_table_foreach_to_mark (self, read_only, &r);
}

guint
tide_live_table_get_size (TideLiveTable *self)
{
  return self->size;
}

guint
tide_live_table_get_n_orphans (TideLiveTable *self)
{
  return self->n_orphans;
}

/* Digits of 16 bits for many blocks, where fewer passes pay for counts of
 * a megabyte; of 8 bits for a few thousand, a sampled recording's step
 * end, whose counts fit in the cache. */
#define RADIX_WIDE_BITS  16
#define RADIX_NARROW_BITS 8

static guint
radix_digit (guint64 addr,
             guint   pass,
             guint   bits)
{
  return (addr >> (pass * bits)) & ((1u << bits) - 1);
}

/* One stable pass of the radix sort: @from into @to by digit @pass, whose
 * @counts are turned into the digits' first places. */
static void
radix_pass (const TideBlockPlace *from,
            TideBlockPlace       *to,
            guint                 n,
            guint                 pass,
            guint                 bits,
            guint                *counts)
{
  guint sum = 0;

  for (guint d = 0; d < 1u << bits; d++)
    {
      guint c = counts[d];
      counts[d] = sum;
      sum += c;
    }
  for (guint i = 0; i < n; i++)
    to[counts[radix_digit (from[i].addr, pass, bits)]++] = from[i];
}

/* Below this many blocks, even the narrow digits' counts cost more than
 * comparing; below the second, the wide ones' do. */
#define RADIX_MIN_BLOCKS      256
#define RADIX_WIDE_MIN_BLOCKS 16384

/* Address, then index: the order a stable sort by address gives. */
static gint
compare_places (gconstpointer a,
                gconstpointer b)
{
  const TideBlockPlace *x = a, *y = b;

  if (x->addr != y->addr)
    return (x->addr > y->addr) - (x->addr < y->addr);
  return (x->index > y->index) - (x->index < y->index);
}

/**
 * tide_live_allocs_places_by_addr:
 * @allocs: (array length=n): blocks
 * @n: how many
 *
 * The places of @allocs (address, size and index in @allocs) in address
 * order; equal addresses keep their order.  A step end reads the
 * residency of every live block in address order: hundreds of thousands
 * with --all, where a comparison sort that moved whole blocks was the
 * larger part of the step's cost, and a few thousand at every step end of
 * a sampled recording, where a comparison sort was still the recorder's
 * largest sort.  This is a radix sort of the places (a comparison sort of
 * them below RADIX_MIN_BLOCKS): one pass counts every digit, then one pass
 * for each digit that not every address shares (the top ones never differ
 * in a 47-bit address space).  Whole blocks are never moved: fetching them
 * in address order, which is no order of theirs, cost more than the sort.
 *
 * Returns: (transfer full) (array length=n): the places
 */
TideBlockPlace *
tide_live_allocs_places_by_addr (const TideLiveAlloc *allocs,
                                 guint                n)
{
  TideBlockPlace *places = g_new (TideBlockPlace, MAX (n, 1));
  guint bits = n >= RADIX_WIDE_MIN_BLOCKS ? RADIX_WIDE_BITS : RADIX_NARROW_BITS;
  guint passes = 64 / bits, size = 1u << bits;
  g_autofree TideBlockPlace *spare = NULL;
  g_autofree guint *counts = NULL;
  guint64 differ = 0;

  if (n < RADIX_MIN_BLOCKS)
    {
      for (guint i = 0; i < n; i++)
        places[i] = (TideBlockPlace) { allocs[i].addr, allocs[i].size, i };
      qsort (places, n, sizeof (TideBlockPlace), compare_places);
      return places;
    }
  spare = g_new (TideBlockPlace, n);
  counts = g_new0 (guint, passes * size);
  for (guint i = 0; i < n; i++)
    {
      guint64 addr = allocs[i].addr;

      places[i] = (TideBlockPlace) { addr, allocs[i].size, i };
      differ |= addr ^ allocs[0].addr;
      for (guint pass = 0; pass < passes; pass++)
        counts[pass * size + radix_digit (addr, pass, bits)]++;
    }
  for (guint pass = 0; pass < passes; pass++)
    {
      TideBlockPlace *swap;

      if (radix_digit (differ, pass, bits) == 0)
        continue;
      radix_pass (places, spare, n, pass, bits, counts + pass * size);
      swap = places;
      places = spare;
      spare = swap;
    }
  return places;
}

/**
 * tide_live_allocs_sort_by_addr:
 * @allocs: an array of #TideLiveAlloc
 *
 * Sorts @allocs by address, keeping the order of equal addresses.
 */
void
tide_live_allocs_sort_by_addr (GArray *allocs)
{
  const TideLiveAlloc *blocks = (const TideLiveAlloc *) allocs->data;
  g_autofree TideBlockPlace *places = tide_live_allocs_places_by_addr (blocks, allocs->len);
  g_autofree TideLiveAlloc *sorted = g_new (TideLiveAlloc, MAX (allocs->len, 1));

  for (guint i = 0; i < allocs->len; i++)
    sorted[i] = blocks[places[i].index];
  if (allocs->len > 0)
    memcpy (allocs->data, sorted, (gsize) allocs->len * sizeof (TideLiveAlloc));
}
