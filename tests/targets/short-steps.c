/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * short-steps: 300 steps of about 6 ms, each shorter than it takes the
 * recorder to meet a step marker and read the process, as a DDP rank's
 * are.  Each step keeps 256 KiB, and holds 4 MiB more from just before
 * its marker to just after it: a reading taken anywhere but at the step
 * end misses those 4 MiB.  Only a step end that waits for the recorder
 * can be read as it stands.
 */
#include <malloc.h>

#include "target-util.h"
#include "tidemark.h"

#define KIB          1024
#define STEPS        300
#define KEPT_BYTES   (256 * KIB)
#define PEAK_BYTES   (4096 * KIB)
#define WORK_NS      (5 * 1000 * 1000)
/* Blocks of 4 MiB always mapped, and unmapped when freed: glibc would
 * otherwise raise its threshold after the first free and keep them. */
#define MMAP_THRESHOLD (1024 * KIB)

static void *kept[STEPS];

static long long
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The step's work, with no memory moving. */
static void
spin (long long ns)
{
  long long until = now_ns () + ns;

  while (now_ns () < until)
    ;
}

int
main (void)
{
  mallopt (M_MMAP_THRESHOLD, MMAP_THRESHOLD);
  for (int step = 0; step < STEPS; step++)
    {
      void *peak;

      target_take_blocks (&kept[step], 1, KEPT_BYTES);
      target_take_blocks (&peak, 1, PEAK_BYTES);
      tidemark_step (NULL);
      free (peak);
      spin (WORK_NS);
    }
  target_free_blocks (kept, STEPS);
  puts ("done");
  return 0;
}
