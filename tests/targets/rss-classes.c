/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * rss-classes: one step for each class of resident memory, so that a test
 * can read each class at the end of the step that made it.
 *
 *   step 1  nothing: the baseline;
 *   step 2  heap: 512 blocks of 64 KiB written and freed, with one block
 *           above them kept, so that glibc cannot trim its heap: 32 MiB that
 *           the allocator holds free;
 *   step 3  shmem: a 16 MiB memfd mapped shared and written;
 *   step 4  a forked child that waits: the 32 MiB of private pages written
 *           before the fork are now shared, so the parent's PSS drops;
 *   step 5  the child writes half of them: 16 MiB copied on write;
 *   step 6  the child exits, and the parent waits for it: what the two
 *           still shared is the parent's alone again.
 *
 * Then the parent exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target-util.h"
#include "tidemark.h"

#define MIB          (1024 * 1024)
#define BLOCK        (64 * 1024)
#define N_BLOCKS     512
#define SHMEM_BYTES  (16 * MIB)
#define SHARED_BYTES (32 * MIB)

static TARGET_NOINLINE void *
keep_free_heap (void)
{
  static void *blocks[N_BLOCKS];
  void *top;

  target_take_blocks (blocks, N_BLOCKS, BLOCK);
  top = malloc (64);
  target_free_blocks (blocks, N_BLOCKS);
  return top;
}

static TARGET_NOINLINE char *
map_shmem (void)
{
  int fd = memfd_create ("rss-classes", MFD_CLOEXEC);
  char *p;

  if (fd < 0 || ftruncate (fd, SHMEM_BYTES) != 0)
    exit (2);
  p = mmap (NULL, SHMEM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    exit (2);
  memset (p, 2, SHMEM_BYTES);
  close (fd);
  return p;
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
  tidemark_step ("baseline");

  target_keep (keep_free_heap ());
  tidemark_step ("heap");

  target_keep (map_shmem ());
  tidemark_step ("shmem");

  child = fork ();
  if (child < 0)
    return 2;
  if (child == 0)
    {
      if (write (ready[1], "r", 1) != 1 || read (go[0], &c, 1) != 1)
        _exit (3);
      memset (shared, 4, SHARED_BYTES / 2);
      if (write (ready[1], "w", 1) != 1 || read (go[0], &c, 1) != 1)
        _exit (3);
      _exit (0);
    }
  if (read (ready[0], &c, 1) != 1)
    return 2;
  tidemark_step ("fork");

  if (write (go[1], "g", 1) != 1 || read (ready[0], &c, 1) != 1)
    return 2;
  tidemark_step ("copy-on-write");

  if (write (go[1], "e", 1) != 1 || waitpid (child, &status, 0) != child)
    return 2;
  tidemark_step ("child exited");

  printf ("done\n");
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : 1;
}
