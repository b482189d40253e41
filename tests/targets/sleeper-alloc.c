/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * sleeper-alloc: runs until killed.  Allocates 1 MiB from steady_growth
 * every 20 ms (touching its first page only) and ends a step every 100 ms.
 * Prints one line at start and one per step ("step N"), flushed, so a test
 * knows it is running and what it had done when it was killed.
 *
 * As a guard against a test that forgets to kill it, it exits with status 2
 * after --max-seconds (default 600).
 *
 * --term-status N: on SIGTERM, prints "sigterm after round R, step K" (R
 * blocks allocated, K steps ended) and exits with status N, so that a test
 * can tell that the signal reached the program itself and that its status
 * came back.
 */
#include <signal.h>

#include "tidemark.h"
#include "target-util.h"

#define GROWTH_SIZE      (1u << 20)
#define GROWTH_EVERY_MS  20
#define ALLOCS_PER_STEP  5

typedef struct Chunk
{
  struct Chunk *next;
} Chunk;

static Chunk *chunks;
static volatile sig_atomic_t got_sigterm;

static void
on_sigterm (int signum)
{
  (void) signum;
  got_sigterm = 1;
}

TARGET_NOINLINE void
steady_growth (void)
{
  Chunk *chunk = malloc (GROWTH_SIZE);

  memset (chunk, 's', 64);
  chunk->next = chunks;
  chunks = chunk;
}

int
main (int   argc,
      char *argv[])
{
  long max_seconds = target_int_option (argc, argv, "--max-seconds", 600);
  long max_rounds = max_seconds * (1000 / GROWTH_EVERY_MS);
  long term_status = target_int_option (argc, argv, "--term-status", -1);

  if (term_status >= 0)
    signal (SIGTERM, on_sigterm);
  printf ("sleeper-alloc running\n");
  fflush (stdout);

  for (long round = 1; round <= max_rounds; round++)
    {
      steady_growth ();
      if (round % ALLOCS_PER_STEP == 0)
        {
          tidemark_step (NULL);
          /* Printed after the step: a test knows what happened before a kill. */
          printf ("step %ld\n", round / ALLOCS_PER_STEP);
          fflush (stdout);
        }
      target_sleep_ms (GROWTH_EVERY_MS);
      if (got_sigterm)
        {
          printf ("sigterm after round %ld, step %ld\n", round, round / ALLOCS_PER_STEP);
          return (int) term_status;
        }
    }

  fprintf (stderr, "sleeper-alloc: not killed within %ld s\n", max_seconds);
  return 2;
}
