/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-own.c: a fixed table of the preload's own mappings.  A
 * slot's address is claimed with a compare-and-swap (OWN_CLAIMED while its
 * length is written), so that a reader on the flusher sees a length only
 * with the address it belongs to; a mapping that does not fit is left
 * uncounted (the preload makes a few dozen, libunwind a few hundred in a
 * PyTorch process).  A reader that meets a
 * mapping being unmapped asks mincore about a range that is gone, which
 * counts nothing.
 */
#include "config.h"

#include "tide-preload-own.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#define OWN_CLAIMED    ((uintptr_t) 1)
#define OWN_VEC_PAGES  4096u  /* 16 MiB of 4 KiB pages a call, its vector a page on the stack */

typedef struct
{
  _Atomic uintptr_t addr;   /* 0: free */
  _Atomic size_t    len;
} OwnSlot;

typedef struct
{
  uintptr_t start;
  uintptr_t end;            /* rounded up to a page */
} OwnRange;

static OwnSlot own_slots[TIDE_OWN_MAX_MAPPINGS];

void
tide_own_note_mapped (void   *addr,
                      size_t  len)
{
  if (addr == NULL)
    return;
  for (unsigned i = 0; i < TIDE_OWN_MAX_MAPPINGS; i++)
    {
      uintptr_t expected = 0;

      if (atomic_compare_exchange_strong (&own_slots[i].addr, &expected, OWN_CLAIMED))
        {
          atomic_store (&own_slots[i].len, len);
          atomic_store (&own_slots[i].addr, (uintptr_t) addr);
          return;
        }
    }
}

void
tide_own_note_unmapped (void *addr)
{
  for (unsigned i = 0; addr != NULL && i < TIDE_OWN_MAX_MAPPINGS; i++)
    {
      uintptr_t expected = (uintptr_t) addr;

      if (atomic_compare_exchange_strong (&own_slots[i].addr, &expected, OWN_CLAIMED))
        {
          atomic_store (&own_slots[i].len, 0);
          atomic_store (&own_slots[i].addr, 0);
          return;
        }
    }
}

/* The resident pages of [@addr, @addr + @len) into *@pages_out; false
 * where part of it is not mapped (*@pages_out then holds those before). */
static bool
resident_pages (uintptr_t  addr,
                size_t     len,
                size_t     page,
                uint64_t  *pages_out)
{
  unsigned char vec[OWN_VEC_PAGES];
  uint64_t pages = 0;

  for (size_t done = 0; done < len;)
    {
      size_t n = (len - done + page - 1) / page;

      if (n > OWN_VEC_PAGES)
        n = OWN_VEC_PAGES;
      if (mincore ((void *) (addr + done), n * page, vec) != 0)
        {
          *pages_out = pages;
          return false;
        }
      for (size_t k = 0; k < n; k++)
        pages += vec[k] & 1;
      done += n * page;
    }
  *pages_out = pages;
  return true;
}

/* One slot's pages, or nothing while it is being noted or let go. */
static bool
slot_range (unsigned  i,
            size_t    page,
            OwnRange *out)
{
  uintptr_t addr = atomic_load (&own_slots[i].addr);
  size_t len;

  if (addr <= OWN_CLAIMED)
    return false;
  len = atomic_load (&own_slots[i].len);
  if (atomic_load (&own_slots[i].addr) != addr || len == 0)
    return false;
  out->start = addr;
  out->end = addr + ((len + page - 1) & ~(page - 1));
  return true;
}

static void
sift_down (OwnRange *a,
           unsigned  n,
           unsigned  i)
{
  for (unsigned child; (child = 2 * i + 1) < n; i = child)
    {
      OwnRange t;

      if (child + 1 < n && a[child + 1].start > a[child].start)
        child++;
      if (a[i].start >= a[child].start)
        return;
      t = a[i];
      a[i] = a[child];
      a[child] = t;
    }
}

/* By address, in place: a heap sort, which neither allocates nor
 * recurses, as nothing called from a hook may. */
static void
sort_ranges (OwnRange *a,
             unsigned  n)
{
  for (unsigned i = n / 2; i > 0; i--)
    sift_down (a, n, i - 1);
  for (unsigned end = n; end > 1; end--)
    {
      OwnRange t = a[0];

      a[0] = a[end - 1];
      a[end - 1] = t;
      sift_down (a, end - 1, 0);
    }
}

/* One mapping's resident pages; of one gone from under the table, those
 * counted before mincore found it gone. */
static uint64_t
range_pages (const OwnRange *r,
             size_t          page)
{
  uint64_t pages;

  resident_pages (r->start, r->end - r->start, page, &pages);
  return pages;
}

/* Each slot on its own: a mincore call per mapping. */
static uint64_t
resident_by_slot (size_t page)
{
  uint64_t pages = 0;

  for (unsigned i = 0; i < TIDE_OWN_MAX_MAPPINGS; i++)
    {
      OwnRange r;

      if (slot_range (i, page, &r))
        pages += range_pages (&r, page);
    }
  return pages;
}

/* The mappings, sorted, in runs of those that touch, a mincore call per
 * run: most are a page each (a buffer per thread), made one after the
 * other, and a call per mapping cost a PyTorch rank hundreds of system
 * calls at each step mark.  A run that a mapping gone from under the
 * table breaks is counted mapping by mapping, as before. */
static uint64_t
resident_by_run (OwnRange *ranges,
                 size_t    page)
{
  unsigned n = 0;
  uint64_t pages = 0;

  for (unsigned i = 0; i < TIDE_OWN_MAX_MAPPINGS; i++)
    if (slot_range (i, page, &ranges[n]))
      n++;
  sort_ranges (ranges, n);
  for (unsigned i = 0, j; i < n; i = j)
    {
      uintptr_t end = ranges[i].end;
      uint64_t counted;

      for (j = i + 1; j < n && ranges[j].start == end; j++)
        end = ranges[j].end;
      if (resident_pages (ranges[i].start, end - ranges[i].start, page, &counted))
        {
          pages += counted;
          continue;
        }
      for (unsigned k = i; k < j; k++)
        pages += range_pages (&ranges[k], page);
    }
  return pages;
}

static OwnRange ranges[TIDE_OWN_MAX_MAPPINGS];
static atomic_flag ranges_busy = ATOMIC_FLAG_INIT;

/* The child of a fork: a thread of the parent's may have held the array,
 * and none of them is left to let it go. */
void
tide_own_fork_child (void)
{
  atomic_flag_clear (&ranges_busy);
}

uint64_t
tide_own_resident_bytes (void)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  uint64_t pages;

  /* The flusher and a thread that marks a step may both ask: the one that
   * finds the array taken counts slot by slot. */
  if (atomic_flag_test_and_set_explicit (&ranges_busy, memory_order_acquire))
    return resident_by_slot (page) * page;
  pages = resident_by_run (ranges, page);
  atomic_flag_clear_explicit (&ranges_busy, memory_order_release);
  return pages * page;
}
