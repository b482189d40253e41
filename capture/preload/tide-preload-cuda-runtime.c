/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-cuda-runtime.c: hooks on the CUDA runtime (libcudart).
 *
 * Allocations are recorded after the real call succeeds, frees before the
 * real call; an allocation that fails for want of memory is recorded as a
 * failure, with its size and stack.  A synchronous copy records the call's duration; an
 * asynchronous one (cudaMemcpyAsync) records the time to enqueue it, which
 * is what the host thread spent, not the copy itself.  Copies between two
 * buffers of one device are not transfers and are not recorded; copies
 * between devices (cudaMemcpyPeer, or cudaMemcpyDefault across devices)
 * are, as device->device on the destination device.
 */
#include "config.h"

#include "tide-preload-cuda.h"

#include "tide-cuda-abi.h"

typedef TideCudaError (*MallocFn)      (void **, size_t);
typedef TideCudaError (*MallocFlagsFn) (void **, size_t, unsigned int);
typedef TideCudaError (*MallocAsyncFn) (void **, size_t, TideCudaStream);
typedef TideCudaError (*MallocPitchFn) (void **, size_t *, size_t, size_t);
typedef TideCudaError (*FreeFn)        (void *);
typedef TideCudaError (*FreeAsyncFn)   (void *, TideCudaStream);
typedef TideCudaError (*RegisterFn)    (void *, size_t, unsigned int);
typedef TideCudaError (*MemcpyFn)      (void *, const void *, size_t, TideCudaMemcpyKind);
typedef TideCudaError (*MemcpyAsyncFn) (void *, const void *, size_t, TideCudaMemcpyKind,
                                        TideCudaStream);
typedef TideCudaError (*Memcpy2DFn)    (void *, size_t, const void *, size_t, size_t, size_t,
                                        TideCudaMemcpyKind);
typedef TideCudaError (*MemcpyPeerFn)  (void *, int, const void *, int, size_t);
typedef TideCudaError (*AttrFn)        (TideCudaPointerAttributes *, const void *);
typedef TideCudaError (*EntryFn)       (const char *, void **, unsigned long long,
                                        TideCudaEntryPointStatus *);
typedef TideCudaError (*EntryVersionFn) (const char *, void **, unsigned int, unsigned long long,
                                         TideCudaEntryPointStatus *);

/* Runs the real allocation one level deeper, then records it, or its
 * failure for want of memory when @api (a TideWireApi) is not 0. */
