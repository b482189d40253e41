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
 *   preload-target family  every function of the malloc family, checked
 *                          for alignment, usable size and contents; small
 *                          blocks grown by realloc; a forked child that
 *                          frees a block of its parent's.  Prints
 *                          "fam WHAT POINTER SIZE" for each recorded
 *                          block, exits with status 1 on a failed check
 *   preload-target fold    blocks freed at once by the thread that made
 *                          them, by another thread, after a step, and one
 *                          freed by another thread whose address the first
 *                          thread gets again and frees itself.  Prints
 *                          "reuse FIRST SECOND" with the two addresses
 *   preload-target memo    stacks that a stack memo must tell apart, and
 *                          an allocation inside a hooked function (dlsym)
 *   preload-target memo-unload
 *                          runs of one stack, each after a dlclose
 *   preload-target sampler a known stream of small blocks, each freed at
 *                          once, for the sampler's estimates
 *   preload-target sampler-realloc
 *                          the same stream of blocks grown by realloc
 */
#include "config.h"

#include "preload-target.h"

#include "tidemark.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
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

static void *
free_in_thread (void *block)
{
  free (block);
  return NULL;
}

/* Frees @block on a thread of its own, and waits for it. */
static void
free_elsewhere (void *block)
{
  pthread_t thread;

  pthread_create (&thread, NULL, free_in_thread, block);
  pthread_join (thread, NULL);
}

/* Every case starts after a step, whose flush leaves this thread's buffer
 * empty: the flusher would send it only 50 ms later. */
static int
run_fold (void)
{
  uintptr_t first, second;
  void *block;

  tidemark_step ("same");
  sink = malloc (FOLD_SAME);
  free (sink);

  tidemark_step ("cross");
  sink = malloc (FOLD_CROSS);
  free_elsewhere (sink);

  tidemark_step ("step");
  sink = malloc (FOLD_STEP);
  tidemark_step ("after");
  free (sink);

  tidemark_step ("reuse");
  block = malloc (FOLD_REUSE);
  first = (uintptr_t) block;
  free_elsewhere (block);
  block = malloc (FOLD_REUSE);
  second = (uintptr_t) block;
  free (block);
  printf ("reuse %#" PRIxPTR " %#" PRIxPTR "\n", first, second);
  return 0;
}

static int
run_sampler (void)
{
  static const size_t sizes[SAMPLER_N_SIZES] = SAMPLER_SIZES;

  for (int round = 0; round < SAMPLER_ROUNDS; round++)
    for (int k = 0; k < SAMPLER_N_SIZES; k++)
      {
        sink = malloc (sizes[k]);
        memset (sink, k, 8);
        free (sink);
      }
  printf ("sampler ok\n");
  return 0;
}

static int
run_sampler_realloc (void)
{
  static const size_t sizes[SAMPLER_REALLOC_N_SIZES] = SAMPLER_REALLOC_SIZES;

  for (int round = 0; round < SAMPLER_ROUNDS; round++)
    {
      unsigned char *p = NULL;

      for (int k = 0; k < SAMPLER_REALLOC_N_SIZES; k++)
        {
          if ((p = realloc (p, sizes[k])) == NULL)
            {
              fprintf (stderr, "sampler-realloc: out of memory\n");
              return 1;
            }
          memset (p, k, 8);
        }
      sink = p;
      free (p);
    }
  printf ("sampler ok\n");
  return 0;
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

#define CHECK(cond)                                                        \
  do                                                                       \
    {                                                                      \
      if (!(cond))                                                         \
        {                                                                  \
          fprintf (stderr, "family: line %d: %s\n", __LINE__, #cond);      \
          exit (1);                                                        \
        }                                                                  \
    }                                                                      \
  while (0)

static void
fill (unsigned char *p,
      size_t         n,
      unsigned       seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char) (seed + i * 7);
}

static bool
filled (const unsigned char *p,
        size_t               n,
        unsigned             seed)
{
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char) (seed + i * 7))
      return false;
  return true;
}

/* A block the test will look for: aligned, as large as asked, all of its
 * usable size writable. */
