/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-table-memory.c: zeroed arrays for the recorder's large hash tables
 * (the live table's).  Their lookups land anywhere in them, so with small
 * pages nearly each one also misses the TLB, which in a virtual machine
 * costs a walk of two page tables: a large array is mapped on its own and
 * asks for huge pages (granted where transparent huge pages are "always"
 * or "madvise").  It is zeroed by writing, not left to fresh pages: a
 * table's probes read it first, which maps the shared zero page, and each
 * first write then copies that page and flushes the TLB of every recorder
 * thread.
 */
#include "config.h"

#include "tide-table-memory.h"

#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE (2u << 20)

gpointer
tide_table_memory_new (gsize bytes)
{
  gpointer memory;

  if (bytes < HUGE_PAGE)
    return g_malloc0 (bytes);
  memory = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    g_error ("out of memory for a table of %" G_GSIZE_FORMAT " bytes", bytes);
  madvise (memory, bytes, MADV_HUGEPAGE);
  memset (memory, 0, bytes);
  return memory;
}

void
tide_table_memory_free (gpointer memory,
                        gsize    bytes)
{
  if (memory == NULL)
    return;
  if (bytes < HUGE_PAGE)
    g_free (memory);
  else
    munmap (memory, bytes);
}
