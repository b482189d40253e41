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
#include <sys/mman.h>
#include <unistd.h>

#define OWN_CLAIMED    ((uintptr_t) 1)
#define OWN_VEC_PAGES  256u

typedef struct
{
  _Atomic uintptr_t addr;   /* 0: free */
  _Atomic size_t    len;
} OwnSlot;

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

static uint64_t
resident_pages (uintptr_t addr,
                size_t    len,
                size_t    page)
{
  unsigned char vec[OWN_VEC_PAGES];
  uint64_t pages = 0;

  for (size_t done = 0; done < len;)
    {
      size_t n = (len - done + page - 1) / page;

      if (n > OWN_VEC_PAGES)
        n = OWN_VEC_PAGES;
      if (mincore ((void *) (addr + done), n * page, vec) != 0)
        return pages;
      for (size_t k = 0; k < n; k++)
        pages += vec[k] & 1;
      done += n * page;
    }
  return pages;
}

uint64_t
tide_own_resident_bytes (void)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  uint64_t pages = 0;

  for (unsigned i = 0; i < TIDE_OWN_MAX_MAPPINGS; i++)
    {
      uintptr_t addr = atomic_load (&own_slots[i].addr);
      size_t len;

      if (addr <= OWN_CLAIMED)
        continue;
      len = atomic_load (&own_slots[i].len);
      if (atomic_load (&own_slots[i].addr) == addr)
        pages += resident_pages (addr, len, page);
    }
  return pages * page;
}
