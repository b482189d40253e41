/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-standin-cuda.c: a stand-in for the CUDA driver (libcuda.so.1), for
 * tests on machines without a GPU.  It exports the real names with the real
 * signatures (tide-cuda-abi.h), and keeps "device" memory
 * in anonymous mappings made with the raw syscall, so that copies really
 * copy and the profiler's own mmap hook never sees them.
 *
 * Devices: $TIDE_STANDIN_DEVICES (default 2), each of
 * $TIDE_STANDIN_DEVICE_MIB MiB (default TIDE_STANDIN_TOTAL bytes): an
 * allocation past it fails as a real device's would; page-locked host
 * memory past $TIDE_STANDIN_PINNED_MIB fails too (no limit by default).  Device pointers are unique across devices, as with UVA.
 */
#include "tide-cuda-abi.h"

#include "tide-standin.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__ ((visibility ("default")))
#define MAX_BLOCKS 4096

typedef enum { BLOCK_FREE, BLOCK_DEVICE, BLOCK_HOST, BLOCK_REGISTERED, BLOCK_HANDLE } BlockKind;

typedef struct
{
  uintptr_t addr;      /* or the handle of a BLOCK_HANDLE */
  size_t    size;
  int       device;
  BlockKind kind;
} Block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Block blocks[MAX_BLOCKS];
static uint64_t next_handle = 1;
static size_t used_bytes[17];   /* device and handle bytes, per device */
static size_t pinned_bytes;     /* BLOCK_HOST bytes */
static __thread int current_device;
static __thread int current_set;

