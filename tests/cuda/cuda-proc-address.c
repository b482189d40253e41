/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * cuda-proc-address: reaches the driver only through entry points, the way
 * the CUDA runtime and PyTorch do: cuGetProcAddress for cuMemAlloc,
 * cuMemFree and cuMemcpyHtoD, and cudaGetDriverEntryPointByVersion for the
 * virtual memory calls (cuMemCreate/cuMemMap/cuMemUnmap/cuMemRelease).
 *
 * Keeps PA_KEEP_BYTES from alloc_through_entry and PA_MAP_BYTES mapped by
 * map_through_entry; frees PA_TEMP_BYTES; copies PA_COPY_BYTES to the device.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "tidemark.h"
#include "cuda-trainer.h"

#define PA_KEEP_BYTES (700 * KiB)
#define PA_TEMP_BYTES (40 * KiB)
#define PA_COPY_BYTES (24 * KiB)
#define PA_MAP_BYTES  (2048 * KiB)

typedef CUresult (*AllocFn) (CUdeviceptr *, size_t);
typedef CUresult (*FreeFn) (CUdeviceptr);
typedef CUresult (*HtoDFn) (CUdeviceptr, const void *, size_t);
typedef CUresult (*ReserveFn) (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*CreateFn) (CUmemGenericAllocationHandle *, size_t,
                              const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*MapFn) (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                           unsigned long long);
typedef CUresult (*UnmapFn) (CUdeviceptr, size_t);
typedef CUresult (*ReleaseFn) (CUmemGenericAllocationHandle);

static unsigned char host[PA_COPY_BYTES];

static void *
entry (const char *name)
{
  CUdriverProcAddressQueryResult status;
  void *fn = NULL;

  if (cuGetProcAddress (name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status)
      != CUDA_SUCCESS || fn == NULL)
    {
      fprintf (stderr, "no %s\n", name);
      exit (1);
    }
  return fn;
}

static void *
runtime_entry (const char *name)
{
  enum cudaDriverEntryPointQueryResult status;
  void *fn = NULL;

  if (cudaGetDriverEntryPointByVersion (name, &fn, CUDA_VERSION, cudaEnableDefault, &status)
      != cudaSuccess || fn == NULL)
    {
      fprintf (stderr, "no %s from the runtime\n", name);
      exit (1);
    }
  return fn;
}

__attribute__ ((noinline)) static CUdeviceptr
alloc_through_entry (AllocFn alloc_fn,
                     size_t  size)
{
  CUdeviceptr p = 0;

  if (alloc_fn (&p, size) != CUDA_SUCCESS)
    exit (1);
  return p;
}

__attribute__ ((noinline)) static CUdeviceptr
map_through_entry (void)
{
  ReserveFn reserve = (ReserveFn) entry ("cuMemAddressReserve");
  CreateFn create = (CreateFn) runtime_entry ("cuMemCreate");
  MapFn map = (MapFn) runtime_entry ("cuMemMap");
  CUmemAllocationProp prop = { 0 };
  CUmemGenericAllocationHandle handle;
  CUdeviceptr va = 0;

  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  if (reserve (&va, PA_MAP_BYTES, 0, 0, 0) != CUDA_SUCCESS
      || create (&handle, PA_MAP_BYTES, &prop, 0) != CUDA_SUCCESS
      || map (va, PA_MAP_BYTES, 0, handle, 0) != CUDA_SUCCESS)
    exit (1);
  return va;
}

/* Maps and unmaps a second range: nothing of it stays. */
__attribute__ ((noinline)) static void
map_and_release (void)
{
  ReserveFn reserve = (ReserveFn) entry ("cuMemAddressReserve");
  CreateFn create = (CreateFn) entry ("cuMemCreate");
  MapFn map = (MapFn) entry ("cuMemMap");
  UnmapFn unmap = (UnmapFn) entry ("cuMemUnmap");
  ReleaseFn release = (ReleaseFn) entry ("cuMemRelease");
  CUmemAllocationProp prop = { 0 };
  CUmemGenericAllocationHandle handle;
  CUdeviceptr va = 0;

  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  if (reserve (&va, PA_MAP_BYTES, 0, 0, 0) != CUDA_SUCCESS
      || create (&handle, PA_MAP_BYTES, &prop, 0) != CUDA_SUCCESS
      || map (va, PA_MAP_BYTES, 0, handle, 0) != CUDA_SUCCESS
      || unmap (va, PA_MAP_BYTES) != CUDA_SUCCESS
      || release (handle) != CUDA_SUCCESS)
    exit (1);
}

int
main (void)
{
  AllocFn alloc_fn = (AllocFn) entry ("cuMemAlloc");
  FreeFn free_fn = (FreeFn) entry ("cuMemFree");
  HtoDFn htod = (HtoDFn) entry ("cuMemcpyHtoD");
  CUdeviceptr keep, temp;

  keep = alloc_through_entry (alloc_fn, PA_KEEP_BYTES);
  temp = alloc_through_entry (alloc_fn, PA_TEMP_BYTES);
  if (htod (keep, host, PA_COPY_BYTES) != CUDA_SUCCESS || free_fn (temp) != CUDA_SUCCESS)
    return 1;
  map_through_entry ();
  map_and_release ();
  tidemark_step (NULL);
  printf ("kept %llu\n", (unsigned long long) keep);
  return 0;
}
