/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-cuda-driver.c: hooks on the CUDA driver (libcuda), reached
 * two ways: through the dynamic linker (exported under the real names), and
 * through entry points that cuGetProcAddress or cudaGetDriverEntryPoint
 * hand out, which we replace with wrappers of our own.
 *
 * Each tracked function has one body taking the real function, and two
 * thin entries: the exported hook, whose real function comes from dlsym, and
 * the entry-point wrapper, whose real function is the pointer the driver
 * returned the first time the entry was asked for.  A later request that
 * returns a different pointer for the same name (another stream mode) gets
 * the real pointer, unwrapped: one slot per name.
 *
 * An allocation that fails with CUDA_ERROR_OUT_OF_MEMORY is recorded as a
 * failure; cuMemCreate's, where physical memory runs out, is one too.
 *
 * Virtual memory (cuMemCreate/cuMemMap, PyTorch's expandable segments): the
 * bytes are recorded where they become usable, at cuMemMap (address, size,
 * the handle's device), and end at cuMemUnmap of the same address.
 *
 * The driver API does not exist for a program that is not linked against
 * it, and a driver loaded with a handle of its own (the real runtime does
 * this) is only seen through the runtime hooks.
 */
#include "config.h"

#include "tide-preload-cuda.h"
#include "tide-preload-objects.h"

#include "tide-cuda-abi.h"
#include <string.h>

typedef TideCuResult (*AllocFn)      (TideCuDeviceptr *, size_t);
typedef TideCuResult (*AllocAsyncFn) (TideCuDeviceptr *, size_t, TideCuStream);
typedef TideCuResult (*FreeFn)       (TideCuDeviceptr);
typedef TideCuResult (*FreeAsyncFn)  (TideCuDeviceptr, TideCuStream);
typedef TideCuResult (*HostAllocFn)  (void **, size_t, unsigned int);
typedef TideCuResult (*HostFreeFn)   (void *);
typedef TideCuResult (*CreateFn)     (TideCuMemHandle *, size_t,
                                      const TideCuMemAllocationProp *, unsigned long long);
typedef TideCuResult (*ReleaseFn)    (TideCuMemHandle);
typedef TideCuResult (*MapFn)        (TideCuDeviceptr, size_t, size_t, TideCuMemHandle,
                                      unsigned long long);
typedef TideCuResult (*UnmapFn)      (TideCuDeviceptr, size_t);
typedef TideCuResult (*HtoDFn)       (TideCuDeviceptr, const void *, size_t);
typedef TideCuResult (*DtoHFn)       (void *, TideCuDeviceptr, size_t);
typedef TideCuResult (*HtoDAsyncFn)  (TideCuDeviceptr, const void *, size_t, TideCuStream);
typedef TideCuResult (*DtoHAsyncFn)  (void *, TideCuDeviceptr, size_t, TideCuStream);
typedef TideCuResult (*ProcFn)       (const char *, void **, int, uint64_t);
typedef TideCuResult (*ProcV2Fn)     (const char *, void **, int, uint64_t,
                                      TideCuProcAddressStatus *);

#define PASS(call)          \
  do                        \
    {                       \
      tide_cuda_depth++;    \
      r = (call);           \
      tide_cuda_depth--;    \
    }                       \
  while (0)

/* ---- bodies ------------------------------------------------------------- */

static TideCuResult
mem_alloc (AllocFn          real,
           TideCuDeviceptr *dptr,
           size_t           size)
{
  bool rec = tide_cuda_recording ();
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  PASS (real (dptr, size));
  if (rec && r == TIDE_CU_SUCCESS && dptr != NULL)
    tide_cuda_record_alloc (*dptr, size, TIDE_KIND_DEVICE, tide_cuda_driver_device ());
  else if (rec && r == TIDE_CU_ERROR_OUT_OF_MEMORY)
    tide_cuda_record_failure (TIDE_WIRE_API_CU_MEM_ALLOC, r, size, TIDE_KIND_DEVICE,
                              tide_cuda_driver_device ());
  return r;
}

static TideCuResult
mem_alloc_async (AllocAsyncFn     real,
                 TideCuDeviceptr *dptr,
                 size_t           size,
                 TideCuStream     stream)
{
  bool rec = tide_cuda_recording ();
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  PASS (real (dptr, size, stream));
  if (rec && r == TIDE_CU_SUCCESS && dptr != NULL)
    tide_cuda_record_alloc (*dptr, size, TIDE_KIND_DEVICE, tide_cuda_driver_device ());
  else if (rec && r == TIDE_CU_ERROR_OUT_OF_MEMORY)
    tide_cuda_record_failure (TIDE_WIRE_API_CU_MEM_ALLOC_ASYNC, r, size, TIDE_KIND_DEVICE,
                              tide_cuda_driver_device ());
  return r;
}

static TideCuResult
mem_free (FreeFn          real,
          TideCuDeviceptr dptr)
{
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  if (tide_cuda_recording ())
    tide_cuda_record_free (dptr);
  PASS (real (dptr));
  return r;
}

static TideCuResult
mem_free_async (FreeAsyncFn     real,
                TideCuDeviceptr dptr,
                TideCuStream    stream)
{
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  if (tide_cuda_recording ())
    tide_cuda_record_free (dptr);
  PASS (real (dptr, stream));
  return r;
}

static TideCuResult
host_alloc (HostAllocFn    real,
            void         **pp,
            size_t         size,
            unsigned int   flags)
{
  bool rec = tide_cuda_recording ();
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  PASS (real (pp, size, flags));
  if (rec && r == TIDE_CU_SUCCESS && pp != NULL)
    tide_cuda_record_alloc ((uintptr_t) *pp, size, TIDE_KIND_PINNED, -1);
  else if (rec && r == TIDE_CU_ERROR_OUT_OF_MEMORY)
    tide_cuda_record_failure (TIDE_WIRE_API_CU_MEM_HOST_ALLOC, r, size, TIDE_KIND_PINNED, -1);
  return r;
}

static TideCuResult
host_free (HostFreeFn  real,
           void       *p)
{
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  if (tide_cuda_recording ())
    tide_cuda_record_free ((uintptr_t) p);
  PASS (real (p));
  return r;
}

static TideCuResult
mem_create (CreateFn                       real,
            TideCuMemHandle               *handle,
            size_t                         size,
            const TideCuMemAllocationProp *prop,
            unsigned long long             flags)
{
  bool rec = tide_cuda_recording ();
  TideCuResult r;
  int device;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  PASS (real (handle, size, prop, flags));
  device = prop != NULL && prop->location.type == TIDE_CU_MEM_LOCATION_TYPE_DEVICE
           ? prop->location.id : tide_cuda_driver_device ();
  if (rec && r == TIDE_CU_SUCCESS && handle != NULL && prop != NULL)
    tide_cuda_handle_add (*handle, size, device);
  else if (rec && r == TIDE_CU_ERROR_OUT_OF_MEMORY)
    tide_cuda_record_failure (TIDE_WIRE_API_CU_MEM_CREATE, r, size, TIDE_KIND_DEVICE, device);
  return r;
}

static TideCuResult
mem_release (ReleaseFn       real,
             TideCuMemHandle handle)
{
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  tide_cuda_handle_remove (handle);
  PASS (real (handle));
  return r;
}

static TideCuResult
mem_map (MapFn              real,
         TideCuDeviceptr    ptr,
         size_t             size,
         size_t             offset,
         TideCuMemHandle    handle,
         unsigned long long flags)
{
  bool rec = tide_cuda_recording ();
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  PASS (real (ptr, size, offset, handle, flags));
  if (rec && r == TIDE_CU_SUCCESS)
    tide_cuda_record_alloc (ptr, size, TIDE_KIND_DEVICE, tide_cuda_handle_device (handle));
  return r;
}

static TideCuResult
mem_unmap (UnmapFn         real,
           TideCuDeviceptr ptr,
           size_t          size)
{
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  if (tide_cuda_recording ())
    tide_cuda_record_free (ptr);
  PASS (real (ptr, size));
  return r;
}

#define COPY(call, dir, bytes)                                          \
  do                                                                    \
    {                                                                   \
      bool rec_ = tide_cuda_recording ();                               \
      uint64_t start_ = rec_ ? tide_now_ns () : 0;                      \
                                                                        \
      if (real == NULL)                                                 \
        return TIDE_CU_ERROR_NOT_INITIALIZED;                           \
      PASS (call);                                                      \
      if (rec_ && r == TIDE_CU_SUCCESS)                                 \
        tide_cuda_record_transfer ((dir), (bytes), tide_cuda_driver_device (), start_); \
    }                                                                   \
  while (0)

static TideCuResult
htod (HtoDFn           real,
      TideCuDeviceptr  dst,
      const void      *src,
      size_t           n)
{
  TideCuResult r;

  COPY (real (dst, src, n), TIDE_CUDA_H2D, n);
  return r;
}

static TideCuResult
dtoh (DtoHFn           real,
      void            *dst,
      TideCuDeviceptr  src,
      size_t           n)
{
  TideCuResult r;

  COPY (real (dst, src, n), TIDE_CUDA_D2H, n);
  return r;
}

static TideCuResult
htod_async (HtoDAsyncFn      real,
            TideCuDeviceptr  dst,
            const void      *src,
            size_t           n,
            TideCuStream     stream)
{
  TideCuResult r;

  COPY (real (dst, src, n, stream), TIDE_CUDA_H2D, n);
  return r;
}

static TideCuResult
dtoh_async (DtoHAsyncFn      real,
            void            *dst,
            TideCuDeviceptr  src,
            size_t           n,
            TideCuStream     stream)
{
  TideCuResult r;

  COPY (real (dst, src, n, stream), TIDE_CUDA_D2H, n);
  return r;
}

/* ---- the two entries of each function ------------------------------------- */

/* Real pointers that entry points were wrapped around, one per name. */
#define ENTRY_SLOT(name) static void *_Atomic name##_entry_
#define ENTRY_REAL(type, name) ((type) atomic_load_explicit (&name##_entry_, memory_order_acquire))

/* Declares the exported hook `name` and the static wrapper entry_`name`,
 * both calling `body` with their real function. */
#define TIDE_DRIVER_HOOK(type, name, params, body, args)               \
  ENTRY_SLOT (name);                                                    \
  TIDE_EXPORT TideCuResult                                              \
  name params                                                           \
  {                                                                     \
    TIDE_CUDA_REAL (type, name);                                        \
    return body (real, TIDE_UNPAREN args);                              \
  }                                                                     \
  static TideCuResult                                                   \
  entry_##name params                                                   \
  {                                                                     \
    return body (ENTRY_REAL (type, name), TIDE_UNPAREN args);           \
  }

#define TIDE_UNPAREN(...) __VA_ARGS__

TIDE_DRIVER_HOOK (AllocFn, cuMemAlloc_v2, (TideCuDeviceptr *d, size_t n), mem_alloc, (d, n))
TIDE_DRIVER_HOOK (FreeFn, cuMemFree_v2, (TideCuDeviceptr d), mem_free, (d))
TIDE_DRIVER_HOOK (AllocAsyncFn, cuMemAllocAsync, (TideCuDeviceptr *d, size_t n, TideCuStream s),
                  mem_alloc_async, (d, n, s))
TIDE_DRIVER_HOOK (FreeAsyncFn, cuMemFreeAsync, (TideCuDeviceptr d, TideCuStream s), mem_free_async,
                  (d, s))
TIDE_DRIVER_HOOK (HostAllocFn, cuMemHostAlloc, (void **p, size_t n, unsigned int f), host_alloc,
                  (p, n, f))
TIDE_DRIVER_HOOK (HostFreeFn, cuMemFreeHost, (void *p), host_free, (p))
TIDE_DRIVER_HOOK (CreateFn, cuMemCreate,
                  (TideCuMemHandle *h, size_t n, const TideCuMemAllocationProp *p,
                   unsigned long long f), mem_create, (h, n, p, f))
TIDE_DRIVER_HOOK (ReleaseFn, cuMemRelease, (TideCuMemHandle h), mem_release, (h))
TIDE_DRIVER_HOOK (MapFn, cuMemMap,
                  (TideCuDeviceptr d, size_t n, size_t o, TideCuMemHandle h,
                   unsigned long long f), mem_map, (d, n, o, h, f))
TIDE_DRIVER_HOOK (UnmapFn, cuMemUnmap, (TideCuDeviceptr d, size_t n), mem_unmap, (d, n))
TIDE_DRIVER_HOOK (HtoDFn, cuMemcpyHtoD_v2, (TideCuDeviceptr d, const void *s, size_t n), htod,
                  (d, s, n))
TIDE_DRIVER_HOOK (DtoHFn, cuMemcpyDtoH_v2, (void *d, TideCuDeviceptr s, size_t n), dtoh, (d, s, n))
TIDE_DRIVER_HOOK (HtoDAsyncFn, cuMemcpyHtoDAsync_v2,
                  (TideCuDeviceptr d, const void *s, size_t n, TideCuStream st), htod_async,
                  (d, s, n, st))
TIDE_DRIVER_HOOK (DtoHAsyncFn, cuMemcpyDtoHAsync_v2,
                  (void *d, TideCuDeviceptr s, size_t n, TideCuStream st), dtoh_async, (d, s, n, st))

/* ---- cuGetProcAddress ---------------------------------------------------- */

static TideCuResult entry_cuGetProcAddress_v2 (const char *, void **, int, uint64_t,
                                                   TideCuProcAddressStatus *);
ENTRY_SLOT (cuGetProcAddress_v2);

typedef struct
{
  const char     *name;     /* as cuGetProcAddress is asked for it */
  int             since;    /* first cudaVersion that gets this ABI */
  void           *wrapper;
  void *_Atomic  *slot;
} Entry;

#define ENTRY(name, since, fn) { name, since, (void *) entry_##fn, &fn##_entry_ }

static const Entry tide_entries[] = {
  ENTRY ("cuMemAlloc", 3020, cuMemAlloc_v2),
  ENTRY ("cuMemFree", 3020, cuMemFree_v2),
  ENTRY ("cuMemAllocAsync", 11020, cuMemAllocAsync),
  ENTRY ("cuMemFreeAsync", 11020, cuMemFreeAsync),
  ENTRY ("cuMemHostAlloc", 2020, cuMemHostAlloc),
  ENTRY ("cuMemFreeHost", 2000, cuMemFreeHost),
  ENTRY ("cuMemCreate", 10020, cuMemCreate),
  ENTRY ("cuMemRelease", 10020, cuMemRelease),
  ENTRY ("cuMemMap", 10020, cuMemMap),
  ENTRY ("cuMemUnmap", 10020, cuMemUnmap),
  ENTRY ("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
  ENTRY ("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
  ENTRY ("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2),
  ENTRY ("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2),
  ENTRY ("cuGetProcAddress", 12000, cuGetProcAddress_v2),
};

void *
tide_cuda_wrap_entry (const char *symbol,
                      int         version,
                      void       *real)
{
  for (size_t i = 0; i < sizeof tide_entries / sizeof tide_entries[0]; i++)
    {
      const Entry *e = &tide_entries[i];
      void *expected = NULL;

      if (strcmp (e->name, symbol) != 0)
        continue;
      /* One of our exported hooks (a library whose own references were
       * interposed by ours) already records: it must not take the slot
       * that the real function will need. */
      if (version < e->since || real == e->wrapper || tide_objects_is_self ((uintptr_t) real))
        return real;
      if (atomic_compare_exchange_strong (e->slot, &expected, real) || expected == real)
        return e->wrapper;
      return real;
    }
  return real;
}

/* Exported driver names, as a library's own handle gives them out, and
 * the entry (base name and ABI version) each one is. */
static const struct
{
  const char *symbol;
  const char *entry;
  int         version;
} tide_exported_entries[] = {
  { "cuMemAlloc_v2", "cuMemAlloc", 3020 },
  { "cuMemFree_v2", "cuMemFree", 3020 },
  { "cuMemAllocAsync", "cuMemAllocAsync", 11020 },
  { "cuMemFreeAsync", "cuMemFreeAsync", 11020 },
  { "cuMemHostAlloc", "cuMemHostAlloc", 2020 },
  { "cuMemFreeHost", "cuMemFreeHost", 2000 },
  { "cuMemCreate", "cuMemCreate", 10020 },
  { "cuMemRelease", "cuMemRelease", 10020 },
  { "cuMemMap", "cuMemMap", 10020 },
  { "cuMemUnmap", "cuMemUnmap", 10020 },
  { "cuMemcpyHtoD_v2", "cuMemcpyHtoD", 3020 },
  { "cuMemcpyDtoH_v2", "cuMemcpyDtoH", 3020 },
  { "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync", 3020 },
  { "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync", 3020 },
  { "cuGetProcAddress_v2", "cuGetProcAddress", 12000 },
};

/* For dlsym on a library's own handle (tide-preload-dlsym.c): the wrapper
 * of an exported driver function we track, or @real. */
void *
tide_cuda_wrap_symbol (const char *symbol,
                       void       *real)
{
  for (size_t i = 0; i < sizeof tide_exported_entries / sizeof tide_exported_entries[0]; i++)
    if (strcmp (tide_exported_entries[i].symbol, symbol) == 0)
      return tide_cuda_wrap_entry (tide_exported_entries[i].entry,
                                   tide_exported_entries[i].version, real);
  return real;
}

static TideCuResult
proc_address (ProcV2Fn                  real,
              const char               *symbol,
              void                    **pfn,
              int                       version,
              uint64_t                  flags,
              TideCuProcAddressStatus  *status)
{
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  PASS (real (symbol, pfn, version, flags, status));
  if (r == TIDE_CU_SUCCESS && pfn != NULL && *pfn != NULL && symbol != NULL)
    *pfn = tide_cuda_wrap_entry (symbol, version, *pfn);
  return r;
}

TIDE_EXPORT TideCuResult
cuGetProcAddress_v2 (const char               *symbol,
                     void                    **pfn,
                     int                       version,
                     uint64_t                  flags,
                     TideCuProcAddressStatus  *status)
{
  TIDE_CUDA_REAL (ProcV2Fn, cuGetProcAddress_v2);

  return proc_address (real, symbol, pfn, version, flags, status);
}

static TideCuResult
entry_cuGetProcAddress_v2 (const char               *symbol,
                           void                    **pfn,
                           int                       version,
                           uint64_t                  flags,
                           TideCuProcAddressStatus  *status)
{
  return proc_address (ENTRY_REAL (ProcV2Fn, cuGetProcAddress_v2), symbol, pfn, version, flags,
                       status);
}

/* The CUDA 11 ABI, without the status argument. */
TIDE_EXPORT TideCuResult
cuGetProcAddress (const char  *symbol,
                  void       **pfn,
                  int          version,
                  uint64_t     flags)
{
  TIDE_CUDA_REAL (ProcFn, cuGetProcAddress);
  TideCuResult r;

  if (real == NULL)
    return TIDE_CU_ERROR_NOT_INITIALIZED;
  PASS (real (symbol, pfn, version, flags));
  if (r == TIDE_CU_SUCCESS && pfn != NULL && *pfn != NULL && symbol != NULL)
    *pfn = tide_cuda_wrap_entry (symbol, version, *pfn);
  return r;
}
