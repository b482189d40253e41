/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-cuda-runtime.c: hooks on the CUDA runtime (libcudart).
 *
 * Allocations are recorded after the real call succeeds, frees before the
 * real call.  A synchronous copy records the call's duration; an
 * asynchronous one (cudaMemcpyAsync) records the time to enqueue it, which
 * is what the host thread spent, not the copy itself.  Copies between two
 * buffers of one device are not transfers and are not recorded; copies
 * between devices (cudaMemcpyPeer, or cudaMemcpyDefault across devices)
 * are, as device->device on the destination device.
 */
#include "config.h"

#include "tide-preload-cuda.h"

#include <cuda_runtime_api.h>

typedef cudaError_t (*MallocFn)      (void **, size_t);
typedef cudaError_t (*MallocFlagsFn) (void **, size_t, unsigned int);
typedef cudaError_t (*MallocAsyncFn) (void **, size_t, cudaStream_t);
typedef cudaError_t (*MallocPitchFn) (void **, size_t *, size_t, size_t);
typedef cudaError_t (*FreeFn)        (void *);
typedef cudaError_t (*FreeAsyncFn)   (void *, cudaStream_t);
typedef cudaError_t (*RegisterFn)    (void *, size_t, unsigned int);
typedef cudaError_t (*MemcpyFn)      (void *, const void *, size_t, enum cudaMemcpyKind);
typedef cudaError_t (*MemcpyAsyncFn) (void *, const void *, size_t, enum cudaMemcpyKind,
                                      cudaStream_t);
typedef cudaError_t (*Memcpy2DFn)    (void *, size_t, const void *, size_t, size_t, size_t,
                                      enum cudaMemcpyKind);
typedef cudaError_t (*MemcpyPeerFn)  (void *, int, const void *, int, size_t);
typedef cudaError_t (*AttrFn)        (struct cudaPointerAttributes *, const void *);
typedef cudaError_t (*EntryFn)       (const char *, void **, unsigned long long,
                                      enum cudaDriverEntryPointQueryResult *);
typedef cudaError_t (*EntryVersionFn) (const char *, void **, unsigned int, unsigned long long,
                                       enum cudaDriverEntryPointQueryResult *);

/* Runs the real allocation one level deeper, then records it. */
#define TIDE_CUDA_ALLOC(call, ptr, size, kind, device)                  \
  do                                                                    \
    {                                                                   \
      bool rec_ = tide_cuda_recording ();                               \
                                                                        \
      tide_cuda_depth++;                                                \
      err = (call);                                                     \
      tide_cuda_depth--;                                                \
      if (rec_ && err == cudaSuccess && (ptr) != NULL)                  \
        tide_cuda_record_alloc ((uintptr_t) (ptr), (size), (kind), (device)); \
    }                                                                   \
  while (0)

#define TIDE_CUDA_PASS(call)                                            \
  do                                                                    \
    {                                                                   \
      tide_cuda_depth++;                                                \
      err = (call);                                                     \
      tide_cuda_depth--;                                                \
    }                                                                   \
  while (0)

static cudaError_t
device_alloc (MallocFn   real,
              void     **ptr,
              size_t     size)
{
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_ALLOC (real (ptr, size), ptr ? *ptr : NULL, size, TIDE_KIND_DEVICE,
                   tide_cuda_runtime_device ());
  return err;
}

TIDE_EXPORT cudaError_t
cudaMalloc (void   **ptr,
            size_t   size)
{
  TIDE_CUDA_REAL (MallocFn, cudaMalloc);

  return device_alloc (real, ptr, size);
}

TIDE_EXPORT cudaError_t
cudaMallocManaged (void         **ptr,
                   size_t         size,
                   unsigned int   flags)
{
  TIDE_CUDA_REAL (MallocFlagsFn, cudaMallocManaged);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_ALLOC (real (ptr, size, flags), ptr ? *ptr : NULL, size, TIDE_KIND_DEVICE,
                   tide_cuda_runtime_device ());
  return err;
}

TIDE_EXPORT cudaError_t
cudaMallocPitch (void   **ptr,
                 size_t  *pitch,
                 size_t   width,
                 size_t   height)
{
  TIDE_CUDA_REAL (MallocPitchFn, cudaMallocPitch);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_ALLOC (real (ptr, pitch, width, height), ptr ? *ptr : NULL,
                   pitch ? *pitch * height : 0, TIDE_KIND_DEVICE, tide_cuda_runtime_device ());
  return err;
}

