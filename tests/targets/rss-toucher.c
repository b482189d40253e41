/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * rss-toucher: maps 64 MiB of anonymous memory (no huge pages) and in steps
 * 1..8 touches 4 MiB of new pages from touch_new_pages, one byte per page,
 * ending each step with tidemark_step and a 100 ms sleep: RSS grows by
 * exactly 4 MiB per step while the mapping stays the same.
 *
 *   --burst N   N small malloc/free pairs before the last step's marker,
 *               which keep a recorder in --all mode busy past the exit
 *   --end-sleep-ms N   sleep after the last step (default 100); with 0 it
 *               exits right after its marker, the mapping still in place
 *   --pause-each-step  after each step but the last, wait for a line on
 *               stdin instead of the 100 ms sleep: a test says when the
 *               recorder has measured the step
 */
#include <sys/mman.h>

#include "tidemark.h"
#include "target-util.h"

#define MAPPING_SIZE    (64u << 20)
#define TOUCH_PER_STEP  (4u << 20)
#define TOUCH_STEPS     8

TARGET_NOINLINE void
touch_new_pages (char  *start,
                 size_t size)
{
  long page = sysconf (_SC_PAGESIZE);

  for (size_t off = 0; off < size; off += page)
    start[off] = 1;
}

TARGET_NOINLINE void
burst_allocations (long n)
{
  for (long i = 0; i < n; i++)
    {
      void *p = malloc (32);

      target_keep (p);
      free (p);
    }
}

int
main (int   argc,
      char *argv[])
{
  long burst = target_int_option (argc, argv, "--burst", 0);
  long end_sleep_ms = target_int_option (argc, argv, "--end-sleep-ms", 100);
  int pause_each_step = 0;
  char *base = mmap (NULL, MAPPING_SIZE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--pause-each-step") == 0)
      pause_each_step = 1;
  if (base == MAP_FAILED)
    return 1;
  /* A huge page would make one touch fault in 2 MiB. */
  madvise (base, MAPPING_SIZE, MADV_NOHUGEPAGE);

  for (int step = 1; step <= TOUCH_STEPS; step++)
    {
      touch_new_pages (base + (size_t) (step - 1) * TOUCH_PER_STEP, TOUCH_PER_STEP);
      if (step == TOUCH_STEPS)
        burst_allocations (burst);
      tidemark_step (NULL);
      if (step == TOUCH_STEPS)
        target_sleep_ms (end_sleep_ms);
      else if (!pause_each_step)
        target_sleep_ms (100);
      else if (!target_read_line ())
        return 3;
    }

  printf ("rss-toucher done\n");
  fflush (stdout);
  /* Without the sleep, still mapped at exit: the last step's pages go
   * with the process. */
  if (end_sleep_ms > 0)
    munmap (base, MAPPING_SIZE);
  return 0;
}
