/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * toggled-free: a fork's child that marks no steps holds 4 MiB, then frees
 * it, then takes it again, one change between each two of its parent's
 * step ends.
 *
 * The child takes 64 blocks of 64 KiB (at least the sampling mean: each
 * one recorded, whatever the draw), writes them whole and frees them,
 * with a block after them, so that glibc holds their pages free; then, told by its parent through a
 * pipe, takes them again (4 MiB of heap, as much less free) or frees them
 * (the other way), and 256 KiB more that it keeps, and says it is done.
 * The 4 MiB stay resident: its heap and its allocator's free bytes move
 * 4 MiB against each other at every step, its private memory by 256 KiB.
 * The parent marks a step after each change, 8 steps, and waits 100 ms
 * before the next order.  The child then exits 0, the parent prints
 * "done" and exits 0.
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
#define N_BLOCKS 64
#define BLOCK    (64 * KIB)
#define N_STEPS  8
#define KEPT     (256 * KIB)

static void *blocks[N_BLOCKS];

/* 256 KiB more, kept: the private memory moves at every step, so that
 * every step end has a reading of its own. */
static TARGET_NOINLINE void
grow (void)
{
  void *kept = malloc (KEPT);

  if (kept == NULL)
    exit (2);
  memset (kept, 1, KEPT);
  target_keep (kept);
}

/* The child: a change for each byte its parent sends, a byte back when
 * done; the end of the pipe ends it. */
static void
serve (int orders,
       int done)
{
  char order;
  int held = 0;
  void *fence;

  /* A block after them: freed, they are free chunks that glibc keeps,
   * not the top of its heap, which it would give back. */
  target_take_blocks (blocks, N_BLOCKS, BLOCK);
  fence = malloc (64);
  target_keep (fence);
  target_free_blocks (blocks, N_BLOCKS);
  while (read (orders, &order, 1) == 1)
    {
      if (held)
        target_free_blocks (blocks, N_BLOCKS);
      else
        target_take_blocks (blocks, N_BLOCKS, BLOCK);
      held = !held;
      grow ();
      if (write (done, &order, 1) != 1)
        _exit (3);
    }
  _exit (0);
}

int
main (void)
{
  int to_child[2], from_child[2];
  void *fence;
  pid_t child;
  int status;

  /* Pages of 4 KiB, whatever the machine's transparent huge pages. */
  prctl (PR_SET_THP_DISABLE, 1, 0, 0, 0);
  fence = malloc (64);
  target_keep (fence);
  fflush (stdout);
  if (pipe (to_child) != 0 || pipe (from_child) != 0)
    return 1;
  child = fork ();
  if (child < 0)
    return 1;
  if (child == 0)
    {
      close (to_child[1]);
      close (from_child[0]);
      serve (to_child[0], from_child[1]);
    }
  close (to_child[0]);
  close (from_child[1]);
  for (int k = 1; k <= N_STEPS; k++)
    {
      char order = 'x';

      if (write (to_child[1], &order, 1) != 1 || read (from_child[0], &order, 1) != 1)
        return 1;
      tidemark_step (k % 2 == 1 ? "taken" : "freed");
      /* The child's figures as of this step end come from its flusher,
       * asked by the recorder's reading: they must find it as it was. */
      target_sleep_ms (100);
    }
  close (to_child[1]);
  if (waitpid (child, &status, 0) != child || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return 1;
  free (fence);
  printf ("done\n");
  return 0;
}
