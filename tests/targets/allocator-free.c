/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * allocator-free: memory that the allocator keeps after the program freed
 * it, whichever allocator runs it (glibc, or jemalloc when preloaded).
 *
 *   step 1  nothing: the baseline;
 *   step 2  1024 blocks of 64 KiB written and freed, with one block above
 *           them kept: 64 MiB that the allocator holds free.
 *
 * jemalloc returns freed pages only after its decay time (10 s by
 * default), and the program ends well before that.
 */
#include <stdlib.h>
#include <string.h>

#include "target-util.h"
#include "tidemark.h"

#define BLOCK    (64 * 1024)
#define N_BLOCKS 1024

static TARGET_NOINLINE void *
free_under_a_kept_block (void)
{
  static void *blocks[N_BLOCKS];
  void *top;

  for (int i = 0; i < N_BLOCKS; i++)
    memset (blocks[i] = malloc (BLOCK), 1, BLOCK);
  top = malloc (64);
  for (int i = 0; i < N_BLOCKS; i++)
    free (blocks[i]);
  return top;
}

int
main (void)
{
  tidemark_step ("baseline");
  target_keep (free_under_a_kept_block ());
  tidemark_step ("freed");
  printf ("done\n");
  return 0;
}
