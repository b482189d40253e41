/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * cuda-oom: a training loop that runs its device out of memory, on the
 * stand-in CUDA libraries with TIDE_STANDIN_DEVICE_MIB=100 (test-cuda-oom.c
 * checks what the trace says of it).
 *
 *   cuda-oom die|retry|pinned [STEPS]
 *
 * init_weights keeps OOM_WEIGHT_BYTES on cuda:0.  Each step, keep_bucket
 * keeps OOM_BUCKET_BYTES more, then the forward pass asks for
 * OOM_ACT_BYTES of activations and frees them.  In step 8 the device holds
 * 24 + 8 * 8 = 88 MiB, and the 16 MiB request fails.
 *   die:   forward_activations (cudaMalloc) fails, and the program exits 1;
 *   retry: forward_driver (cuMemAlloc) fails, the program frees its
 *          buckets as a caching allocator frees its cache, asks again, and
 *          goes on to STEPS (default 12) and exits 0;
 *   pinned: keep_pinned keeps OOM_BUCKET_BYTES of page-locked host memory
 *          a step (cudaMallocHost), with TIDE_STANDIN_PINNED_MIB=40: the
 *          request of step 6 fails, and the program exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tide-cuda-abi.h"
#include "tidemark.h"
#include "cuda-trainer.h"

static void *weights;
static void *buckets[64];
static int n_buckets;

__attribute__ ((noinline)) static void
init_weights (void)
{
  if (cudaMalloc (&weights, OOM_WEIGHT_BYTES) != TIDE_CUDA_SUCCESS)
    exit (2);
}

__attribute__ ((noinline)) static void
keep_bucket (void)
{
  if (cudaMalloc (&buckets[n_buckets++], OOM_BUCKET_BYTES) != TIDE_CUDA_SUCCESS)
    exit (2);
}

__attribute__ ((noinline)) static void
forward_activations (void)
{
  void *act = NULL;
  TideCudaError err = cudaMalloc (&act, OOM_ACT_BYTES);

  if (err != TIDE_CUDA_SUCCESS)
    {
      fprintf (stderr, "cuda-oom: out of memory (%u)\n", err);
      exit (1);
    }
  cudaFree (act);
}

__attribute__ ((noinline)) static void
empty_cache (void)
{
  while (n_buckets > 0)
    cudaFree (buckets[--n_buckets]);
}

__attribute__ ((noinline)) static void
forward_driver (void)
{
  TideCuDeviceptr act = 0;

  if (cuMemAlloc_v2 (&act, OOM_ACT_BYTES) == TIDE_CU_ERROR_OUT_OF_MEMORY)
    {
      empty_cache ();
      if (cuMemAlloc_v2 (&act, OOM_ACT_BYTES) != TIDE_CU_SUCCESS)
        exit (3);
    }
  cuMemFree_v2 (act);
}

static void *pinned[64];
static int n_pinned;

__attribute__ ((noinline)) static void
keep_pinned (void)
{
  TideCudaError err = cudaMallocHost (&pinned[n_pinned], OOM_BUCKET_BYTES);

  if (err != TIDE_CUDA_SUCCESS)
    {
      fprintf (stderr, "cuda-oom: no pinned memory (%u)\n", err);
      exit (1);
    }
  n_pinned++;
}

int
main (int    argc,
      char **argv)
{
  int retry = argc > 1 && strcmp (argv[1], "retry") == 0;
  int pin = argc > 1 && strcmp (argv[1], "pinned") == 0;
  int steps = argc > 2 ? atoi (argv[2]) : 12;

  if (argc < 2 || steps < 1 || steps > 64)
    return 2;
  init_weights ();
  for (int step = 1; step <= steps; step++)
    {
      if (pin)
        {
          keep_pinned ();
          tidemark_step (NULL);
          continue;
        }
      keep_bucket ();
      if (retry)
        forward_driver ();
      else
        forward_activations ();
      tidemark_step (NULL);
    }
  printf ("trained %d steps\n", steps);
  return 0;
}