static void *
family_block (const char *what,
              void       *p,
              size_t      size,
              size_t      align)
{
  CHECK (p != NULL);
  CHECK ((uintptr_t) p % align == 0);
  CHECK (malloc_usable_size (p) >= size);
  memset (p, 0xab, malloc_usable_size (p));
  printf ("fam %s %p %zu\n", what, p, size);
  return p;
}

static void
family_realloc_chain (void)
{
  unsigned char *r = realloc (NULL, FAMILY_BASE + 8);
  void *p;

  CHECK (r != NULL);
  fill (r, FAMILY_BASE + 8, 1);
  printf ("fam realloc-new %p %d\n", (void *) r, FAMILY_BASE + 8);
  r = realloc (r, FAMILY_BASE + 9000);
  CHECK (r != NULL && filled (r, FAMILY_BASE + 8, 1));
  printf ("fam realloc-grow %p %d\n", (void *) r, FAMILY_BASE + 9000);
  fill (r, FAMILY_BASE + 9000, 2);
  r = realloc (r, FAMILY_BASE + 10);
  CHECK (r != NULL && filled (r, FAMILY_BASE + 10, 2));
  printf ("fam realloc-shrink %p %d\n", (void *) r, FAMILY_BASE + 10);
  CHECK (realloc (r, 0) == NULL);  /* glibc: frees r */

  p = memalign (4096, FAMILY_BASE + 11);
  CHECK (p != NULL && (uintptr_t) p % 4096 == 0);
  fill (p, FAMILY_BASE + 11, 3);
  printf ("fam memalign-then-realloc %p %d\n", p, FAMILY_BASE + 11);
  r = realloc (p, FAMILY_BASE + 12000);
  CHECK (r != NULL && filled (r, FAMILY_BASE + 11, 3));
  CHECK (malloc_usable_size (r) >= FAMILY_BASE + 12000);
  printf ("fam realloc-of-memalign %p %d\n", (void *) r, FAMILY_BASE + 12000);
  free (r);
}

/* Small blocks, some sampled: grown by realloc, which may move a block
 * into or out of the sampled ones' layout. */
static void
family_churn (void)
{
  for (unsigned i = 0; i < FAMILY_CHURN; i++)
    {
      size_t size = 16 + (i * 37) % 2000;
      unsigned char *q = malloc (size);

      CHECK (q != NULL);
      fill (q, size, i);
      q = realloc (q, size * 2);
      CHECK (q != NULL && filled (q, size, i));
      CHECK (malloc_usable_size (q) >= size * 2);
      free (q);
    }
}

static void
family_fork (void)
{
  void *keep = family_block ("fork-parent", malloc (FAMILY_FORK_SIZE), FAMILY_FORK_SIZE, 16);
  pid_t pid;
  int status;

  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      void *own = malloc (FAMILY_CHILD_SIZE);

      CHECK (own != NULL);
      memset (own, 1, FAMILY_CHILD_SIZE);
      keep = realloc (keep, FAMILY_FORK_SIZE + 1);  /* the parent's block */
      CHECK (keep != NULL);
      free (keep);
      free (own);
      exit (0);
    }
  CHECK (waitpid (pid, &status, 0) == pid);
  CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  free (keep);
}

/* memo: stacks that a per-thread memo of the last walk must tell apart.
 * memo_alloc is called from memo_from_a and memo_from_b, which are alike,
 * so at the same stack pointer: only the return address on the stack
 * differs.  It prints the return address of each caller once. */
__attribute__ ((noinline, noipa)) static void
memo_alloc (size_t      size,
            const char *say)
{
  unsigned char *block = malloc (size);

  if (say != NULL)
    printf ("%s %p\n", say, __builtin_return_address (0));
  CHECK (block != NULL);
  /* Used, so that the compiler keeps the malloc and the free. */
  block[0] = (unsigned char) size;
  __asm__ volatile ("" : : "r" (block) : "memory");
  free (block);
}

__attribute__ ((noinline, noipa)) static void
memo_from_a (bool say)
{
  memo_alloc (MEMO_A_SIZE, say ? "memo-caller-a" : NULL);
}

