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
#include <stdio.h>
#include <stdlib.h>

#include "tide-cuda-abi.h"
#include "tide-standin.h"

#include "tidemark.h"
#include "cuda-trainer.h"

#define PA_KEEP_BYTES (700 * KiB)
#define PA_TEMP_BYTES (40 * KiB)
#define PA_COPY_BYTES (24 * KiB)
#define PA_MAP_BYTES  (2048 * KiB)

typedef TideCuResult (*AllocFn) (TideCuDeviceptr *, size_t);
typedef TideCuResult (*FreeFn) (TideCuDeviceptr);
typedef TideCuResult (*HtoDFn) (TideCuDeviceptr, const void *, size_t);
typedef TideCuResult (*ReserveFn) (TideCuDeviceptr *, size_t, size_t, TideCuDeviceptr, unsigned long long);
typedef TideCuResult (*CreateFn) (TideCuMemHandle *, size_t,
                                  const TideCuMemAllocationProp *, unsigned long long);
typedef TideCuResult (*MapFn) (TideCuDeviceptr, size_t, size_t, TideCuMemHandle,
                               unsigned long long);
typedef TideCuResult (*UnmapFn) (TideCuDeviceptr, size_t);
typedef TideCuResult (*ReleaseFn) (TideCuMemHandle);

static unsigned char host[PA_COPY_BYTES];

static void *
entry (const char *name)
{
  TideCuProcAddressStatus status;
  void *fn = NULL;

  if (cuGetProcAddress_v2 (name, &fn, TIDE_STANDIN_CUDA_VERSION, TIDE_CU_GET_PROC_ADDRESS_DEFAULT, &status)
      != TIDE_CU_SUCCESS || fn == NULL)
    {
      fprintf (stderr, "no %s\n", name);
      exit (1);
    }
  return fn;
}

static void *
runtime_entry (const char *name)
{
  TideCudaEntryPointStatus status;
  void *fn = NULL;

  if (cudaGetDriverEntryPointByVersion (name, &fn, TIDE_STANDIN_CUDA_VERSION, TIDE_CUDA_ENABLE_DEFAULT, &status)
      != TIDE_CUDA_SUCCESS || fn == NULL)
    {
      fprintf (stderr, "no %s from the runtime\n", name);
      exit (1);
    }
  return fn;
}

__attribute__ ((noinline)) static TideCuDeviceptr
alloc_through_entry (AllocFn alloc_fn,
                     size_t  size)
{
  TideCuDeviceptr p = 0;

  if (alloc_fn (&p, size) != TIDE_CU_SUCCESS)
    exit (1);
  return p;
}

__attribute__ ((noinline)) static TideCuDeviceptr
map_through_entry (void)
{
  ReserveFn reserve = (ReserveFn) entry ("cuMemAddressReserve");
  CreateFn create = (CreateFn) runtime_entry ("cuMemCreate");
  MapFn map = (MapFn) runtime_entry ("cuMemMap");
  TideCuMemAllocationProp prop = { 0 };
  TideCuMemHandle handle;
  TideCuDeviceptr va = 0;

  prop.type = TIDE_CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = TIDE_CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  if (reserve (&va, PA_MAP_BYTES, 0, 0, 0) != TIDE_CU_SUCCESS
      || create (&handle, PA_MAP_BYTES, &prop, 0) != TIDE_CU_SUCCESS
      || map (va, PA_MAP_BYTES, 0, handle, 0) != TIDE_CU_SUCCESS)
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
  TideCuMemAllocationProp prop = { 0 };
  TideCuMemHandle handle;
  TideCuDeviceptr va = 0;

  prop.type = TIDE_CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = TIDE_CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  if (reserve (&va, PA_MAP_BYTES, 0, 0, 0) != TIDE_CU_SUCCESS
      || create (&handle, PA_MAP_BYTES, &prop, 0) != TIDE_CU_SUCCESS
      || map (va, PA_MAP_BYTES, 0, handle, 0) != TIDE_CU_SUCCESS
      || unmap (va, PA_MAP_BYTES) != TIDE_CU_SUCCESS
      || release (handle) != TIDE_CU_SUCCESS)
    exit (1);
}

int
main (void)
{
  AllocFn alloc_fn = (AllocFn) entry ("cuMemAlloc");
  FreeFn free_fn = (FreeFn) entry ("cuMemFree");
  HtoDFn htod = (HtoDFn) entry ("cuMemcpyHtoD");
  TideCuDeviceptr keep, temp;

  keep = alloc_through_entry (alloc_fn, PA_KEEP_BYTES);
  temp = alloc_through_entry (alloc_fn, PA_TEMP_BYTES);
  if (htod (keep, host, PA_COPY_BYTES) != TIDE_CU_SUCCESS || free_fn (temp) != TIDE_CU_SUCCESS)
    return 1;
  map_through_entry ();
  map_and_release ();
  tidemark_step (NULL);
  printf ("kept %llu\n", (unsigned long long) keep);
  return 0;
}
