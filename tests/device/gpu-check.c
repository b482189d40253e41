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
 *
 * After the last step it prints what NVML says this very process uses on
 * device 0, with the CLOCK_MONOTONIC time it asked (the trace's clock):
 *   final t_ns NS nvml_process_bytes BYTES     (or "none" if NVML cannot say)
 * and holds that state for HOLD_MS, so that the recorder's NVML poll (every
 * 100 ms) sees it too: the script compares the two views of one process.
 * Built against the real libcudart, with Tidemark's own CUDA declarations.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tide-cuda-abi.h"

#include "tidemark.h"

#define CHUNK ((size_t) 256 << 20)
#define COPY  ((size_t) 64 << 20)
#define STEPS 8
#define HOLD_MS 1000
#define MAX_PROCESSES 256

static size_t
used_bytes (void)
{
  size_t free_b = 0, total = 0;

  cudaDeviceSynchronize ();
  if (cudaMemGetInfo (&free_b, &total) != TIDE_CUDA_SUCCESS)
    exit (1);
  return total - free_b;
}

static long long
monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* This process's device memory on NVML device 0, or -1 when NVML cannot
 * say (no NVML, or a pid namespace that hides our pid from it). */
static long long
nvml_own_bytes (void)
{
  static TideNvmlProcessInfo infos[MAX_PROCESSES];
  void *lib = dlopen ("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  TideNvmlFn_nvmlInit_v2 init;
  TideNvmlFn_nvmlDeviceGetHandleByIndex_v2 by_index;
  TideNvmlFn_nvmlDeviceGetComputeRunningProcesses_v3 processes;
  TideNvmlDevice device;
  unsigned int n = MAX_PROCESSES;

  if (lib == NULL)
    return -1;
  *(void **) &init = dlsym (lib, "nvmlInit_v2");
  *(void **) &by_index = dlsym (lib, "nvmlDeviceGetHandleByIndex_v2");
  *(void **) &processes = dlsym (lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (init == NULL || by_index == NULL || processes == NULL || init () != TIDE_NVML_SUCCESS
      || by_index (0, &device) != TIDE_NVML_SUCCESS
      || processes (device, &n, infos) != TIDE_NVML_SUCCESS)
    return -1;
  for (unsigned int i = 0; i < n && i < MAX_PROCESSES; i++)
    if (infos[i].pid == (unsigned int) getpid ())
      return (long long) infos[i].used_gpu_memory;
  return -1;
}

int
main (void)
{
  static void *kept[STEPS];
  char *host = NULL;
  long long final_ns, own;
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
          || cudaMemcpy (kept[step - 1], host, COPY,
                         TIDE_CUDA_MEMCPY_HOST_TO_DEVICE) != TIDE_CUDA_SUCCESS
          || cudaMemcpy (host, kept[step - 1], COPY,
                         TIDE_CUDA_MEMCPY_DEVICE_TO_HOST) != TIDE_CUDA_SUCCESS
          || cudaFree (tmp) != TIDE_CUDA_SUCCESS)
        return 1;
      printf ("step %d used_bytes %zu\n", step, used_bytes ());
      fflush (stdout);
      tidemark_step (NULL);
    }
  final_ns = monotonic_ns ();
  own = nvml_own_bytes ();
  if (own >= 0)
    printf ("final t_ns %lld nvml_process_bytes %lld\n", final_ns, own);
  else
    printf ("final t_ns %lld nvml_process_bytes none\n", final_ns);
  fflush (stdout);
  usleep (HOLD_MS * 1000);
  return 0;
}
