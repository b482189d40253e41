/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * cuda-private-handle: reaches the driver the way the real CUDA runtime and
 * PyTorch's driver shim do: dlopen("libcuda.so.1", RTLD_LOCAL), then dlsym
 * on that handle, for cuGetProcAddress_v2 and for cuMemAlloc_v2 itself.  It
 * is not linked with libcuda, so no symbol lookup of the dynamic linker
 * ever reaches the profiler's hooks.
 *
 * Keeps PH_PROC_BYTES allocated through cuGetProcAddress_v2 and
 * PH_DIRECT_BYTES allocated through the dlsym'd cuMemAlloc_v2.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "tide-cuda-abi.h"
#include "tide-standin.h"

#include "tidemark.h"

#define PH_PROC_BYTES   (300 * 1024)
#define PH_DIRECT_BYTES (500 * 1024)

typedef TideCuResult (*InitFn) (unsigned int);
typedef TideCuResult (*ProcFn) (const char *, void **, int, uint64_t,
                                TideCuProcAddressStatus *);
typedef TideCuResult (*AllocFn) (TideCuDeviceptr *, size_t);

static void *
symbol (void       *handle,
        const char *name)
{
  void *fn = dlsym (handle, name);

  if (fn == NULL)
    {
      fprintf (stderr, "no %s: %s\n", name, dlerror ());
      exit (1);
    }
  return fn;
}

__attribute__ ((noinline)) static TideCuDeviceptr
alloc_private (AllocFn alloc_fn,
               size_t  size)
{
  TideCuDeviceptr p = 0;

  if (alloc_fn (&p, size) != TIDE_CU_SUCCESS)
    exit (1);
  return p;
}

int
main (void)
{
  void *handle = dlopen (TIDE_STANDIN_CUDA, RTLD_NOW | RTLD_LOCAL);
  TideCuProcAddressStatus status;
  void *entry = NULL;
  ProcFn proc;

  if (handle == NULL)
    {
      fprintf (stderr, "cuda-private-handle: %s\n", dlerror ());
      return 1;
    }
  ((InitFn) symbol (handle, "cuInit")) (0);
  proc = (ProcFn) symbol (handle, "cuGetProcAddress_v2");
  if (proc ("cuMemAlloc", &entry, TIDE_STANDIN_CUDA_VERSION, TIDE_CU_GET_PROC_ADDRESS_DEFAULT, &status)
      != TIDE_CU_SUCCESS || entry == NULL)
    return 1;

  alloc_private ((AllocFn) entry, PH_PROC_BYTES);
  alloc_private ((AllocFn) symbol (handle, "cuMemAlloc_v2"), PH_DIRECT_BYTES);
  tidemark_step (NULL);
  printf ("cuda-private-handle done\n");
  return 0;
}