TIDE_EXPORT cudaError_t
cudaMallocAsync (void         **ptr,
                 size_t         size,
                 cudaStream_t   stream)
{
  TIDE_CUDA_REAL (MallocAsyncFn, cudaMallocAsync);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_ALLOC (real (ptr, size, stream), ptr ? *ptr : NULL, size, TIDE_KIND_DEVICE,
                   tide_cuda_runtime_device ());
  return err;
}

TIDE_EXPORT cudaError_t
cudaFree (void *ptr)
{
  TIDE_CUDA_REAL (FreeFn, cudaFree);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  if (tide_cuda_recording ())
    tide_cuda_record_free ((uintptr_t) ptr);
  TIDE_CUDA_PASS (real (ptr));
  return err;
}

TIDE_EXPORT cudaError_t
cudaFreeAsync (void         *ptr,
               cudaStream_t  stream)
{
  TIDE_CUDA_REAL (FreeAsyncFn, cudaFreeAsync);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  if (tide_cuda_recording ())
    tide_cuda_record_free ((uintptr_t) ptr);
  TIDE_CUDA_PASS (real (ptr, stream));
  return err;
}

TIDE_EXPORT cudaError_t
cudaMallocHost (void   **ptr,
                size_t   size)
{
  TIDE_CUDA_REAL (MallocFn, cudaMallocHost);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_ALLOC (real (ptr, size), ptr ? *ptr : NULL, size, TIDE_KIND_PINNED, -1);
  return err;
}

TIDE_EXPORT cudaError_t
cudaHostAlloc (void         **ptr,
               size_t         size,
               unsigned int   flags)
{
  TIDE_CUDA_REAL (MallocFlagsFn, cudaHostAlloc);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_ALLOC (real (ptr, size, flags), ptr ? *ptr : NULL, size, TIDE_KIND_PINNED, -1);
  return err;
}

TIDE_EXPORT cudaError_t
cudaFreeHost (void *ptr)
{
  TIDE_CUDA_REAL (FreeFn, cudaFreeHost);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  if (tide_cuda_recording ())
    tide_cuda_record_free ((uintptr_t) ptr);
  TIDE_CUDA_PASS (real (ptr));
  return err;
}

/* Registered memory is host memory that is now pinned: recorded as a
 * pinned block over the same bytes. */
TIDE_EXPORT cudaError_t
cudaHostRegister (void         *ptr,
                  size_t        size,
                  unsigned int  flags)
{
  TIDE_CUDA_REAL (RegisterFn, cudaHostRegister);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_ALLOC (real (ptr, size, flags), ptr, size, TIDE_KIND_PINNED, -1);
  return err;
}

TIDE_EXPORT cudaError_t
cudaHostUnregister (void *ptr)
{
  TIDE_CUDA_REAL (FreeFn, cudaHostUnregister);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  if (tide_cuda_recording ())
    tide_cuda_record_free ((uintptr_t) ptr);
  TIDE_CUDA_PASS (real (ptr));
  return err;
}

/* Device of p when it is device (or managed) memory, else -1. */
static int
pointer_device (const void *p)
{
  static void *_Atomic slot;
  AttrFn fn = (AttrFn) tide_cuda_next (&slot, "cudaPointerGetAttributes");
  struct cudaPointerAttributes attr;

  if (fn == NULL || fn (&attr, p) != cudaSuccess)
    return -1;
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged
         ? attr.device : -1;
}

/* Direction and device of a copy, or 0 when it is no transfer. */
static uint32_t
classify (void                *dst,
          const void          *src,
          enum cudaMemcpyKind  kind,
          int                 *device)
{
  int d, s;

  switch (kind)
    {
    case cudaMemcpyHostToDevice:
      *device = tide_cuda_runtime_device ();
      return TIDE_CUDA_H2D;
    case cudaMemcpyDeviceToHost:
      *device = tide_cuda_runtime_device ();
      return TIDE_CUDA_D2H;
    case cudaMemcpyDefault:
      d = pointer_device (dst);
      s = pointer_device (src);
      *device = d >= 0 ? d : s;
      if (d >= 0 && s >= 0)
        return d != s ? TIDE_CUDA_D2D : 0;
      return d >= 0 ? TIDE_CUDA_H2D : s >= 0 ? TIDE_CUDA_D2H : 0;
    default:
      return 0;
    }
}