static void *
raw_map (size_t len,
         int    prot)
{
  long r = syscall (SYS_mmap, NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

  return r == -1 ? NULL : (void *) r;
}

int
tide_standin_device_count (void)
{
  const char *s = getenv ("TIDE_STANDIN_DEVICES");
  int n = s != NULL ? atoi (s) : 2;

  return n > 0 && n <= 16 ? n : 2;
}

/* Bytes per device. */
size_t
tide_standin_device_total (void)
{
  const char *s = getenv ("TIDE_STANDIN_DEVICE_MIB");
  long mib = s != NULL ? atol (s) : 0;

  return mib > 0 ? (size_t) mib << 20 : TIDE_STANDIN_TOTAL;
}

static int
block_add (uintptr_t addr,
           size_t    size,
           int       device,
           BlockKind kind)
{
  int ok = 0;

  pthread_mutex_lock (&lock);
  for (int i = 0; i < MAX_BLOCKS; i++)
    if (blocks[i].kind == BLOCK_FREE)
      {
        blocks[i] = (Block) { addr, size, device, kind };
        if ((kind == BLOCK_DEVICE || kind == BLOCK_HANDLE) && device >= 0 && device < 17)
          used_bytes[device] += size;
        if (kind == BLOCK_HOST)
          pinned_bytes += size;
        ok = 1;
        break;
      }
  pthread_mutex_unlock (&lock);
  return ok;
}

/* Removes the block at addr of that kind; fills *out. */
static int
block_take (uintptr_t  addr,
            BlockKind  kind,
            Block     *out)
{
  int ok = 0;

  pthread_mutex_lock (&lock);
  for (int i = 0; i < MAX_BLOCKS; i++)
    if (blocks[i].kind == kind && blocks[i].addr == addr)
      {
        *out = blocks[i];
        blocks[i].kind = BLOCK_FREE;
        if ((kind == BLOCK_DEVICE || kind == BLOCK_HANDLE) && out->device >= 0 && out->device < 17)
          used_bytes[out->device] -= out->size;
        if (out->kind == BLOCK_HOST)
          pinned_bytes -= out->size;
        ok = 1;
        break;
      }
  pthread_mutex_unlock (&lock);
  return ok;
}

/* The block that contains p, any kind but handles. */
static int
block_find (uintptr_t  p,
            Block     *out)
{
  int ok = 0;

  pthread_mutex_lock (&lock);
  for (int i = 0; i < MAX_BLOCKS; i++)
    if (blocks[i].kind != BLOCK_FREE && blocks[i].kind != BLOCK_HANDLE
        && p >= blocks[i].addr && p - blocks[i].addr < (blocks[i].size ? blocks[i].size : 1))
      {
        *out = blocks[i];
        ok = 1;
        break;
      }
  pthread_mutex_unlock (&lock);
  return ok;
}

size_t
tide_standin_device_used (int device)
{
  size_t used;

  if (device < 0 || device >= 17)
    return 0;
  pthread_mutex_lock (&lock);
  used = used_bytes[device];
  pthread_mutex_unlock (&lock);
  return used;
}

int
tide_standin_current_device (void)
{
  return current_device;
}

void
tide_standin_set_current_device (int device)
{
  current_device = device;
  current_set = 1;
}

/* $TIDE_STANDIN_NO_BACKING=1 (the benchmark): device pointers are bare
 * addresses that must never be touched, so that an allocation costs next to
 * nothing and what is measured is the profiler. */
static int
no_backing (void)
{
  static int value = -1;

  if (value < 0)
    {
      const char *s = getenv ("TIDE_STANDIN_NO_BACKING");
      value = s != NULL && strcmp (s, "1") == 0;
    }
  return value;
}

static void *
fake_address (size_t size)
{
  static uintptr_t next = (uintptr_t) 1 << 44;
  uintptr_t p;

  pthread_mutex_lock (&lock);
  p = next;
  next += (size + 4095) & ~(uintptr_t) 4095;
  pthread_mutex_unlock (&lock);
  return (void *) p;
}

static TideCuResult
device_alloc (TideCuDeviceptr *dptr,
              size_t           size)
{
  void *p;

  if (dptr == NULL)
    return TIDE_CU_ERROR_INVALID_VALUE;
  if (size == 0)
    size = 1;
  if (tide_standin_device_used (current_device) + size > tide_standin_device_total ())
    return TIDE_CU_ERROR_OUT_OF_MEMORY;
  p = no_backing () ? fake_address (size) : raw_map (size, PROT_READ | PROT_WRITE);
  if (p == NULL)
    return TIDE_CU_ERROR_OUT_OF_MEMORY;
  if (!block_add ((uintptr_t) p, size, current_device, BLOCK_DEVICE))
    {
      syscall (SYS_munmap, p, size);
      return TIDE_CU_ERROR_OUT_OF_MEMORY;
    }
  *dptr = (TideCuDeviceptr) (uintptr_t) p;
  return TIDE_CU_SUCCESS;
}

static TideCuResult
device_free (TideCuDeviceptr dptr)
{
  Block b;

  if (dptr == 0)
    return TIDE_CU_SUCCESS;
  if (!block_take ((uintptr_t) dptr, BLOCK_DEVICE, &b))
    return TIDE_CU_ERROR_INVALID_VALUE;
  if (!no_backing ())
    syscall (SYS_munmap, (void *) b.addr, b.size);
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuInit (unsigned int flags)
{
  (void) flags;
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuDriverGetVersion (int *version)
{
  *version = TIDE_STANDIN_CUDA_VERSION;
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuDeviceGetCount (int *count)
{
  *count = tide_standin_device_count ();
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuDeviceGet (TideCuDevice *device,
             int           ordinal)
{
  if (ordinal < 0 || ordinal >= tide_standin_device_count ())
    return TIDE_CU_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return TIDE_CU_SUCCESS;
}

/* A context is its device + 1; each device has only its primary one. */
EXPORT TideCuResult
cuDevicePrimaryCtxRetain (TideCuContext *ctx,
                          TideCuDevice   dev)
{
  *ctx = (TideCuContext) (uintptr_t) (dev + 1);
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuCtxSetCurrent (TideCuContext ctx)
{
  tide_standin_set_current_device (ctx != NULL ? (int) ((uintptr_t) ctx - 1) : 0);
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuCtxGetCurrent (TideCuContext *ctx)
{
  *ctx = current_set ? (TideCuContext) (uintptr_t) (current_device + 1) : NULL;
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuCtxGetDevice (TideCuDevice *device)
{
  *device = current_device;
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemGetInfo_v2 (size_t *free_bytes,
                 size_t *total)
{
  size_t used = tide_standin_device_used (current_device);

  *total = tide_standin_device_total ();
  *free_bytes = *total - used;
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemAlloc_v2 (TideCuDeviceptr *dptr,
               size_t           size)
{
  return device_alloc (dptr, size);
}

EXPORT TideCuResult
cuMemFree_v2 (TideCuDeviceptr dptr)
{
  return device_free (dptr);
}

EXPORT TideCuResult
cuMemAllocAsync (TideCuDeviceptr *dptr,
                 size_t           size,
                 TideCuStream     stream)
{
  (void) stream;
  return device_alloc (dptr, size);
}

EXPORT TideCuResult
cuMemFreeAsync (TideCuDeviceptr dptr,
                TideCuStream    stream)
{
  (void) stream;
  return device_free (dptr);
}

/* Whether @size more bytes of page-locked memory stay within
 * $TIDE_STANDIN_PINNED_MIB, as RLIMIT_MEMLOCK bounds the real ones. */
static int
pinned_fits (size_t size)
{
  const char *s = getenv ("TIDE_STANDIN_PINNED_MIB");
  long mib = s != NULL ? atol (s) : 0;
  size_t used;

  if (mib <= 0)
    return 1;
  pthread_mutex_lock (&lock);
  used = pinned_bytes;
  pthread_mutex_unlock (&lock);
  return used + size <= (size_t) mib << 20;
}

EXPORT TideCuResult
cuMemHostAlloc (void         **pp,
                size_t         size,
                unsigned int   flags)
{
  void *p;

  (void) flags;
  if (!pinned_fits (size))
    return TIDE_CU_ERROR_OUT_OF_MEMORY;
  p = raw_map (size ? size : 1, PROT_READ | PROT_WRITE);
  if (p == NULL || !block_add ((uintptr_t) p, size, -1, BLOCK_HOST))
    return TIDE_CU_ERROR_OUT_OF_MEMORY;
  *pp = p;
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemAllocHost_v2 (void   **pp,
                   size_t   size)
{
  return cuMemHostAlloc (pp, size, 0);
}

EXPORT TideCuResult
cuMemFreeHost (void *p)
{
  Block b;

  if (!block_take ((uintptr_t) p, BLOCK_HOST, &b))
    return TIDE_CU_ERROR_INVALID_VALUE;
  syscall (SYS_munmap, p, b.size ? b.size : 1);
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemHostRegister_v2 (void         *p,
                      size_t        size,
                      unsigned int  flags)
{
  (void) flags;
  if (p == NULL || size == 0)
    return TIDE_CU_ERROR_INVALID_VALUE;
  return block_add ((uintptr_t) p, size, -1, BLOCK_REGISTERED) ? TIDE_CU_SUCCESS
                                                               : TIDE_CU_ERROR_OUT_OF_MEMORY;
}

EXPORT TideCuResult
cuMemHostUnregister (void *p)
{
  Block b;

  return block_take ((uintptr_t) p, BLOCK_REGISTERED, &b) ? TIDE_CU_SUCCESS
                                                          : TIDE_CU_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

EXPORT TideCuResult
cuMemcpyHtoD_v2 (TideCuDeviceptr  dst,
                 const void      *src,
                 size_t           n)
{
  memcpy ((void *) (uintptr_t) dst, src, n);
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemcpyDtoH_v2 (void            *dst,
                 TideCuDeviceptr  src,
                 size_t           n)
{
  memcpy (dst, (const void *) (uintptr_t) src, n);
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemcpyHtoDAsync_v2 (TideCuDeviceptr  dst,
                      const void      *src,
                      size_t           n,
                      TideCuStream     stream)
{
  (void) stream;
  return cuMemcpyHtoD_v2 (dst, src, n);
}

EXPORT TideCuResult
cuMemcpyDtoHAsync_v2 (void            *dst,
                      TideCuDeviceptr  src,
                      size_t           n,
                      TideCuStream     stream)
{
  (void) stream;
  return cuMemcpyDtoH_v2 (dst, src, n);
}

EXPORT TideCuResult
cuMemcpyDtoD_v2 (TideCuDeviceptr dst,
                 TideCuDeviceptr src,
                 size_t          n)
{
  memmove ((void *) (uintptr_t) dst, (const void *) (uintptr_t) src, n);
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemAddressReserve (TideCuDeviceptr    *ptr,
                     size_t              size,
                     size_t              alignment,
                     TideCuDeviceptr     addr,
                     unsigned long long  flags)
{
  void *p = raw_map (size, PROT_NONE);

  (void) alignment; (void) addr; (void) flags;
  if (p == NULL)
    return TIDE_CU_ERROR_OUT_OF_MEMORY;
  *ptr = (TideCuDeviceptr) (uintptr_t) p;
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemAddressFree (TideCuDeviceptr ptr,
                  size_t          size)
{
  syscall (SYS_munmap, (void *) (uintptr_t) ptr, size);
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemCreate (TideCuMemHandle               *handle,
             size_t                         size,
             const TideCuMemAllocationProp *prop,
             unsigned long long             flags)
{
  uint64_t h;

  (void) flags;
  if (handle == NULL || prop == NULL || size == 0)
    return TIDE_CU_ERROR_INVALID_VALUE;
  if (tide_standin_device_used (prop->location.id) + size > tide_standin_device_total ())
    return TIDE_CU_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock (&lock);
  h = next_handle++;
  pthread_mutex_unlock (&lock);
  if (!block_add (h, size, prop->location.id, BLOCK_HANDLE))
    return TIDE_CU_ERROR_OUT_OF_MEMORY;
  *handle = h;
  return TIDE_CU_SUCCESS;
}

EXPORT TideCuResult
cuMemRelease (TideCuMemHandle handle)
{
  Block b;

  return block_take (handle, BLOCK_HANDLE, &b) ? TIDE_CU_SUCCESS : TIDE_CU_ERROR_INVALID_VALUE;
}

EXPORT TideCuResult
cuMemMap (TideCuDeviceptr    ptr,
          size_t             size,
          size_t             offset,
          TideCuMemHandle    handle,
          unsigned long long flags)
{
  (void) offset; (void) handle; (void) flags;
  return mprotect ((void *) (uintptr_t) ptr, size, PROT_READ | PROT_WRITE) == 0
         ? TIDE_CU_SUCCESS : TIDE_CU_ERROR_INVALID_VALUE;
}

EXPORT TideCuResult
cuMemUnmap (TideCuDeviceptr ptr,
            size_t          size)
{
  madvise ((void *) (uintptr_t) ptr, size, MADV_DONTNEED);
  return mprotect ((void *) (uintptr_t) ptr, size, PROT_NONE) == 0
         ? TIDE_CU_SUCCESS : TIDE_CU_ERROR_INVALID_VALUE;
}

EXPORT TideCuResult
cuPointerGetAttribute (void                   *data,
                       TideCuPointerAttribute  attribute,
                       TideCuDeviceptr         ptr)
{
  Block b;

  if (!block_find ((uintptr_t) ptr, &b))
    return TIDE_CU_ERROR_INVALID_VALUE;
  if (attribute == TIDE_CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
    *(unsigned int *) data = b.kind == BLOCK_DEVICE ? TIDE_CU_MEMORYTYPE_DEVICE : TIDE_CU_MEMORYTYPE_HOST;
  else if (attribute == TIDE_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
    *(int *) data = b.device < 0 ? current_device : b.device;
  else
    return TIDE_CU_ERROR_NOT_SUPPORTED;
  return TIDE_CU_SUCCESS;
}

typedef struct
{
  const char *name;
  int         since;   /* first cudaVersion that gets this entry */
  void       *fn;
} ProcEntry;

static TideCuResult proc_address (const char *, void **, int, uint64_t,
                                      TideCuProcAddressStatus *);

/* Newest version of each name first. */
static const ProcEntry procs[] = {
  { "cuInit", 2000, (void *) cuInit },
  { "cuDriverGetVersion", 2020, (void *) cuDriverGetVersion },
  { "cuDeviceGetCount", 2000, (void *) cuDeviceGetCount },
  { "cuDeviceGet", 2000, (void *) cuDeviceGet },
  { "cuDevicePrimaryCtxRetain", 7000, (void *) cuDevicePrimaryCtxRetain },
  { "cuCtxSetCurrent", 4000, (void *) cuCtxSetCurrent },
  { "cuCtxGetCurrent", 4000, (void *) cuCtxGetCurrent },
  { "cuCtxGetDevice", 2000, (void *) cuCtxGetDevice },
  { "cuMemGetInfo", 3020, (void *) cuMemGetInfo_v2 },
  { "cuMemAlloc", 3020, (void *) cuMemAlloc_v2 },
  { "cuMemFree", 3020, (void *) cuMemFree_v2 },
  { "cuMemAllocAsync", 11020, (void *) cuMemAllocAsync },
  { "cuMemFreeAsync", 11020, (void *) cuMemFreeAsync },
  { "cuMemHostAlloc", 2020, (void *) cuMemHostAlloc },
  { "cuMemFreeHost", 2000, (void *) cuMemFreeHost },
  { "cuMemHostRegister", 6050, (void *) cuMemHostRegister_v2 },
  { "cuMemHostUnregister", 4000, (void *) cuMemHostUnregister },
  { "cuMemcpyHtoD", 3020, (void *) cuMemcpyHtoD_v2 },
  { "cuMemcpyDtoH", 3020, (void *) cuMemcpyDtoH_v2 },
  { "cuMemcpyHtoDAsync", 3020, (void *) cuMemcpyHtoDAsync_v2 },
  { "cuMemcpyDtoHAsync", 3020, (void *) cuMemcpyDtoHAsync_v2 },
  { "cuMemcpyDtoD", 3020, (void *) cuMemcpyDtoD_v2 },
  { "cuMemAddressReserve", 10020, (void *) cuMemAddressReserve },
  { "cuMemAddressFree", 10020, (void *) cuMemAddressFree },
  { "cuMemCreate", 10020, (void *) cuMemCreate },
  { "cuMemRelease", 10020, (void *) cuMemRelease },
  { "cuMemMap", 10020, (void *) cuMemMap },
  { "cuMemUnmap", 10020, (void *) cuMemUnmap },
  { "cuPointerGetAttribute", 4000, (void *) cuPointerGetAttribute },
  { "cuGetProcAddress", 12000, (void *) proc_address },
};

static TideCuResult
proc_address (const char               *symbol,
              void                    **pfn,
              int                       version,
              uint64_t                  flags,
              TideCuProcAddressStatus  *status)
{
  (void) flags;
  for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
    if (strcmp (procs[i].name, symbol) == 0 && version >= procs[i].since)
      {
        *pfn = procs[i].fn;
        if (status != NULL)
          *status = TIDE_CU_PROC_ADDRESS_SUCCESS;
        return TIDE_CU_SUCCESS;
      }
  *pfn = NULL;
  if (status != NULL)
    *status = TIDE_CU_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return TIDE_CU_ERROR_NOT_FOUND;
}

EXPORT TideCuResult
cuGetProcAddress_v2 (const char               *symbol,
                     void                    **pfn,
                     int                       version,
                     uint64_t                  flags,
                     TideCuProcAddressStatus  *status)
{
  return proc_address (symbol, pfn, version, flags, status);
}

EXPORT TideCuResult
cuGetProcAddress (const char  *symbol,
                  void       **pfn,
                  int          version,
                  uint64_t     flags)
{
  return proc_address (symbol, pfn, version, flags, NULL);
}
