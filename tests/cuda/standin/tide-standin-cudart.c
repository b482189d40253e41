/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-standin-cudart.c: a stand-in for the CUDA runtime (libcudart.so.13),
 * for tests without a GPU.  The real names and signatures, from
 * cuda_runtime_api.h; every call goes down to the stand-in driver through the
 * dynamic linker, so under the profiler a runtime call also passes through
 * the profiler's driver hooks, which must not count it twice.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "tide-standin.h"

#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__ ((visibility ("default")))

static cudaError_t
from_cu (CUresult r)
{
  switch (r)
    {
    case CUDA_SUCCESS:
      return cudaSuccess;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return cudaErrorMemoryAllocation;
    case CUDA_ERROR_INVALID_DEVICE:
      return cudaErrorInvalidDevice;
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
      return cudaErrorHostMemoryNotRegistered;
    default:
      return cudaErrorInvalidValue;
    }
}

EXPORT cudaError_t CUDARTAPI
cudaGetDeviceCount (int *count)
{
  return from_cu (cuDeviceGetCount (count));
}

EXPORT cudaError_t CUDARTAPI
cudaSetDevice (int device)
{
  CUcontext ctx;
  CUresult r = cuDevicePrimaryCtxRetain (&ctx, device);

  if (device < 0 || device >= tide_standin_device_count ())
    return cudaErrorInvalidDevice;
  return from_cu (r == CUDA_SUCCESS ? cuCtxSetCurrent (ctx) : r);
}

