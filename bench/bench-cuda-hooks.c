/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * bench-cuda-hooks: what the CUDA hooks add to each call, on the stand-in
 * CUDA libraries of tests/cuda (the stand-in's own cost is tiny, so the
 * difference is ours).
 *
 *   bench-cuda-hooks [--runs N]
 *
 * Runs itself N times (default 5) in each of three modes and prints the
 * median ns per call of each operation and the overhead against the plain
 * runs of the same invocation:
 *   plain     no preload;
 *   dormant   LD_PRELOAD=libtidemark-preload.so, no recorder (hooks pass);
 *   recorded  `tidemark record --all`: every call recorded with its stack.
 * Target: at most 2 µs added per call when recorded.
 */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tide-cuda-abi.h"

#define N_OPS   6
#define N_CALLS 20000
#define BATCH   500
#define PAUSE_US 20000

static const char *const op_names[N_OPS] = {
  "cudaMalloc 256 B",
  "cudaFree",
  "cudaMemcpy H2D 4 KiB",
  "cuMemAlloc_v2 256 B",
  "cuMemFree_v2",
  "cudaMemcpyAsync D2H 4 KiB",
};

static double
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Allocations and frees are timed apart, in batches of BATCH live blocks,
 * with a pause after each batch: real programs allocate device memory
 * rarely (caching allocators), and the pause lets the recorder drain what
 * a batch sent, so that the figure is the hook's cost and not the
 * backpressure of a recorder flooded at 500 000 records a second. */
static void
time_runtime_alloc (double *alloc_ns,
                    double *free_ns)
{
  static void *p[BATCH];
  double a = 0, f = 0, t0;

  for (int round = 0; round < N_CALLS / BATCH; round++)
    {
      t0 = now_ns ();
      for (int i = 0; i < BATCH; i++)
        cudaMalloc (&p[i], 256);
      a += now_ns () - t0;
      t0 = now_ns ();
      for (int i = 0; i < BATCH; i++)
        cudaFree (p[i]);
      f += now_ns () - t0;
      g_usleep (PAUSE_US);
    }
  *alloc_ns = a / N_CALLS;
  *free_ns = f / N_CALLS;
}

static void
time_driver_alloc (double *alloc_ns,
                   double *free_ns)
{
  static TideCuDeviceptr p[BATCH];
  double a = 0, f = 0, t0;

  for (int round = 0; round < N_CALLS / BATCH; round++)
    {
      t0 = now_ns ();
      for (int i = 0; i < BATCH; i++)
        cuMemAlloc_v2 (&p[i], 256);
      a += now_ns () - t0;
      t0 = now_ns ();
      for (int i = 0; i < BATCH; i++)
        cuMemFree_v2 (p[i]);
      f += now_ns () - t0;
      g_usleep (PAUSE_US);
    }
  *alloc_ns = a / N_CALLS;
  *free_ns = f / N_CALLS;
}

static double
time_copies (void     *dev,
             void     *host,
             size_t    n,
             gboolean  async)
{
  double total = 0, t0;

  for (int round = 0; round < N_CALLS / BATCH; round++)
    {
      t0 = now_ns ();
      for (int i = 0; i < BATCH; i++)
        if (async)
          cudaMemcpyAsync (host, dev, n, TIDE_CUDA_MEMCPY_DEVICE_TO_HOST, 0);
        else
          cudaMemcpy (dev, host, n, TIDE_CUDA_MEMCPY_HOST_TO_DEVICE);
      total += now_ns () - t0;
      g_usleep (PAUSE_US / 2);
    }
  return total / N_CALLS;
}

/* The measured loops; prints one ns/call figure per operation. */
static int
child (void)
{
  static unsigned char host[4096];
  void *dev;
  double ns[N_OPS];

  /* Device pointers have nothing behind them here (no backing); the
   * stand-in's copies take any pointer, so copy to a host buffer. */
  dev = malloc (sizeof host);
  if (dev == NULL)
    return 1;
  time_runtime_alloc (&ns[0], &ns[1]);
  ns[2] = time_copies (dev, host, sizeof host, FALSE);
  time_driver_alloc (&ns[3], &ns[4]);
  ns[5] = time_copies (dev, host, sizeof host, TRUE);
  for (int k = 0; k < N_OPS; k++)
    printf ("%.1f\n", ns[k]);
  free (dev);
  return 0;
}

