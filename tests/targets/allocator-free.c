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
 *
 * `allocator-free worker`: a forked child that marks no steps, as a
 * DataLoader worker does.
 *   before the fork  the parent holds 16 MiB free, which the child
 *           inherits on shared pages;
 *   step 2  ends with the child forked and idle;
 *   step 3  the child writes 48 MiB of blocks, the first 16 MiB of them in
 *           the chunks it inherited, and frees them under a kept block:
 *           16 MiB copied on write, 32 MiB more held free, and the child
 *           idles; the parent waits half a second before the step's end.
 * The child exits after step 3's end.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target-util.h"
#include "tidemark.h"

#define BLOCK    (64 * 1024)
#define N_BLOCKS 1024

#define GROW_BLOCKS 256     /* 16 MiB */
#define GROW_STEPS  4

static void *blocks[N_BLOCKS];

static TARGET_NOINLINE void *
free_under_a_kept_block (int n_blocks)
{
  void *top;

  target_take_blocks (blocks, n_blocks, BLOCK);
  top = malloc (64);
  target_free_blocks (blocks, n_blocks);
  return top;
}

/* Long enough for the flusher of a process that marks no steps to send
 * what its allocator holds free (every 100 ms), on a loaded machine too. */
#define WORKER_IDLE_MS 500

static void
await (int fd)
{
  char c;

  if (read (fd, &c, 1) != 1)
    _exit (3);
}

static void
signal_to (int fd)
{
  if (write (fd, "x", 1) != 1)
    _exit (3);
}

static void
worker (int go,
        int done)
{
  await (go);
  target_keep (free_under_a_kept_block (3 * GROW_BLOCKS));
  signal_to (done);
  await (go);
  _exit (0);
}

static void
fork_a_worker (void)
{
  int go[2], done[2];
  pid_t pid;

  target_keep (free_under_a_kept_block (GROW_BLOCKS));
  if (pipe (go) != 0 || pipe (done) != 0)
    exit (2);
  pid = fork ();
  if (pid == 0)
    worker (go[0], done[1]);
  target_sleep_ms (WORKER_IDLE_MS);
  tidemark_step ("forked");
  signal_to (go[1]);
  await (done[0]);
  target_sleep_ms (WORKER_IDLE_MS);
  tidemark_step ("freed");
  signal_to (go[1]);
  if (waitpid (pid, NULL, 0) != pid)
    exit (2);
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
      target_take_blocks (blocks, N_BLOCKS, BLOCK);
      target_keep (malloc (64));
      tidemark_step ("kept");
      target_free_blocks (blocks, N_BLOCKS);
    }
  else if (argc > 1 && strcmp (argv[1], "worker") == 0)
    fork_a_worker ();
  else if (argc > 1 && strcmp (argv[1], "grow-at-exit") == 0)
    {
      tidemark_step ("last");
      target_take_blocks (blocks, N_BLOCKS, BLOCK);
    }
  else
    {
      target_keep (free_under_a_kept_block (N_BLOCKS));
      tidemark_step ("freed");
    }
  printf ("done\n");
  return 0;
}
