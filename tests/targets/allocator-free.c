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
 *
 * `allocator-free grow` instead frees 16 MiB more in each step than in the
 * one before, under a block kept in each: the allocator's free memory
 * grows step over step, 16 MiB a step from step 2 to step 5.
 */
#include <stdlib.h>
#include <string.h>

#include "target-util.h"
#include "tidemark.h"

#define BLOCK    (64 * 1024)
#define N_BLOCKS 1024

#define GROW_BLOCKS 256     /* 16 MiB */
#define GROW_STEPS  4

static TARGET_NOINLINE void *
free_under_a_kept_block (int n_blocks)
{
  static void *blocks[N_BLOCKS];
  void *top;

  for (int i = 0; i < n_blocks; i++)
    memset (blocks[i] = malloc (BLOCK), 1, BLOCK);
  top = malloc (64);
  for (int i = 0; i < n_blocks; i++)
    free (blocks[i]);
  return top;
}

int
main (int    argc,
      char **argv)
{
  tidemark_step ("baseline");
  if (argc > 1 && strcmp (argv[1], "grow") == 0)
    for (int k = 1; k <= GROW_STEPS; k++)
      {
        target_keep (free_under_a_kept_block (k * GROW_BLOCKS));
        tidemark_step ("freed more");
      }
  else
    {
      target_keep (free_under_a_kept_block (N_BLOCKS));
      tidemark_step ("freed");
    }
  printf ("done\n");
  return 0;
}
