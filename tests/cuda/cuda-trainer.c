/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * cuda-trainer: a training loop on the stand-in CUDA and NVTX libraries, with known
 * device memory, pinned memory and copies (test-cuda-record.c checks them).
 *
 *   cuda-trainer leak|control [STEPS]
 *
 * Initialisation: LAYERS weight buffers of LAYER_BYTES on cuda:0
 * (init_layers), OPT_BYTES of optimizer state on cuda:1 (init_optimizer),
 * one pinned staging buffer of STAGING_BYTES (init_staging).
 * Each step, inside NVTX ranges "forward" and "backward":
 *   - ACT_BYTES of activations (cudaMalloc), freed in the same step;
 *   - GRAD_BYTES of gradients (cudaMallocAsync/cudaFreeAsync);
 *   - SCRATCH_BYTES through the driver (cuMemAlloc_v2/cuMemFree_v2);
 *   - H2D_RT_BYTES with cudaMemcpy and H2D_DRV_BYTES with cuMemcpyHtoD_v2,
 *     D2H_BYTES with cudaMemcpyAsync;
 *   - leak only: LEAK_BYTES on cuda:0 kept by leak_device_cache every
 *     step, and PINNED_LEAK_BYTES of pinned memory kept by
 *     leak_pinned_buffer in even steps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tide-cuda-abi.h"
#include "tidemark.h"
#include "cuda-trainer.h"
/* NVTX: the stand-in NVTX 2 library, or with TIDE_TRAINER_REAL_NVTX (where
 * the toolkit is installed) NVIDIA's header-only NVTX 3. */
#ifdef TIDE_TRAINER_REAL_NVTX
#include <nvtx3/nvToolsExt.h>
#else
#include "tide-standin.h"
#endif

static void *weights[LAYERS];
static void *optimizer;
static void *staging;
static void *leaked[64];
static void *leaked_pinned[64];
static unsigned char host_batch[H2D_RT_BYTES];
static unsigned char host_result[D2H_BYTES];

#define CHECK(call)                                                   \
  do                                                                  \
    {                                                                 \
      int err_ = (int) (call);                                        \
      if (err_ != 0)                                                  \
        {                                                             \
          fprintf (stderr, "%s failed: %d\n", #call, err_);           \
          exit (1);                                                   \
        }                                                             \
    }                                                                 \
  while (0)

__attribute__ ((noinline)) static void
init_layers (void)
{
  CHECK (cudaSetDevice (0));
  for (int i = 0; i < LAYERS; i++)
    CHECK (cudaMalloc (&weights[i], LAYER_BYTES));
}

__attribute__ ((noinline)) static void
init_optimizer (void)
{
  CHECK (cudaSetDevice (1));
  CHECK (cudaMalloc (&optimizer, OPT_BYTES));
  CHECK (cudaSetDevice (0));
}

__attribute__ ((noinline)) static void
init_staging (void)
{
  CHECK (cudaMallocHost (&staging, STAGING_BYTES));
}

__attribute__ ((noinline)) static void
leak_device_cache (int step)
{
  CHECK (cudaMalloc (&leaked[step], LEAK_BYTES));
}

__attribute__ ((noinline)) static void
leak_pinned_buffer (int step)
{
  CHECK (cudaHostAlloc (&leaked_pinned[step], PINNED_LEAK_BYTES, 0));
}

__attribute__ ((noinline)) static void *
forward_activations (void)
{
  void *act = NULL;

  CHECK (cudaMalloc (&act, ACT_BYTES));
  memset (host_batch, 1, sizeof host_batch);
  CHECK (cudaMemcpy (weights[0], host_batch, H2D_RT_BYTES, TIDE_CUDA_MEMCPY_HOST_TO_DEVICE));
  return act;
}

__attribute__ ((noinline)) static void
driver_scratch (void)
{
  TideCuDeviceptr scratch = 0;

  CHECK (cuMemAlloc_v2 (&scratch, SCRATCH_BYTES));
  CHECK (cuMemcpyHtoD_v2 (scratch, host_batch, H2D_DRV_BYTES));
  CHECK (cuMemFree_v2 (scratch));
}

__attribute__ ((noinline)) static void
backward (void *act)
{
  void *grad = NULL;

  CHECK (cudaMallocAsync (&grad, GRAD_BYTES, 0));
  CHECK (cudaMemcpyAsync (host_result, weights[0], D2H_BYTES, TIDE_CUDA_MEMCPY_DEVICE_TO_HOST, 0));
  CHECK (cudaStreamSynchronize (0));
  CHECK (cudaFreeAsync (grad, 0));
  CHECK (cudaFree (act));
}

int
main (int    argc,
      char **argv)
{
  int leak = argc > 1 && strcmp (argv[1], "leak") == 0;
  int steps = argc > 2 ? atoi (argv[2]) : STEPS;

  if (steps < 1 || steps > 64)
    return 2;
  init_layers ();
  init_optimizer ();
  init_staging ();
  for (int step = 1; step <= steps; step++)
    {
      void *act;

      nvtxRangePushA ("forward");
      act = forward_activations ();
      driver_scratch ();
      if (leak)
        leak_device_cache (step);
      nvtxRangePop ();
      nvtxRangePushA ("backward");
      backward (act);
      if (leak && step % 2 == 0)
        leak_pinned_buffer (step);
      nvtxRangePop ();
      tidemark_step (NULL);
    }
  printf ("trained %d steps\n", steps);
  return 0;
}
