/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * preload-target.c: a small program that test-preload-e2e runs under
 * libtidemark-preload.so.  Every allocation the test looks for has a size
 * that nothing else in the program uses.
 *
 *   preload-target basic   known allocations, frees, steps, scopes,
 *                          threads and a forked child
 *   preload-target storm   8 threads, STORM_PER_THREAD allocations each,
 *                          sizes STORM_BASE + thread * STORM_PER_THREAD + i
 *   preload-target chatty  prints, allocates and sleeps for about 400 ms;
 *                          exits with status 3
 *   preload-target hang    allocates KILL_SIZE, says "ready" and sleeps
 *                          until killed
 */
#include "config.h"

#include "preload-target.h"

#include "tidemark.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;

__attribute__ ((noinline, noipa)) static void
target_known_allocs (void **out)
{
  for (int i = 0; i < KNOWN_N; i++)
    {
      out[i] = malloc (KNOWN_BASE + i);
      memset (out[i], 1, 16);
    }
}

__attribute__ ((noinline, noipa)) static void *
target_scoped_alloc (void)
{
  void *p = malloc (SCOPED_SIZE);

  memset (p, 2, 16);
  return p;
}

static void *
thread_main (void *data)
{
  size_t size = THREAD_BASE + (size_t) (uintptr_t) data;

  for (int i = 0; i < THREAD_ALLOCS; i++)
    {
      void *p = malloc (size);

      sink = p;  /* shared by the threads: free p, not sink */
      free (p);
    }
  return NULL;
}

static void
child_main (void)
{
  for (int i = 0; i < CHILD_ALLOCS; i++)
    {
      void *p = malloc (CHILD_SIZE);

      sink = p;
      free (p);
    }
  tidemark_step ("child-step");
  exit (0);
}

static int
run_basic (void)
{
  pthread_t threads[THREAD_N];
  void *known[KNOWN_N];
  void *scoped;
  pid_t pid;
  int status;

  printf ("known_fn %p\n", (void *) (uintptr_t) target_known_allocs);
  printf ("scoped_fn %p\n", (void *) (uintptr_t) target_scoped_alloc);
  fflush (stdout);
  target_known_allocs (known);
  for (int i = 0; i < KNOWN_FREED; i++)
    printf ("freed %p\n", known[i]);
  fflush (stdout);
  for (int i = 0; i < KNOWN_FREED; i++)
    free (known[i]);
  tidemark_step ("warmup");
  tidemark_scope_push ("outer");
  tidemark_scope_push ("inner");
  scoped = target_scoped_alloc ();
  tidemark_scope_pop ();
  tidemark_scope_pop ();
  for (uintptr_t t = 0; t < THREAD_N; t++)
    pthread_create (&threads[t], NULL, thread_main, (void *) t);
  for (int t = 0; t < THREAD_N; t++)
    pthread_join (threads[t], NULL);
  tidemark_step ("after-threads");
  pid = fork ();
  if (pid == 0)
    child_main ();
  waitpid (pid, &status, 0);
  tidemark_step (NULL);
  free (scoped);
  for (int i = KNOWN_FREED; i < KNOWN_N; i++)
    free (known[i]);
  printf ("child %d status %d\n", (int) pid, WIFEXITED (status) ? WEXITSTATUS (status) : -1);
  return 0;
}

static void *
storm_main (void *data)
{
  size_t base = STORM_BASE + (size_t) (uintptr_t) data * STORM_PER_THREAD;

  for (size_t i = 0; i < STORM_PER_THREAD; i++)
    {
      char *p = malloc (base + i);

      /* Stored to a volatile, or the compiler drops the malloc/free pair;
       * freed through p: sink is shared by every thread, and freeing what
       * it holds freed another thread's block (a double free, 1 run in 10). */
      sink = p;
      p[0] = 1;
      free (p);
    }
  return NULL;
}

static int
run_storm (void)
{
  pthread_t threads[STORM_THREADS];

  for (uintptr_t t = 0; t < STORM_THREADS; t++)
    pthread_create (&threads[t], NULL, storm_main, (void *) t);
  for (int t = 0; t < STORM_THREADS; t++)
    pthread_join (threads[t], NULL);
  printf ("storm %d\n", STORM_THREADS * STORM_PER_THREAD);
  return 0;
}

static int
run_chatty (void)
{
  struct timespec ms10 = { 0, 10 * 1000 * 1000 };
  unsigned long sum = 0;

  for (int iter = 0; iter < 40; iter++)
    {
      for (int i = 0; i < 200; i++)
        {
          unsigned char *p = malloc (64 + i * 37);

          sink = p;
          p[0] = (unsigned char) i;
          sum += p[0];
          free (p);
        }
      tidemark_step ("chatty");
      printf ("iter %d sum %lu\n", iter, sum);
      fflush (stdout);
      nanosleep (&ms10, NULL);
    }
  return 3;
}

static int
run_hang (void)
{
  sink = malloc (KILL_SIZE);
  printf ("ready\n");
  fflush (stdout);
  for (;;)
    pause ();
  return 0;
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 2 && strcmp (argv[1], "basic") == 0)
    return run_basic ();
  if (argc == 2 && strcmp (argv[1], "storm") == 0)
    return run_storm ();
  if (argc == 2 && strcmp (argv[1], "chatty") == 0)
    return run_chatty ();
  if (argc == 2 && strcmp (argv[1], "hang") == 0)
    return run_hang ();
  fprintf (stderr, "usage: %s basic|storm|chatty|hang\n", argv[0]);
  return 2;
}
