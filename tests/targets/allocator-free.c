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
 *
 * `allocator-free after-last-step` keeps the 64 MiB in step 2 and frees
 * them under a kept block after it, as the program ends: only its last
 * reading, in its exit path, sees them free.
 *
 * `allocator-free grow-at-exit` writes 64 MiB after its last step and
 * keeps them: only its last reading sees them.
 */
#include <stdlib.h>
#include <string.h>

#include "target-util.h"
#include "tidemark.h"

#define BLOCK    (64 * 1024)
#define N_BLOCKS 1024

#define GROW_BLOCKS 256     /* 16 MiB */
#define GROW_STEPS  4

static void *blocks[N_BLOCKS];

static TARGET_NOINLINE void
write_blocks (int n_blocks)
{
  for (int i = 0; i < n_blocks; i++)
    memset (blocks[i] = malloc (BLOCK), 1, BLOCK);
}

static void
free_blocks (int n_blocks)
{
  for (int i = 0; i < n_blocks; i++)
    free (blocks[i]);
}

static TARGET_NOINLINE void *
free_under_a_kept_block (int n_blocks)
{
  void *top;

  write_blocks (n_blocks);
  top = malloc (64);
  free_blocks (n_blocks);
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
  else if (argc > 1 && strcmp (argv[1], "after-last-step") == 0)
    {
      /* Idle while the recorder reads the baseline's end, so that it
       * stands, and not so long that step 2's end, too soon after it, is
       * read: it is left to the exit reading. */
      target_sleep_ms (5);
      write_blocks (N_BLOCKS);
      target_keep (malloc (64));
      tidemark_step ("kept");
      free_blocks (N_BLOCKS);
    }
  else if (argc > 1 && strcmp (argv[1], "grow-at-exit") == 0)
    {
      tidemark_step ("last");
      write_blocks (N_BLOCKS);
    }
  else
    {
      target_keep (free_under_a_kept_block (N_BLOCKS));
      tidemark_step ("freed");
    }
  printf ("done\n");
  return 0;
}
