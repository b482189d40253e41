/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * churn-control: the shape of leaky-steps with no leak at all; a leak
 * detector must report nothing here.
 *
 * Steps 1..N (default 10), each ended by tidemark_step():
 *   every step   churn_scratch_buffers: 200 blocks of 64 B .. 256 KiB,
 *                allocated and freed within the step;
 *   steps < N    prefetch_next_batch: 1.5 MiB that lives into the next step
 *                and is freed at its start by release_prefetched_batch;
 *   step 6       spike_temporary_batch: 8 MiB, freed at the start of step 7.
 * At the end of step N everything allocated by the loop has been freed.
 */
#include "tidemark.h"
#include "target-util.h"

#define PREFETCH_SIZE  (1536u * 1024u)
#define SPIKE_SIZE     (8u << 20)
#define CHURN_BLOCKS   200

static void *prefetched_batch;
static void *temporary_batch;

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

TARGET_NOINLINE void
prefetch_next_batch (int step)
{
  prefetched_batch = malloc (PREFETCH_SIZE);
  memset (prefetched_batch, step, PREFETCH_SIZE);
}

TARGET_NOINLINE void
release_prefetched_batch (void)
{
  free (prefetched_batch);
  prefetched_batch = NULL;
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

  for (int step = 1; step <= n_steps; step++)
    {
      if (prefetched_batch != NULL)
        release_prefetched_batch ();
      if (temporary_batch != NULL)
        release_temporary_batch ();
      churn_scratch_buffers (step);
      if (step < n_steps)
        prefetch_next_batch (step);
      if (step == 6 && step < n_steps)
        spike_temporary_batch ();
      tidemark_step (NULL);
    }

  printf ("churn-control done\n");
  return 0;
}