/* The copy `call` of `bytes` bytes, timed and recorded when it succeeds. */
#define TIDE_CUDA_COPY(call, dst, src, kind, bytes)                     \
  do                                                                    \
    {                                                                   \
      int device_ = 0;                                                  \
      uint32_t dir_ = tide_cuda_recording ()                            \
                      ? classify ((dst), (src), (kind), &device_) : 0;  \
      uint64_t start_ = dir_ ? tide_now_ns () : 0;                      \
                                                                        \
      TIDE_CUDA_PASS (call);                                            \
      if (dir_ && err == cudaSuccess)                                   \
        tide_cuda_record_transfer (dir_, (bytes), device_, start_);     \
    }                                                                   \
  while (0)

TIDE_EXPORT cudaError_t
cudaMemcpy (void                *dst,
            const void          *src,
            size_t               n,
            enum cudaMemcpyKind  kind)
{
  TIDE_CUDA_REAL (MemcpyFn, cudaMemcpy);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_COPY (real (dst, src, n, kind), dst, src, kind, n);
  return err;
}

TIDE_EXPORT cudaError_t
cudaMemcpyAsync (void                *dst,
                 const void          *src,
                 size_t               n,
                 enum cudaMemcpyKind  kind,
                 cudaStream_t         stream)
{
  TIDE_CUDA_REAL (MemcpyAsyncFn, cudaMemcpyAsync);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_COPY (real (dst, src, n, kind, stream), dst, src, kind, n);
  return err;
}

TIDE_EXPORT cudaError_t
cudaMemcpy2D (void                *dst,
              size_t               dpitch,
              const void          *src,
              size_t               spitch,
              size_t               width,
              size_t               height,
              enum cudaMemcpyKind  kind)
{
  TIDE_CUDA_REAL (Memcpy2DFn, cudaMemcpy2D);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_COPY (real (dst, dpitch, src, spitch, width, height, kind), dst, src, kind,
                  (uint64_t) width * height);
  return err;
}

TIDE_EXPORT cudaError_t
cudaMemcpyPeer (void       *dst,
                int         dst_device,
                const void *src,
                int         src_device,
                size_t      n)
{
  TIDE_CUDA_REAL (MemcpyPeerFn, cudaMemcpyPeer);
  bool rec = tide_cuda_recording () && dst_device != src_device;
  uint64_t start = rec ? tide_now_ns () : 0;
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_PASS (real (dst, dst_device, src, src_device, n));
  if (rec && err == cudaSuccess)
    tide_cuda_record_transfer (TIDE_CUDA_D2D, n, dst_device, start);
  return err;
}

/* Driver entry points handed out by the runtime get our wrappers too. */
TIDE_EXPORT cudaError_t
cudaGetDriverEntryPoint (const char                           *symbol,
                         void                                **fn,
                         unsigned long long                    flags,
                         enum cudaDriverEntryPointQueryResult *status)
{
  TIDE_CUDA_REAL (EntryFn, cudaGetDriverEntryPoint);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_PASS (real (symbol, fn, flags, status));
  if (err == cudaSuccess && fn != NULL && *fn != NULL && symbol != NULL)
    *fn = tide_cuda_wrap_entry (symbol, CUDART_VERSION, *fn);
  return err;
}

TIDE_EXPORT cudaError_t
cudaGetDriverEntryPointByVersion (const char                           *symbol,
                                  void                                **fn,
                                  unsigned int                          version,
                                  unsigned long long                    flags,
                                  enum cudaDriverEntryPointQueryResult *status)
{
  TIDE_CUDA_REAL (EntryVersionFn, cudaGetDriverEntryPointByVersion);
  cudaError_t err;

  if (real == NULL)
    return cudaErrorInitializationError;
  TIDE_CUDA_PASS (real (symbol, fn, version, flags, status));
  if (err == cudaSuccess && fn != NULL && *fn != NULL && symbol != NULL)
    *fn = tide_cuda_wrap_entry (symbol, (int) version, *fn);
  return err;
}
