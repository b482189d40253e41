/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * alloc-storm: 8 threads, each doing N (default 200000, --iterations N)
 * malloc/free cycles of 16 .. 1024 bytes with 64 blocks live per thread,
 * then leaking exactly 100 blocks of 1000 bytes from storm_leak_per_thread.
 * Prints a checksum of the work, so that a changed result shows.  Also the
 * benchmark program for the preload's overhead.
 *
 * --wait: print "waiting" and wait for a line on stdin before the work
 * starts, so that a profiler can attach to the process once it has started
 * (bench/bench-attach.py).
 *
 * --hold: once the work is done, print "cpu NS" (the CPU time that the
 * program used so far, all its threads) and "holding" on stderr, and wait
 * for a line on stdin before exiting, so that a test can measure the
 * recorder at a moment when the program is known to be alive.
 */
#include <pthread.h>
#include <sys/resource.h>

#include "tidemark.h"
#include "target-util.h"

#define STORM_THREADS      8
#define STORM_LIVE_WINDOW  64
#define STORM_LEAKS        100
#define STORM_LEAK_SIZE    1000

typedef struct
{
  int      index;
  long     iterations;
  uint64_t checksum;
} StormThread;

static void *storm_leaks[STORM_THREADS][STORM_LEAKS];

TARGET_NOINLINE void
storm_leak_per_thread (int index)
{
  for (int i = 0; i < STORM_LEAKS; i++)
    {
      char *p = malloc (STORM_LEAK_SIZE);

      memset (p, index, STORM_LEAK_SIZE);
      storm_leaks[index][i] = p;
    }
}

/* Frees the oldest block of the window, reading it back into the sum. */
static uint64_t
storm_retire (unsigned char *p,
              size_t         size)
{
  uint64_t sum;

  if (p == NULL)
    return 0;
  sum = p[0] * 31u + p[size - 1];
  free (p);
  return sum;
}

TARGET_NOINLINE void
storm_churn (StormThread *thread)
{
  unsigned char *live[STORM_LIVE_WINDOW] = { NULL };
  size_t sizes[STORM_LIVE_WINDOW] = { 0 };
  uint32_t state = 77u + (uint32_t) thread->index;
  uint64_t sum = 0;

  for (long it = 0; it < thread->iterations; it++)
    {
      int slot = it % STORM_LIVE_WINDOW;
      size_t size = 16 + target_random (&state) % 1009;

      sum += storm_retire (live[slot], sizes[slot]);
      live[slot] = malloc (size);
      sizes[slot] = size;
      live[slot][0] = (unsigned char) it;
      live[slot][size - 1] = (unsigned char) (size + thread->index);
      sum = sum * 1099511628211u + size;
    }
  for (int slot = 0; slot < STORM_LIVE_WINDOW; slot++)
    sum += storm_retire (live[slot], sizes[slot]);
  thread->checksum = sum;
}

static void *
storm_thread_main (void *data)
{
  StormThread *thread = data;

  storm_churn (thread);
  storm_leak_per_thread (thread->index);
  return NULL;
}

static int
storm_has_flag (int         argc,
                char      **argv,
                const char *name)
{
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], name) == 0)
      return 1;
  return 0;
}

static void
storm_wait_for_go (void)
{
  char line[64];

  printf ("waiting\n");
  fflush (stdout);
  if (fgets (line, sizeof line, stdin) == NULL)
    return;
}

static void
storm_hold (void)
{
  struct rusage usage;
  char line[64];

  if (getrusage (RUSAGE_SELF, &usage) != 0)
    return;
  fprintf (stderr, "cpu %lld\nholding\n",
           (long long) (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000LL
           + (long long) (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000LL);
  fflush (stderr);
  if (fgets (line, sizeof line, stdin) == NULL)
    return;
}

int
main (int   argc,
      char *argv[])
{
  long iterations = target_int_option (argc, argv, "--iterations", 200000);
  StormThread threads[STORM_THREADS];
  pthread_t ids[STORM_THREADS];
  uint64_t checksum = 0;

  if (storm_has_flag (argc, argv, "--wait"))
    storm_wait_for_go ();
  for (int i = 0; i < STORM_THREADS; i++)
    {
      threads[i] = (StormThread) { i, iterations, 0 };
      if (pthread_create (&ids[i], NULL, storm_thread_main, &threads[i]) != 0)
        return 1;
    }
  /* Combined in thread order, so the result does not depend on scheduling. */
  for (int i = 0; i < STORM_THREADS; i++)
    {
      pthread_join (ids[i], NULL);
      checksum = checksum * 31u + threads[i].checksum;
    }
  tidemark_step (NULL);

  printf ("alloc-storm checksum %016llx\n", (unsigned long long) checksum);
  fflush (stdout);
  if (storm_has_flag (argc, argv, "--hold"))
    storm_hold ();
  return 0;
}
