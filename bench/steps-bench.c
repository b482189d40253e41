/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * steps-bench: a program that holds many live blocks while it marks
 * steps, as a large job does: it keeps LIVE blocks of 256 B (a model's
 * and a dataset's objects), then marks 100 steps, each some milliseconds
 * of work on a scratch buffer and a few short-lived blocks.  Under `record --all` every kept
 * block is recorded, as the sampled blocks of a job with a large heap
 * are, and each step end measures what of them is resident.  Prints a
 * checksum, so a profiler that changed the results would show.
 *
 *   steps-bench [LIVE]   (blocks kept, default 300000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tide-bench-random.h"
#include "tidemark.h"

#define BLOCK_BYTES    256
#define STEPS          100
#define STEP_BLOCKS    100
#define SCRATCH_BYTES  (1024 * 1024)
#define STEP_PASSES    16
#define DEFAULT_LIVE   300000

static uint64_t
step_work (uint32_t      *state,
           unsigned char *scratch)
{
  uint64_t checksum = 0;

  for (int pass = 0; pass < STEP_PASSES; pass++)
    for (size_t k = 0; k < SCRATCH_BYTES; k++)
      {
        scratch[k] = (unsigned char) (scratch[k] * 31 + k + pass);
        checksum += scratch[k];
      }

  for (int i = 0; i < STEP_BLOCKS; i++)
    {
      uint32_t r = tide_bench_next_random (state);
      size_t size = 16 + r % 1024;
      unsigned char *block = malloc (size);

      if (block == NULL)
        abort ();
      memset (block, (int) r, size);
      for (size_t k = 0; k < size; k += 64)
        checksum = checksum * 31 + block[k];
      free (block);
    }
  return checksum;
}

int
main (int    argc,
      char **argv)
{
  long live = argc > 1 ? atol (argv[1]) : DEFAULT_LIVE;
  unsigned char **kept;
  unsigned char *scratch = calloc (SCRATCH_BYTES, 1);
  uint32_t state = 0x9e3779b9u;
  uint64_t checksum = 0;

  if (live <= 0)
    {
      fprintf (stderr, "usage: steps-bench [LIVE]\n");
      return 2;
    }
  kept = malloc ((size_t) live * sizeof *kept);
  if (kept == NULL || scratch == NULL)
    return 1;
  for (long i = 0; i < live; i++)
    {
      kept[i] = malloc (BLOCK_BYTES);
      if (kept[i] == NULL)
        return 1;
      memset (kept[i], (int) i, BLOCK_BYTES);
    }
  for (int s = 0; s < STEPS; s++)
    {
      checksum += step_work (&state, scratch);
      checksum += kept[(size_t) s * 7919 % (size_t) live][0];
      tidemark_step (NULL);
    }
  for (long i = 0; i < live; i++)
    free (kept[i]);
  free (kept);
  free (scratch);
  printf ("steps-bench: %ld blocks kept, %d steps, checksum %llu\n", live, STEPS,
          (unsigned long long) checksum);
  return 0;
}
