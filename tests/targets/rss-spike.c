/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * rss-spike: resident memory that rises and falls far quicker than a
 * poll.  Sleeps 60 ms, maps 48 MiB with MAP_POPULATE (the kernel makes
 * every page resident in the one call) and unmaps it at once, sleeps
 * 60 ms more and prints "rss-spike done".  Its RSS peaks at 48 MiB over
 * what it held, for a few milliseconds.
 */
#include <sys/mman.h>

#include "target-util.h"

#define SPIKE_BYTES ((size_t) 48 << 20)

TARGET_NOINLINE void
touch_briefly (void)
{
  void *spike = mmap (NULL, SPIKE_BYTES, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

  if (spike == MAP_FAILED)
    exit (2);
  munmap (spike, SPIKE_BYTES);
}

int
main (void)
{
  target_sleep_ms (60);
  touch_briefly ();
  target_sleep_ms (60);
  puts ("rss-spike done");
  return 0;
}