EXPORT cudaError_t CUDARTAPI
cudaGetDevice (int *device)
{
  *device = tide_standin_current_device ();
  return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI
cudaRuntimeGetVersion (int *version)
{
  *version = CUDART_VERSION;
  return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI
cudaDeviceSynchronize (void)
{
  return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI
cudaStreamSynchronize (cudaStream_t stream)
{
  (void) stream;
  return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI
cudaMemGetInfo (size_t *free_bytes,
                size_t *total)
{
  return from_cu (cuMemGetInfo_v2 (free_bytes, total));
}

EXPORT cudaError_t CUDARTAPI
cudaMalloc (void   **ptr,
            size_t   size)
{
  CUdeviceptr d = 0;
  CUresult r = cuMemAlloc_v2 (&d, size);

  *ptr = (void *) (uintptr_t) d;
  return from_cu (r);
}

EXPORT cudaError_t CUDARTAPI
cudaMallocManaged (void         **ptr,
                   size_t         size,
                   unsigned int   flags)
{
  (void) flags;
  return cudaMalloc (ptr, size);
}

EXPORT cudaError_t CUDARTAPI
cudaMallocPitch (void   **ptr,
                 size_t  *pitch,
                 size_t   width,
                 size_t   height)
{
  *pitch = (width + 511) & ~(size_t) 511;
  return cudaMalloc (ptr, *pitch * height);
}

EXPORT cudaError_t CUDARTAPI
cudaMallocAsync (void         **ptr,
                 size_t         size,
                 cudaStream_t   stream)
{
  CUdeviceptr d = 0;
  CUresult r = cuMemAllocAsync (&d, size, (CUstream) stream);

  *ptr = (void *) (uintptr_t) d;
  return from_cu (r);
}

EXPORT cudaError_t CUDARTAPI
cudaFree (void *ptr)
{
  return from_cu (cuMemFree_v2 ((CUdeviceptr) (uintptr_t) ptr));
}

EXPORT cudaError_t CUDARTAPI
cudaFreeAsync (void         *ptr,
               cudaStream_t  stream)
{
  return from_cu (cuMemFreeAsync ((CUdeviceptr) (uintptr_t) ptr, (CUstream) stream));
}

EXPORT cudaError_t CUDARTAPI
cudaMallocHost (void   **ptr,
                size_t   size)
{
  return from_cu (cuMemHostAlloc (ptr, size, 0));
}

EXPORT cudaError_t CUDARTAPI
cudaHostAlloc (void         **ptr,
               size_t         size,
               unsigned int   flags)
{
  return from_cu (cuMemHostAlloc (ptr, size, flags));
}

EXPORT cudaError_t CUDARTAPI
cudaFreeHost (void *ptr)
{
  return from_cu (cuMemFreeHost (ptr));
}

EXPORT cudaError_t CUDARTAPI
cudaHostRegister (void         *ptr,
                  size_t        size,
                  unsigned int  flags)
{
  return from_cu (cuMemHostRegister_v2 (ptr, size, flags));
}

EXPORT cudaError_t CUDARTAPI
cudaHostUnregister (void *ptr)
{
  return from_cu (cuMemHostUnregister (ptr));
}

EXPORT cudaError_t CUDARTAPI
cudaPointerGetAttributes (struct cudaPointerAttributes *attr,
                          const void                   *ptr)
{
  unsigned int type = 0;
  int device = -1;

  memset (attr, 0, sizeof *attr);
  if (cuPointerGetAttribute (&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                             (CUdeviceptr) (uintptr_t) ptr) != CUDA_SUCCESS)
    {
      attr->type = cudaMemoryTypeUnregistered;
      attr->device = -2;
      attr->hostPointer = (void *) ptr;
      return cudaSuccess;
    }
  cuPointerGetAttribute (&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                         (CUdeviceptr) (uintptr_t) ptr);
  attr->type = type == CU_MEMORYTYPE_DEVICE ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
  attr->device = device;
  attr->devicePointer = (void *) ptr;
  return cudaSuccess;
}

/* Plain memcpy through the driver; the direction only picks the call. */
static cudaError_t
copy (void                *dst,
      const void          *src,
      size_t               n,
      enum cudaMemcpyKind  kind)
{
  switch (kind)
    {
    case cudaMemcpyHostToDevice:
      return from_cu (cuMemcpyHtoD_v2 ((CUdeviceptr) (uintptr_t) dst, src, n));
    case cudaMemcpyDeviceToHost:
      return from_cu (cuMemcpyDtoH_v2 (dst, (CUdeviceptr) (uintptr_t) src, n));
    case cudaMemcpyDeviceToDevice:
      return from_cu (cuMemcpyDtoD_v2 ((CUdeviceptr) (uintptr_t) dst,
                                       (CUdeviceptr) (uintptr_t) src, n));
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
      memmove (dst, src, n);
      return cudaSuccess;
    default:
      return cudaErrorInvalidMemcpyDirection;
    }
}

EXPORT cudaError_t CUDARTAPI
cudaMemcpy (void                *dst,
            const void          *src,
            size_t               n,
            enum cudaMemcpyKind  kind)
{
  return copy (dst, src, n, kind);
}

EXPORT cudaError_t CUDARTAPI
cudaMemcpyAsync (void                *dst,
                 const void          *src,
                 size_t               n,
                 enum cudaMemcpyKind  kind,
                 cudaStream_t         stream)
{
  (void) stream;
  return copy (dst, src, n, kind);
}

EXPORT cudaError_t CUDARTAPI
cudaMemcpy2D (void                *dst,
              size_t               dpitch,
              const void          *src,
              size_t               spitch,
              size_t               width,
              size_t               height,
              enum cudaMemcpyKind  kind)
{
  for (size_t row = 0; row < height; row++)
    {
      cudaError_t e = copy ((char *) dst + row * dpitch, (const char *) src + row * spitch,
                            width, kind);
      if (e != cudaSuccess)
        return e;
    }
  return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI
cudaMemcpyPeer (void       *dst,
                int         dst_device,
                const void *src,
                int         src_device,
                size_t      n)
{
  (void) dst_device; (void) src_device;
  return copy (dst, src, n, cudaMemcpyDeviceToDevice);
}

/* Entry points of the driver, as the real runtime hands them out. */
EXPORT cudaError_t CUDARTAPI
cudaGetDriverEntryPointByVersion (const char                           *symbol,
                                  void                                **fn,
                                  unsigned int                          version,
                                  unsigned long long                    flags,
                                  enum cudaDriverEntryPointQueryResult *status)
{
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress_v2 (symbol, fn, (int) version, flags, &q);

  if (status != NULL)
    *status = q == CU_GET_PROC_ADDRESS_SUCCESS ? cudaDriverEntryPointSuccess
                                                : cudaDriverEntryPointSymbolNotFound;
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorSymbolNotFound;
}

EXPORT cudaError_t CUDARTAPI
cudaGetDriverEntryPoint (const char                           *symbol,
                         void                                **fn,
                         unsigned long long                    flags,
                         enum cudaDriverEntryPointQueryResult *status)
{
  return cudaGetDriverEntryPointByVersion (symbol, fn, CUDART_VERSION, flags, status);
}
