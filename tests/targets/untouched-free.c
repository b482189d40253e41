/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * untouched-free: free memory that malloc has taken from the system but
 * never touched, then touched, one step each.
 *
 *   step 1  nothing: the baseline;
 *   step 2  "reserve": 128 blocks of 64 KiB (below the mmap threshold:
 *           from the brk heap), a small block after them that keeps the
 *           heap from shrinking, all but that one freed again: 8 MiB more
 *           free in malloc, of which only the chunk headers' pages, one
 *           in 16, were ever touched;
 *   step 3  "write": the same 128 blocks again, from that free memory,
 *           written whole and freed: 8 MiB free still, now all resident.
 *
 * Then it exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "target-util.h"
#include "tidemark.h"

#define KIB      1024
#define N_BLOCKS 128
#define BLOCK    (64 * KIB)

static void *blocks[N_BLOCKS];

static TARGET_NOINLINE void
take_blocks (int write_them)
{
  for (int i = 0; i < N_BLOCKS; i++)
    {
      if ((blocks[i] = malloc (BLOCK)) == NULL)
        exit (2);
      if (write_them)
        memset (blocks[i], 1, BLOCK);
      target_keep (blocks[i]);
    }
}

static void
free_blocks (void)
{
  for (int i = 0; i < N_BLOCKS; i++)
    free (blocks[i]);
}

int
main (void)
{
  void *fence;

  /* Pages of 4 KiB, whatever the machine's transparent huge pages. */
  prctl (PR_SET_THP_DISABLE, 1, 0, 0, 0);
  tidemark_step ("baseline");

  take_blocks (0);
  fence = malloc (64);
  target_keep (fence);
  free_blocks ();
  tidemark_step ("reserve");

  take_blocks (1);
  free_blocks ();
  tidemark_step ("write");

  free (fence);
  printf ("done\n");
  return 0;
}
