/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-standin-cudart.c: a stand-in for the CUDA runtime (libcudart.so.13),
 * for tests without a GPU.  The real names and signatures (tide-cuda-abi.h);
 * every call goes down to the stand-in driver through the
 * dynamic linker, so under the profiler a runtime call also passes through
 * the profiler's driver hooks, which must not count it twice.
 */
#include "tide-cuda-abi.h"

#include "tide-standin.h"

#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__ ((visibility ("default")))

static TideCudaError
from_cu (TideCuResult r)
{
  switch (r)
    {
    case TIDE_CU_SUCCESS:
      return TIDE_CUDA_SUCCESS;
    case TIDE_CU_ERROR_OUT_OF_MEMORY:
      return TIDE_CUDA_ERROR_MEMORY_ALLOCATION;
    case TIDE_CU_ERROR_INVALID_DEVICE:
      return TIDE_CUDA_ERROR_INVALID_DEVICE;
    case TIDE_CU_ERROR_HOST_MEMORY_NOT_REGISTERED:
      return TIDE_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    default:
      return TIDE_CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT TideCudaError
cudaGetDeviceCount (int *count)
{
  return from_cu (cuDeviceGetCount (count));
}

EXPORT TideCudaError
cudaSetDevice (int device)
{
  TideCuContext ctx;
  TideCuResult r = cuDevicePrimaryCtxRetain (&ctx, device);

  if (device < 0 || device >= tide_standin_device_count ())
    return TIDE_CUDA_ERROR_INVALID_DEVICE;
  return from_cu (r == TIDE_CU_SUCCESS ? cuCtxSetCurrent (ctx) : r);
}

EXPORT TideCudaError
cudaGetDevice (int *device)
{
  *device = tide_standin_current_device ();
  return TIDE_CUDA_SUCCESS;
}

EXPORT TideCudaError
cudaRuntimeGetVersion (int *version)
{
  *version = TIDE_STANDIN_CUDA_VERSION;
  return TIDE_CUDA_SUCCESS;
}

EXPORT TideCudaError
cudaDeviceSynchronize (void)
{
  return TIDE_CUDA_SUCCESS;
}

EXPORT TideCudaError
cudaStreamSynchronize (TideCudaStream stream)
{
  (void) stream;
  return TIDE_CUDA_SUCCESS;
}

EXPORT TideCudaError
cudaMemGetInfo (size_t *free_bytes,
                size_t *total)
{
  return from_cu (cuMemGetInfo_v2 (free_bytes, total));
}

EXPORT TideCudaError
cudaMalloc (void   **ptr,
            size_t   size)
{
  TideCuDeviceptr d = 0;
  TideCuResult r = cuMemAlloc_v2 (&d, size);

  *ptr = (void *) (uintptr_t) d;
  return from_cu (r);
}

EXPORT TideCudaError
cudaMallocManaged (void         **ptr,
                   size_t         size,
                   unsigned int   flags)
{
  (void) flags;
  return cudaMalloc (ptr, size);
}

EXPORT TideCudaError
cudaMallocPitch (void   **ptr,
                 size_t  *pitch,
                 size_t   width,
                 size_t   height)
{
  *pitch = (width + 511) & ~(size_t) 511;
  return cudaMalloc (ptr, *pitch * height);
}

EXPORT TideCudaError
cudaMallocAsync (void           **ptr,
                 size_t           size,
                 TideCudaStream   stream)
{
  TideCuDeviceptr d = 0;
  TideCuResult r = cuMemAllocAsync (&d, size, (TideCuStream) stream);

  *ptr = (void *) (uintptr_t) d;
  return from_cu (r);
}

EXPORT TideCudaError
cudaFree (void *ptr)
{
  return from_cu (cuMemFree_v2 ((TideCuDeviceptr) (uintptr_t) ptr));
}

EXPORT TideCudaError
cudaFreeAsync (void           *ptr,
               TideCudaStream  stream)
{
  return from_cu (cuMemFreeAsync ((TideCuDeviceptr) (uintptr_t) ptr, (TideCuStream) stream));
}

EXPORT TideCudaError
cudaMallocHost (void   **ptr,
                size_t   size)
{
  return from_cu (cuMemHostAlloc (ptr, size, 0));
}

EXPORT TideCudaError
cudaHostAlloc (void         **ptr,
               size_t         size,
               unsigned int   flags)
{
  return from_cu (cuMemHostAlloc (ptr, size, flags));
}

EXPORT TideCudaError
cudaFreeHost (void *ptr)
{
  return from_cu (cuMemFreeHost (ptr));
}

EXPORT TideCudaError
cudaHostRegister (void         *ptr,
                  size_t        size,
                  unsigned int  flags)
{
  return from_cu (cuMemHostRegister_v2 (ptr, size, flags));
}

EXPORT TideCudaError
cudaHostUnregister (void *ptr)
{
  return from_cu (cuMemHostUnregister (ptr));
}

EXPORT TideCudaError
cudaPointerGetAttributes (TideCudaPointerAttributes *attr,
                          const void                *ptr)
{
  unsigned int type = 0;
  int device = -1;

  memset (attr, 0, sizeof *attr);
  if (cuPointerGetAttribute (&type, TIDE_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                             (TideCuDeviceptr) (uintptr_t) ptr) != TIDE_CU_SUCCESS)
    {
      attr->type = TIDE_CUDA_MEMORY_TYPE_UNREGISTERED;
      attr->device = -2;
      attr->host_pointer = (void *) ptr;
      return TIDE_CUDA_SUCCESS;
    }
  cuPointerGetAttribute (&device, TIDE_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                         (TideCuDeviceptr) (uintptr_t) ptr);
  attr->type = type == TIDE_CU_MEMORYTYPE_DEVICE ? TIDE_CUDA_MEMORY_TYPE_DEVICE : TIDE_CUDA_MEMORY_TYPE_HOST;
  attr->device = device;
  attr->device_pointer = (void *) ptr;
  return TIDE_CUDA_SUCCESS;
}

/* Plain memcpy through the driver; the direction only picks the call. */
static TideCudaError
copy (void               *dst,
      const void         *src,
      size_t              n,
      TideCudaMemcpyKind  kind)
{
  switch (kind)
    {
    case TIDE_CUDA_MEMCPY_HOST_TO_DEVICE:
      return from_cu (cuMemcpyHtoD_v2 ((TideCuDeviceptr) (uintptr_t) dst, src, n));
    case TIDE_CUDA_MEMCPY_DEVICE_TO_HOST:
      return from_cu (cuMemcpyDtoH_v2 (dst, (TideCuDeviceptr) (uintptr_t) src, n));
    case TIDE_CUDA_MEMCPY_DEVICE_TO_DEVICE:
      return from_cu (cuMemcpyDtoD_v2 ((TideCuDeviceptr) (uintptr_t) dst,
                                       (TideCuDeviceptr) (uintptr_t) src, n));
    case TIDE_CUDA_MEMCPY_HOST_TO_HOST:
    case TIDE_CUDA_MEMCPY_DEFAULT:
      memmove (dst, src, n);
      return TIDE_CUDA_SUCCESS;
    default:
      return TIDE_CUDA_ERROR_INVALID_MEMCPY_DIRECTION;
    }
}

EXPORT TideCudaError
cudaMemcpy (void               *dst,
            const void         *src,
            size_t              n,
            TideCudaMemcpyKind  kind)
{
  return copy (dst, src, n, kind);
}

EXPORT TideCudaError
cudaMemcpyAsync (void               *dst,
                 const void         *src,
                 size_t              n,
                 TideCudaMemcpyKind  kind,
                 TideCudaStream      stream)
{
  (void) stream;
  return copy (dst, src, n, kind);
}

EXPORT TideCudaError
cudaMemcpy2D (void               *dst,
              size_t              dpitch,
              const void         *src,
              size_t              spitch,
              size_t              width,
              size_t              height,
              TideCudaMemcpyKind  kind)
{
  for (size_t row = 0; row < height; row++)
    {
      TideCudaError e = copy ((char *) dst + row * dpitch, (const char *) src + row * spitch,
                            width, kind);
      if (e != TIDE_CUDA_SUCCESS)
        return e;
    }
  return TIDE_CUDA_SUCCESS;
}

EXPORT TideCudaError
cudaMemcpyPeer (void       *dst,
                int         dst_device,
                const void *src,
                int         src_device,
                size_t      n)
{
  (void) dst_device; (void) src_device;
  return copy (dst, src, n, TIDE_CUDA_MEMCPY_DEVICE_TO_DEVICE);
}

/* Entry points of the driver, as the real runtime hands them out. */
EXPORT TideCudaError
cudaGetDriverEntryPointByVersion (const char                *symbol,
                                  void                     **fn,
                                  unsigned int               version,
                                  unsigned long long         flags,
                                  TideCudaEntryPointStatus  *status)
{
  TideCuProcAddressStatus q;
  TideCuResult r = cuGetProcAddress_v2 (symbol, fn, (int) version, flags, &q);

  if (status != NULL)
    *status = q == TIDE_CU_PROC_ADDRESS_SUCCESS ? TIDE_CUDA_ENTRY_POINT_SUCCESS
                                                : TIDE_CUDA_ENTRY_POINT_SYMBOL_NOT_FOUND;
  return r == TIDE_CU_SUCCESS ? TIDE_CUDA_SUCCESS : TIDE_CUDA_ERROR_SYMBOL_NOT_FOUND;
}

EXPORT TideCudaError
cudaGetDriverEntryPoint (const char                *symbol,
                         void                     **fn,
                         unsigned long long         flags,
                         TideCudaEntryPointStatus  *status)
{
  return cudaGetDriverEntryPointByVersion (symbol, fn, TIDE_STANDIN_CUDA_VERSION, flags, status);
}