__attribute__ ((noinline, noipa)) static void
memo_from_b (bool say)
{
  memo_alloc (MEMO_B_SIZE, say ? "memo-caller-b" : NULL);
}

/* Allocates @depth calls deep; prints the recursive call's return address
 * once. */
__attribute__ ((noinline, noipa)) static void
memo_recurse (int  depth,
              int  total,
              bool say)
{
  if (depth == 0)
    {
      memo_alloc ((size_t) (MEMO_DEPTH_SIZE + total), NULL);
      return;
    }
  if (say && depth == 1)
    printf ("memo-recursion %p\n", __builtin_return_address (0));
  memo_recurse (depth - 1, total, say);
  __asm__ volatile ("" ::: "memory");  /* not a tail call */
}

/* Each call from one call site, so that the stacks repeat exactly. */
__attribute__ ((noinline, noipa)) static void
memo_repeat (void (*alloc) (bool),
             int    times,
             bool   say)
{
  for (int i = 0; i < times; i++)
    alloc (say && i == 0);
}

__attribute__ ((noinline, noipa)) static void
memo_repeat_recursion (int  depth,
                       int  times,
                       bool say)
{
  for (int i = 0; i < times; i++)
    memo_recurse (depth, depth, say && i == 0);
}

/* A call through one of the profiler's hooks (dlsym on an explicit
 * handle) into a function that allocates: glibc keeps the message of the
 * failed lookup until the next dlerror.  Prints where it returns to. */
__attribute__ ((noinline, noipa)) static void
memo_through_hook (void)
{
  CHECK (dlsym (RTLD_DEFAULT, "tidemark_no_such_symbol") == NULL);
  printf ("memo-hooked %p\n", __builtin_return_address (0));
  CHECK (dlerror () != NULL);
}

static void
memo_on_signal (int signo)
{
  (void) signo;
  memo_alloc (MEMO_SIGNAL_SIZE, NULL);
}

static int
run_memo (void)
{
  struct sigaction action = { .sa_handler = memo_on_signal };

  /* The profiler's check report goes to stderr: the test reads stdout. */
  dup2 (STDOUT_FILENO, STDERR_FILENO);
  sigemptyset (&action.sa_mask);
  sigaction (SIGUSR1, &action, NULL);
  for (int round = 0; round < MEMO_ROUNDS; round++)
    {
      /* Runs of one caller, then of the other, then one of each. */
      memo_repeat (memo_from_a, MEMO_RUN, round == 0);
      memo_repeat (memo_from_b, MEMO_RUN, round == 0);
      memo_repeat (memo_from_a, 1, false);
      memo_repeat (memo_from_b, 1, false);
      memo_repeat_recursion (1 + round % 3, 2, round == 1);
      if (round % 10 == 0)
        raise (SIGUSR1);
    }
  memo_through_hook ();
  __asm__ volatile ("" ::: "memory");  /* not a tail call */
  printf ("memo ok\n");
  fflush (stdout);
  return 0;
}

__attribute__ ((noinline, noipa)) static void
memo_big (bool say)
{
  memo_alloc (MEMO_UNLOAD_SIZE, say ? "memo-caller-big" : NULL);
}

/* memo-unload: runs of one stack, each after a dlclose.  A dlclose may
 * take unwind tables with it, so the memo must not outlive one: every run
 * starts with a walk.  dlopen (NULL) and dlclose of the program itself
 * unload nothing, and allocate nothing that a sampling interval of
 * MEMO_UNLOAD_SIZE would sample, so they change nothing else; stdout gets
 * a buffer of its own, so that printing allocates nothing either (a
 * sampled stdio buffer would be one more walk). */
static int
run_memo_unload (void)
{
  static char out_buffer[BUFSIZ];

  setvbuf (stdout, out_buffer, _IOFBF, sizeof out_buffer);
  dup2 (STDOUT_FILENO, STDERR_FILENO);
  for (int round = 0; round < MEMO_UNLOAD_ROUNDS; round++)
    {
      void *self = dlopen (NULL, RTLD_NOW);

      CHECK (self != NULL);
      CHECK (dlclose (self) == 0);
      memo_repeat (memo_big, MEMO_UNLOAD_RUN, round == 0);
    }
  printf ("memo-unload ok\n");
  fflush (stdout);
  return 0;
}

