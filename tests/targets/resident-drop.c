/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * resident-drop: a malloc'd block and a mapping of 8 MiB each (no huge
 * pages), whose pages come and go over four steps, each step waiting for a
 * line on stdin (the test's word that the recorder has measured it):
 *
 *   1. both written whole: 16 MiB resident
 *   2. nothing changes: 16 MiB
 *   3. the mapping's pages dropped (MADV_DONTNEED): 8 MiB
 *   4. half the mapping written again: 12 MiB
 *
 * The recorder knows a block whole at one step end to be whole at the
 * next; a mapping's pages may go without a free, and must be read again.
 */
#include <sys/mman.h>

#include "tidemark.h"
#include "target-util.h"

#define BLOCK_SIZE (8u << 20)

TARGET_NOINLINE void
write_pages (char  *start,
             size_t size)
{
  long page = sysconf (_SC_PAGESIZE);

  for (size_t off = 0; off < size; off += page)
    start[off] = 1;
  /* A block that does not start on a page ends on one more. */
  start[size - 1] = 1;
}

TARGET_NOINLINE char *
malloc_block (void)
{
  return malloc (BLOCK_SIZE);
}

static int
end_step (void)
{
  tidemark_step (NULL);
  return target_read_line ();
}

int
main (void)
{
  char *mapping = mmap (NULL, BLOCK_SIZE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char *block = malloc_block ();

  if (mapping == MAP_FAILED || block == NULL)
    return 1;
  /* A huge page would bring 2 MiB in at one write. */
  madvise (mapping, BLOCK_SIZE, MADV_NOHUGEPAGE);
  madvise ((void *) (((uintptr_t) block + 4095) & ~(uintptr_t) 4095), BLOCK_SIZE - 4096,
           MADV_NOHUGEPAGE);

  write_pages (mapping, BLOCK_SIZE);
  write_pages (block, BLOCK_SIZE);
  if (!end_step () || !end_step ())
    return 3;
  madvise (mapping, BLOCK_SIZE, MADV_DONTNEED);
  if (!end_step ())
    return 3;
  write_pages (mapping, BLOCK_SIZE / 2);
  tidemark_step (NULL);

  printf ("resident-drop done\n");
  fflush (stdout);
  target_keep (block);
  return 0;
}
