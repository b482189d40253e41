/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * heap-spikes: a heap that rises for a moment, far less than a poll.
 * Keeps one block of 8 MiB (keep_steady_block) for its whole run, then
 * 10 times: allocates a temporary block of 64 + i MiB (i = 0..9) in
 * make_temporary_buffer, writes its first byte and frees it at once, and
 * sleeps 70 ms (more than the 64 ms in which the recorder keeps a
 * counter's extremes).  The live heap's peak is 8 + 73 = 81 MiB, during the last
 * temporary block; between them it is 8 MiB.  Prints "heap-spikes done".
 */
#include "target-util.h"

#define STEADY_SIZE ((size_t) 8 << 20)
#define SPIKE_MIB   64
#define N_SPIKES    10

static char *steady;

TARGET_NOINLINE void
keep_steady_block (void)
{
  if ((steady = malloc (STEADY_SIZE)) == NULL)
    exit (2);
  steady[0] = 1;
}

TARGET_NOINLINE void
make_temporary_buffer (size_t size)
{
  char *buffer = malloc (size);

  if (buffer == NULL)
    exit (2);
  buffer[0] = 1;
  target_keep (buffer);
  free (buffer);
}

int
main (void)
{
  keep_steady_block ();
  for (int i = 0; i < N_SPIKES; i++)
    {
      make_temporary_buffer ((size_t) (SPIKE_MIB + i) << 20);
      target_sleep_ms (70);
    }
  target_keep (steady);
  puts ("heap-spikes done");
  return 0;
}
