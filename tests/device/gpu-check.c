/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * gpu-check: a real CUDA program for run-on-gpu.sh.  Each step allocates
 * CHUNK bytes with cudaMalloc (kept: it grows by CHUNK a step), one
 * temporary CHUNK that it frees, and copies COPY bytes each way.  At each
 * step end it prints what cudaMemGetInfo says is used, so that the script
 * can compare it with the device bytes in the trace:
 *   step N used_bytes BYTES
 * The first line "baseline used_bytes BYTES" is the use after the context
 * was created, before any allocation.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tide-cuda-abi.h"

#include "tidemark.h"

#define CHUNK ((size_t) 256 << 20)
#define COPY  ((size_t) 64 << 20)
#define STEPS 8

static size_t
used_bytes (void)
{
  size_t free_b = 0, total = 0;

  cudaDeviceSynchronize ();
  if (cudaMemGetInfo (&free_b, &total) != TIDE_CUDA_SUCCESS)
    exit (1);
  return total - free_b;
}

int
main (void)
{
  static void *kept[STEPS];
  char *host = NULL;
  void *tmp;

  if (cudaSetDevice (0) != TIDE_CUDA_SUCCESS || cudaFree (0) != TIDE_CUDA_SUCCESS)
    return 77;
  printf ("baseline used_bytes %zu\n", used_bytes ());
  if (cudaMallocHost ((void **) &host, COPY) != TIDE_CUDA_SUCCESS)
    return 1;
  for (int step = 1; step <= STEPS; step++)
    {
      if (cudaMalloc (&kept[step - 1], CHUNK) != TIDE_CUDA_SUCCESS
          || cudaMalloc (&tmp, CHUNK) != TIDE_CUDA_SUCCESS
          || cudaMemcpy (kept[step - 1], host, COPY, TIDE_CUDA_MEMCPY_HOST_TO_DEVICE) != TIDE_CUDA_SUCCESS
          || cudaMemcpy (host, kept[step - 1], COPY, TIDE_CUDA_MEMCPY_DEVICE_TO_HOST) != TIDE_CUDA_SUCCESS
          || cudaFree (tmp) != TIDE_CUDA_SUCCESS)
        return 1;
      printf ("step %d used_bytes %zu\n", step, used_bytes ());
      fflush (stdout);
      tidemark_step (NULL);
    }
  return 0;
}
