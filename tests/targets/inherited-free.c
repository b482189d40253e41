/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * inherited-free: a fork's child frees the blocks it inherited.
 *
 * The parent takes 96 blocks of 96 KiB (below the mmap threshold: from
 * the brk heap; above the sampling mean: each one recorded, whatever the
 * draw), writes them whole, and forks.  The child:
 *
 *   step 1  "baseline": nothing;
 *   step 2  "free": frees the 96 blocks, 9 MiB that its allocator now
 *           holds free on pages it shares with its parent, of which it
 *           copies only those that the free writes.
 *
 * A block after them keeps the heap from shrinking.  The child exits 0,
 * then the parent prints "done" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target-util.h"
#include "tidemark.h"

#define KIB      1024
#define N_BLOCKS 96
#define BLOCK    (96 * KIB)

static void *blocks[N_BLOCKS];

int
main (void)
{
  void *fence;
  pid_t child;
  int status;

  /* Pages of 4 KiB, whatever the machine's transparent huge pages. */
  prctl (PR_SET_THP_DISABLE, 1, 0, 0, 0);
  target_take_blocks (blocks, N_BLOCKS, BLOCK);
  fence = malloc (64);
  target_keep (fence);
  fflush (stdout);
  child = fork ();
  if (child < 0)
    return 1;
  if (child == 0)
    {
      tidemark_step ("baseline");
      target_free_blocks (blocks, N_BLOCKS);
      tidemark_step ("free");
      _exit (0);
    }
  if (waitpid (child, &status, 0) != child || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return 1;
  target_free_blocks (blocks, N_BLOCKS);
  free (fence);
  printf ("done\n");
  return 0;
}