#define TIDE_CUDA_ALLOC(call, ptr, size, kind, device, api)             \
  do                                                                    \
    {                                                                   \
      bool rec_ = tide_cuda_recording ();                               \
                                                                        \
      tide_cuda_depth++;                                                \
      err = (call);                                                     \
      tide_cuda_depth--;                                                \
      if (rec_ && err == TIDE_CUDA_SUCCESS && (ptr) != NULL)            \
        tide_cuda_record_alloc ((uintptr_t) (ptr), (size), (kind), (device)); \
      else if (rec_ && (api) != 0 && err == TIDE_CUDA_ERROR_MEMORY_ALLOCATION) \
        tide_cuda_record_failure ((api), err, (size), (kind), (device)); \
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

TIDE_EXPORT TideCudaError
cudaMalloc (void   **ptr,
            size_t   size)
{
  TIDE_CUDA_REAL (MallocFn, cudaMalloc);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_ALLOC (real (ptr, size), ptr ? *ptr : NULL, size, TIDE_KIND_DEVICE,
                   tide_cuda_runtime_device (), TIDE_WIRE_API_CUDA_MALLOC);
  return err;
}

TIDE_EXPORT TideCudaError
cudaMallocManaged (void         **ptr,
                   size_t         size,
                   unsigned int   flags)
{
  TIDE_CUDA_REAL (MallocFlagsFn, cudaMallocManaged);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_ALLOC (real (ptr, size, flags), ptr ? *ptr : NULL, size, TIDE_KIND_DEVICE,
                   tide_cuda_runtime_device (), TIDE_WIRE_API_CUDA_MALLOC_MANAGED);
  return err;
}

TIDE_EXPORT TideCudaError
cudaMallocPitch (void   **ptr,
                 size_t  *pitch,
                 size_t   width,
                 size_t   height)
{
  TIDE_CUDA_REAL (MallocPitchFn, cudaMallocPitch);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_ALLOC (real (ptr, pitch, width, height), ptr ? *ptr : NULL,
                   err == TIDE_CUDA_SUCCESS && pitch ? *pitch * height : width * height,
                   TIDE_KIND_DEVICE,
                   tide_cuda_runtime_device (), TIDE_WIRE_API_CUDA_MALLOC_PITCH);
  return err;
}

TIDE_EXPORT TideCudaError
cudaMallocAsync (void           **ptr,
                 size_t           size,
                 TideCudaStream   stream)
{
  TIDE_CUDA_REAL (MallocAsyncFn, cudaMallocAsync);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_ALLOC (real (ptr, size, stream), ptr ? *ptr : NULL, size, TIDE_KIND_DEVICE,
                   tide_cuda_runtime_device (), TIDE_WIRE_API_CUDA_MALLOC_ASYNC);
  return err;
}

TIDE_EXPORT TideCudaError
cudaFree (void *ptr)
{
  TIDE_CUDA_REAL (FreeFn, cudaFree);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  if (tide_cuda_recording ())
    tide_cuda_record_free ((uintptr_t) ptr);
  TIDE_CUDA_PASS (real (ptr));
  return err;
}

TIDE_EXPORT TideCudaError
cudaFreeAsync (void           *ptr,
               TideCudaStream  stream)
{
  TIDE_CUDA_REAL (FreeAsyncFn, cudaFreeAsync);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  if (tide_cuda_recording ())
    tide_cuda_record_free ((uintptr_t) ptr);
  TIDE_CUDA_PASS (real (ptr, stream));
  return err;
}

TIDE_EXPORT TideCudaError
cudaMallocHost (void   **ptr,
                size_t   size)
{
  TIDE_CUDA_REAL (MallocFn, cudaMallocHost);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_ALLOC (real (ptr, size), ptr ? *ptr : NULL, size, TIDE_KIND_PINNED, -1,
                   TIDE_WIRE_API_CUDA_MALLOC_HOST);
  return err;
}

TIDE_EXPORT TideCudaError
cudaHostAlloc (void         **ptr,
               size_t         size,
               unsigned int   flags)
{
  TIDE_CUDA_REAL (MallocFlagsFn, cudaHostAlloc);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_ALLOC (real (ptr, size, flags), ptr ? *ptr : NULL, size, TIDE_KIND_PINNED, -1,
                   TIDE_WIRE_API_CUDA_HOST_ALLOC);
  return err;
}

TIDE_EXPORT TideCudaError
cudaFreeHost (void *ptr)
{
  TIDE_CUDA_REAL (FreeFn, cudaFreeHost);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  if (tide_cuda_recording ())
    tide_cuda_record_free ((uintptr_t) ptr);
  TIDE_CUDA_PASS (real (ptr));
  return err;
}

/* Registered memory is host memory that is now pinned: recorded as a
 * pinned block over the same bytes. */
TIDE_EXPORT TideCudaError
cudaHostRegister (void         *ptr,
                  size_t        size,
                  unsigned int  flags)
{
  TIDE_CUDA_REAL (RegisterFn, cudaHostRegister);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  /* Registering memory allocates none: its failure is no out-of-memory. */
  TIDE_CUDA_ALLOC (real (ptr, size, flags), ptr, size, TIDE_KIND_PINNED, -1, 0);
  return err;
}

TIDE_EXPORT TideCudaError
cudaHostUnregister (void *ptr)
{
  TIDE_CUDA_REAL (FreeFn, cudaHostUnregister);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
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
  TideCudaPointerAttributes attr;

  if (fn == NULL || fn (&attr, p) != TIDE_CUDA_SUCCESS)
    return -1;
  return attr.type == TIDE_CUDA_MEMORY_TYPE_DEVICE || attr.type == TIDE_CUDA_MEMORY_TYPE_MANAGED
         ? attr.device : -1;
}

/* Direction and device of a copy, or 0 when it is no transfer. */
static uint32_t
classify (void               *dst,
          const void         *src,
          TideCudaMemcpyKind  kind,
          int                *device)
{
  int d, s;

  switch (kind)
    {
    case TIDE_CUDA_MEMCPY_HOST_TO_DEVICE:
      *device = tide_cuda_runtime_device ();
      return TIDE_CUDA_H2D;
    case TIDE_CUDA_MEMCPY_DEVICE_TO_HOST:
      *device = tide_cuda_runtime_device ();
      return TIDE_CUDA_D2H;
    case TIDE_CUDA_MEMCPY_DEFAULT:
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
      if (dir_ && err == TIDE_CUDA_SUCCESS)                             \
        tide_cuda_record_transfer (dir_, (bytes), device_, start_);     \
    }                                                                   \
  while (0)

TIDE_EXPORT TideCudaError
cudaMemcpy (void               *dst,
            const void         *src,
            size_t              n,
            TideCudaMemcpyKind  kind)
{
  TIDE_CUDA_REAL (MemcpyFn, cudaMemcpy);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_COPY (real (dst, src, n, kind), dst, src, kind, n);
  return err;
}

TIDE_EXPORT TideCudaError
cudaMemcpyAsync (void               *dst,
                 const void         *src,
                 size_t              n,
                 TideCudaMemcpyKind  kind,
                 TideCudaStream      stream)
{
  TIDE_CUDA_REAL (MemcpyAsyncFn, cudaMemcpyAsync);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_COPY (real (dst, src, n, kind, stream), dst, src, kind, n);
  return err;
}

TIDE_EXPORT TideCudaError
cudaMemcpy2D (void               *dst,
              size_t              dpitch,
              const void         *src,
              size_t              spitch,
              size_t              width,
              size_t              height,
              TideCudaMemcpyKind  kind)
{
  TIDE_CUDA_REAL (Memcpy2DFn, cudaMemcpy2D);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_COPY (real (dst, dpitch, src, spitch, width, height, kind), dst, src, kind,
                  (uint64_t) width * height);
  return err;
}

TIDE_EXPORT TideCudaError
cudaMemcpyPeer (void       *dst,
                int         dst_device,
                const void *src,
                int         src_device,
                size_t      n)
{
  TIDE_CUDA_REAL (MemcpyPeerFn, cudaMemcpyPeer);
  bool rec = tide_cuda_recording () && dst_device != src_device;
  uint64_t start = rec ? tide_now_ns () : 0;
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_PASS (real (dst, dst_device, src, src_device, n));
  if (rec && err == TIDE_CUDA_SUCCESS)
    tide_cuda_record_transfer (TIDE_CUDA_D2D, n, dst_device, start);
  return err;
}

typedef TideCudaError (*VersionFn) (int *);

/* The version of the runtime the program runs with, whose entry points
 * cudaGetDriverEntryPoint hands out; 0 (nothing wrapped) when it cannot
 * say.  It is asked, not compiled in: one build of the preload serves
 * programs with a CUDA 11, 12 or 13 runtime. */
static int
runtime_version (void)
{
  static void *_Atomic slot;
  VersionFn fn = (VersionFn) tide_cuda_next (&slot, "cudaRuntimeGetVersion");
  int version = 0;

  if (fn == NULL || fn (&version) != TIDE_CUDA_SUCCESS)
    return 0;
  return version;
}

/* Driver entry points handed out by the runtime get our wrappers too. */
TIDE_EXPORT TideCudaError
cudaGetDriverEntryPoint (const char                *symbol,
                         void                     **fn,
                         unsigned long long         flags,
                         TideCudaEntryPointStatus  *status)
{
  TIDE_CUDA_REAL (EntryFn, cudaGetDriverEntryPoint);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_PASS (real (symbol, fn, flags, status));
  if (err == TIDE_CUDA_SUCCESS && fn != NULL && *fn != NULL && symbol != NULL)
    *fn = tide_cuda_wrap_entry (symbol, runtime_version (), *fn);
  return err;
}

TIDE_EXPORT TideCudaError
cudaGetDriverEntryPointByVersion (const char                *symbol,
                                  void                     **fn,
                                  unsigned int               version,
                                  unsigned long long         flags,
                                  TideCudaEntryPointStatus  *status)
{
  TIDE_CUDA_REAL (EntryVersionFn, cudaGetDriverEntryPointByVersion);
  TideCudaError err;

  if (real == NULL)
    return TIDE_CUDA_ERROR_INITIALIZATION;
  TIDE_CUDA_PASS (real (symbol, fn, version, flags, status));
  if (err == TIDE_CUDA_SUCCESS && fn != NULL && *fn != NULL && symbol != NULL)
    *fn = tide_cuda_wrap_entry (symbol, (int) version, *fn);
  return err;
}