static int
run_family (void)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  size_t pv_size = (FAMILY_BASE + 6 + page - 1) & ~(page - 1);
  void *blocks[8];
  unsigned char *z;
  void *p = NULL;
  int n = 0;

  /* Run with jemalloc preloaded after the profiler, the malloc family
   * below the hooks is jemalloc's, with no glibc chunk headers.  jemalloc
   * has no pvalloc or reallocarray: glibc's would serve those from glibc's
   * heap, which jemalloc's free cannot take, profiled or not. */
  bool jemalloc = dlsym (RTLD_DEFAULT, "mallctl") != NULL;

  printf ("allocator %s\n", jemalloc ? "jemalloc" : "glibc");
  blocks[n++] = family_block ("malloc", malloc (FAMILY_BASE), FAMILY_BASE, 16);
  z = calloc (1, FAMILY_BASE + 1);
  CHECK (z != NULL);
  for (size_t i = 0; i < FAMILY_BASE + 1; i++)
    CHECK (z[i] == 0);
  blocks[n++] = family_block ("calloc", z, FAMILY_BASE + 1, 16);
  CHECK (posix_memalign (&p, 64, FAMILY_BASE + 2) == 0);
  blocks[n++] = family_block ("posix_memalign", p, FAMILY_BASE + 2, 64);
  blocks[n++] = family_block ("aligned_alloc", aligned_alloc (256, FAMILY_BASE + 3),
                              FAMILY_BASE + 3, 256);
  blocks[n++] = family_block ("memalign", memalign (4096, FAMILY_BASE + 4), FAMILY_BASE + 4, 4096);
  blocks[n++] = family_block ("valloc", valloc (FAMILY_BASE + 5), FAMILY_BASE + 5, page);
  if (!jemalloc)
    {
      blocks[n++] = family_block ("pvalloc", pvalloc (FAMILY_BASE + 6), pv_size, page);
      blocks[n++] = family_block ("reallocarray", reallocarray (NULL, 1, FAMILY_BASE + 7),
                                  FAMILY_BASE + 7, 16);
    }
  /* An invalid alignment still fails as it does without the profiler. */
  CHECK (posix_memalign (&p, 24, FAMILY_BASE) == EINVAL);
  while (n > 0)
    free (blocks[--n]);
  family_realloc_chain ();
  family_churn ();
  family_fork ();
  printf ("family ok\n");
  return 0;
}

/* A block allocated, "allocated" said, and a pause in which the recorder
 * asks for the process's figures while the block's record is still in
 * this thread's buffer (TIDE_FLUSH_AGE_NS). */
static int
run_figures (void)
{
  void *kept = malloc (FIGURES_SIZE);

  CHECK (kept != NULL);
  printf ("allocated\n");
  fflush (stdout);
  usleep (300 * 1000);
  free (kept);
  printf ("figures ok\n");
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
  if (argc == 2 && strcmp (argv[1], "fold") == 0)
    return run_fold ();
  if (argc == 2 && strcmp (argv[1], "family") == 0)
    return run_family ();
  if (argc == 2 && strcmp (argv[1], "memo") == 0)
    return run_memo ();
  if (argc == 2 && strcmp (argv[1], "memo-unload") == 0)
    return run_memo_unload ();
  if (argc == 2 && strcmp (argv[1], "sampler") == 0)
    return run_sampler ();
  if (argc == 2 && strcmp (argv[1], "sampler-realloc") == 0)
    return run_sampler_realloc ();
  if (argc == 2 && strcmp (argv[1], "figures") == 0)
    return run_figures ();
  fprintf (stderr, "usage: %s basic|storm|chatty|hang|fold|family|memo|memo-unload|sampler|"
           "sampler-realloc|figures\n", argv[0]);
  return 2;
}
