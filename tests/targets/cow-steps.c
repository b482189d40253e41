/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * cow-steps: a forked child whose copy-on-write grows the same in every
 * step, the shape of a leak, made of a class of resident memory rather
 * than of blocks.
 *
 *   step 1  the parent's 32 MiB of private pages, written;
 *   step 2  a forked child that waits: the pages are shared now;
 *   steps 3-6  the child writes another 8 MiB of them in each: 8 MiB
 *           copied on write a step.
 *
 * The child ends after step 6; the parent waits for it and exits 0.
 *
 * `cow-steps parent-writes`: pages that the child holds alone, some
 * because it wrote them, some because its parent did.  Step 3: the child
 * writes the first 8 MiB (its copies), then the parent the next 12 MiB
 * (the child's pages there are the ones it inherited, its alone now);
 * step 4: the child exits, and the parent waits for it.
 *
 * `cow-steps idle-child`: the child writes nothing; the parent marks
 * steps 3-5 100 ms apart while it waits, its memory the same at each.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tidemark.h"

#define MIB          (1024 * 1024)
#define SHARED_BYTES (32 * MIB)
#define STEP_BYTES   (8 * MIB)
#define COPY_STEPS   (SHARED_BYTES / STEP_BYTES)
#define PARENT_BYTES (12 * MIB)

/* The child: at each "g", writes the next STEP_BYTES and says "w"; at
 * "e", exits. */
static void
copy_a_slice_a_step (char *shared,
                     int   go,
                     int   ready)
{
  char c = 0;

  if (write (ready, "r", 1) != 1)
    _exit (3);
  for (int k = 0; k < COPY_STEPS; k++)
    {
      if (read (go, &c, 1) != 1)
        _exit (3);
      if (c == 'e')
        _exit (0);
      memset (shared + (size_t) k * STEP_BYTES, 4, STEP_BYTES);
      if (write (ready, "w", 1) != 1)
        _exit (3);
    }
  if (read (go, &c, 1) != 1)
    _exit (3);
  _exit (0);
}

int
main (int    argc,
      char **argv)
{
  char *shared = mmap (NULL, SHARED_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int parent_writes = argc > 1 && strcmp (argv[1], "parent-writes") == 0;
  int idle_child = argc > 1 && strcmp (argv[1], "idle-child") == 0;
  int go[2], ready[2];
  char c = 0;
  pid_t child;
  int status;

  if (shared == MAP_FAILED || pipe (go) != 0 || pipe (ready) != 0)
    return 2;
  madvise (shared, SHARED_BYTES, MADV_NOHUGEPAGE);
  memset (shared, 3, SHARED_BYTES);
  tidemark_step ("written");

  child = fork ();
  if (child < 0)
    return 2;
  if (child == 0)
    copy_a_slice_a_step (shared, go[0], ready[1]);
  if (read (ready[0], &c, 1) != 1)
    return 2;
  tidemark_step ("fork");

  for (int k = 0; idle_child && k < 3; k++)
    {
      usleep (100 * 1000);
      tidemark_step ("idle");
    }
  for (int k = 0; !idle_child && k < (parent_writes ? 1 : COPY_STEPS); k++)
    {
      if (write (go[1], "g", 1) != 1 || read (ready[0], &c, 1) != 1)
        return 2;
      if (parent_writes)
        memset (shared + STEP_BYTES, 5, PARENT_BYTES);
      tidemark_step (parent_writes ? "writes" : "copy");
    }

  if (write (go[1], "e", 1) != 1 || waitpid (child, &status, 0) != child)
    return 2;
  if (parent_writes)
    tidemark_step ("reaped");
  printf ("done\n");
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : 1;
}