static gboolean
run_once (const char *self,
          int         mode,
          const char *trace,
          double     *ns)
{
  const char *plain[] = { self, "--child", NULL };
  const char *recorded[] = { TIDE_TIDEMARK_EXE, "record", "-q", "--force", "--all", "-o", trace,
                             "--", self, "--child", NULL };
  g_auto(GStrv) env = g_get_environ ();
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  int status = 0;

  env = g_environ_unsetenv (env, "TIDEMARK_SOCKET");
  env = g_environ_setenv (env, "TIDE_STANDIN_NO_BACKING", "1", TRUE);
  if (mode == 1)
    env = g_environ_setenv (env, "LD_PRELOAD", TIDE_PRELOAD_PATH, TRUE);
  if (!g_spawn_sync (NULL, (char **) (mode == 2 ? recorded : plain), env, G_SPAWN_DEFAULT, NULL,
                     NULL, &out, NULL, &status, NULL) || !g_spawn_check_wait_status (status, NULL))
    return FALSE;
  g_unlink (trace);
  lines = g_strsplit (out, "\n", -1);
  for (int k = 0; k < N_OPS; k++)
    {
      if (lines[k] == NULL)
        return FALSE;
      ns[k] = g_ascii_strtod (lines[k], NULL);
    }
  return TRUE;
}

static int
cmp_double (const void *a,
            const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

int
main (int    argc,
      char **argv)
{
  static const char *const modes[3] = { "plain", "dormant", "recorded" };
  int runs = argc > 2 && strcmp (argv[1], "--runs") == 0 ? atoi (argv[2]) : 5;
  g_autofree char *dir = NULL;
  g_autofree char *trace = NULL;
  double samples[3][N_OPS][64], median[3][N_OPS];
  int worst = 0;

  if (argc > 1 && strcmp (argv[1], "--child") == 0)
    return child ();
  if (runs < 5 || runs > 64)
    runs = 5;
  dir = g_dir_make_tmp ("bench-cuda-XXXXXX", NULL);
  trace = g_build_filename (dir, "bench.tide", NULL);
  /* Interleaved, so that drift in the machine hits every mode alike. */
  for (int r = 0; r < runs; r++)
    for (int m = 0; m < 3; m++)
      {
        double ns[N_OPS];

        if (!run_once (argv[0], m, trace, ns))
          {
            fprintf (stderr, "bench-cuda-hooks: the %s run failed\n", modes[m]);
            return 1;
          }
        for (int k = 0; k < N_OPS; k++)
          samples[m][k][r] = ns[k];
      }
  g_rmdir (dir);
  for (int m = 0; m < 3; m++)
    for (int k = 0; k < N_OPS; k++)
      {
        qsort (samples[m][k], runs, sizeof (double), cmp_double);
        median[m][k] = samples[m][k][runs / 2];
      }
  printf ("median of %d runs, ns per call (overhead vs plain; ratio)\n", runs);
  printf ("%-40s %10s %24s %24s\n", "operation", "plain", "dormant", "recorded");
  for (int k = 0; k < N_OPS; k++)
    {
      double add = median[2][k] - median[0][k];

      printf ("%-40s %10.1f %9.1f (+%6.1f; %5.2fx) %9.1f (+%6.1f; %5.2fx)\n", op_names[k],
              median[0][k], median[1][k], median[1][k] - median[0][k],
              median[1][k] / median[0][k], median[2][k], add, median[2][k] / median[0][k]);
      if (add > 2000.0)
        worst = 1;
    }
  printf ("target: at most 2000 ns added per recorded call: %s\n", worst ? "MISSED" : "met");
  return 0;
}
