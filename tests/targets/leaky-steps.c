/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * leaky-steps: a training-loop-shaped program with two known leaks.
 *
 * Steps 1..N (default 10), each ended by tidemark_step():
 *   every step   churn_scratch_buffers: 200 blocks of 64 B .. 256 KiB,
 *                allocated and freed within the step;
 *   steps >= 4   leak_feature_cache: 96 blocks of 16384 B = 1,572,864 B kept
 *                (--feature-blocks N changes the 96);
 *   steps >= 5   leak_big_tensor: one 4 MiB block kept;
 *   step 6       spike_temporary_batch: 8 MiB, freed at the start of step 7
 *                by release_temporary_batch (a spike, not a leak).
 *
 * --fixed is the program after the fix: drop_caches frees both leaks'
 * blocks at the end of each step, so nothing is retained from one step to
 * the next (the spike stays).
 */
#include "tidemark.h"
#include "target-util.h"

#define FEATURE_BLOCKS      96
#define FEATURE_BLOCK_SIZE  16384
#define BIG_TENSOR_SIZE     (4u << 20)
#define SPIKE_SIZE          (8u << 20)
#define CHURN_BLOCKS        200

/* Leaked blocks stay reachable through a list threaded through them. */
typedef struct Block
{
  struct Block *next;
} Block;

static Block *feature_cache;
static Block *big_tensors;
static void *temporary_batch;

static long feature_blocks = FEATURE_BLOCKS;

TARGET_NOINLINE void
leak_feature_cache (int step)
{
  for (long i = 0; i < feature_blocks; i++)
    {
      Block *block = malloc (FEATURE_BLOCK_SIZE);

      memset (block, step, FEATURE_BLOCK_SIZE);
      block->next = feature_cache;
      feature_cache = block;
    }
}

TARGET_NOINLINE void
leak_big_tensor (int step)
{
  Block *block = malloc (BIG_TENSOR_SIZE);

  memset (block, step, BIG_TENSOR_SIZE);
  block->next = big_tensors;
  big_tensors = block;
}

TARGET_NOINLINE void
churn_scratch_buffers (int step)
{
  void *blocks[CHURN_BLOCKS];
  uint32_t state = 1000u + (uint32_t) step;

  /* Log-uniform sizes in [64 B, 256 KiB), all live at once, then freed. */
  for (int i = 0; i < CHURN_BLOCKS; i++)
    {
      size_t base = (size_t) 64 << (target_random (&state) % 12);
      size_t size = base + target_random (&state) % base;
      char *p = malloc (size);

      p[0] = (char) i;
      p[size - 1] = (char) step;
      blocks[i] = p;
    }
  for (int i = 0; i < CHURN_BLOCKS; i++)
    {
      target_keep (blocks[i]);
      free (blocks[i]);
    }
}

static void
free_list (Block **list)
{
  while (*list != NULL)
    {
      Block *next = (*list)->next;

      free (*list);
      *list = next;
    }
}

TARGET_NOINLINE void
drop_caches (void)
{
  free_list (&feature_cache);
  free_list (&big_tensors);
}

TARGET_NOINLINE void
spike_temporary_batch (void)
{
  temporary_batch = malloc (SPIKE_SIZE);
  memset (temporary_batch, 0x5a, SPIKE_SIZE);
}

TARGET_NOINLINE void
release_temporary_batch (void)
{
  free (temporary_batch);
  temporary_batch = NULL;
}

int
main (int   argc,
      char *argv[])
{
  long n_steps = target_int_option (argc, argv, "--steps", 10);
  int fixed = 0;

  for (int i = 1; i < argc; i++)
    fixed |= strcmp (argv[i], "--fixed") == 0;

  feature_blocks = target_int_option (argc, argv, "--feature-blocks", FEATURE_BLOCKS);

  for (int step = 1; step <= n_steps; step++)
    {
      if (temporary_batch != NULL)
        release_temporary_batch ();
      churn_scratch_buffers (step);
      if (step >= 4)
        leak_feature_cache (step);
      if (step >= 5)
        leak_big_tensor (step);
      if (step == 6)
        spike_temporary_batch ();
      if (fixed)
        drop_caches ();
      tidemark_step (NULL);
    }

  printf ("leaky-steps done\n");
  return 0;
}
