/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * cow-parent: pages that a forked child holds alone, some because it
 * wrote them, some because its parent did.
 *
 *   step 1  the parent's 32 MiB of private pages, written;
 *   step 2  a forked child that waits: the pages are shared now;
 *   step 3  the child writes the first 8 MiB of them (its copies), and
 *           then the parent writes the next 12 MiB (the child's pages
 *           there are the ones it inherited, its alone now);
 *   step 4  the child exits, and the parent waits for it.
 *
 * Then the parent prints "done" and exits 0.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tidemark.h"

#define MIB          (1024 * 1024)
#define SHARED_BYTES (32 * MIB)
#define CHILD_BYTES  (8 * MIB)
#define PARENT_BYTES (12 * MIB)

/* The child: at "g", writes its slice and says "w"; at "e", exits. */
static void
write_own_slice (char *shared,
                 int   go,
                 int   ready)
{
  char c = 0;

  if (write (ready, "r", 1) != 1 || read (go, &c, 1) != 1)
    _exit (3);
  memset (shared, 4, CHILD_BYTES);
  if (write (ready, "w", 1) != 1 || read (go, &c, 1) != 1)
    _exit (3);
  _exit (0);
}

int
main (void)
{
  char *shared = mmap (NULL, SHARED_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
    write_own_slice (shared, go[0], ready[1]);
  if (read (ready[0], &c, 1) != 1)
    return 2;
  tidemark_step ("fork");

  if (write (go[1], "g", 1) != 1 || read (ready[0], &c, 1) != 1)
    return 2;
  memset (shared + CHILD_BYTES, 5, PARENT_BYTES);
  tidemark_step ("writes");

  if (write (go[1], "e", 1) != 1 || waitpid (child, &status, 0) != child)
    return 2;
  tidemark_step ("reaped");
  printf ("done\n");
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : 1;
}
