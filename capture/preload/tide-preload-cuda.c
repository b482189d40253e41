/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-cuda.c: finding the real CUDA functions, and the records
 * that the CUDA hooks make.
 *
 * dlsym(RTLD_NEXT) searches the global scope after us; a CUDA library that
 * came in with dlopen(RTLD_LOCAL) (a Python extension's dependency) is not
 * in it, although the extension's calls still reach our hooks first.  Then
 * each loaded object is asked in turn, through a handle of its own.
 *
 * Device blocks and pinned blocks are remembered here (address -> kind,
 * size, device), so that a free names the device the block lived on, and
 * frees of blocks made before recording began send nothing.
 */
#include "config.h"

#include "tide-preload-cuda.h"

#include "tide-preload-buffer.h"
#include "tide-preload-encode.h"
#include "tide-preload-objects.h"
#include "tide-preload-python.h"
#include "tide-preload-unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#define TIDE_CUDA_MAX_OBJECTS 512

__thread int tide_cuda_depth __attribute__ ((tls_model ("initial-exec")));

static TideAddrSet tide_cuda_blocks;   /* kind | (device + 1) << 16 */
static TideAddrSet tide_cuda_handles;  /* cuMemCreate handles: device + 1 */
static pthread_once_t tide_cuda_once = PTHREAD_ONCE_INIT;
static bool tide_cuda_sets_ok;

typedef struct
{
  const char *names[TIDE_CUDA_MAX_OBJECTS];
  unsigned    n;
} ObjectList;

static int
collect_object (struct dl_phdr_info *info,
                size_t               size,
                void                *data)
{
  ObjectList *list = data;

  (void) size;
  if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0' && list->n < TIDE_CUDA_MAX_OBJECTS)
    list->names[list->n++] = info->dlpi_name;
  return 0;
}

/* Asks every loaded object for symbol, through its own handle; our own
 * definition is skipped by address. */
static void *
find_in_objects (const char *symbol)
{
  ObjectList list = { .n = 0 };
  void *fn = NULL;

  dl_iterate_phdr (collect_object, &list);
  for (unsigned i = 0; i < list.n && fn == NULL; i++)
    {
      void *h = tide_real.dlopen != NULL
                ? tide_real.dlopen (list.names[i], RTLD_LAZY | RTLD_NOLOAD) : NULL;

      if (h == NULL)
        continue;
      fn = dlsym (h, symbol);
      if (fn != NULL && tide_objects_is_self ((uintptr_t) fn))
        fn = NULL;
      dlclose (h);
    }
  return fn;
}

void *
tide_cuda_next_slow (void *_Atomic *slot,
                     const char    *symbol)
{
  int saved = errno;
  void *fn;

  tide_real_resolve ();
  tide_tls.guard++;
  fn = dlsym (RTLD_NEXT, symbol);
  if (fn == NULL)
    fn = find_in_objects (symbol);
  tide_tls.guard--;
  if (fn != NULL)
    atomic_store_explicit (slot, fn, memory_order_release);
  errno = saved;
  return fn;
}

typedef int (*DeviceFn) (int *);

/* cudaGetDevice through the real runtime; 0 when it cannot say. */
int
tide_cuda_runtime_device (void)
{
  static void *_Atomic slot;
  DeviceFn fn = (DeviceFn) tide_cuda_next (&slot, "cudaGetDevice");
  int device = 0;

  if (fn == NULL || fn (&device) != 0)
    return 0;
  return device;
}

/* cuCtxGetDevice through the real driver; 0 when it cannot say. */
int
tide_cuda_driver_device (void)
{
  static void *_Atomic slot;
  DeviceFn fn = (DeviceFn) tide_cuda_next (&slot, "cuCtxGetDevice");
  int device = 0;

  if (fn == NULL || fn (&device) != 0)
    return 0;
  return device;
}

static void
fork_prepare (void)
{
  tide_addrset_lock_all (&tide_cuda_blocks);
  tide_addrset_lock_all (&tide_cuda_handles);
}

static void
fork_parent (void)
{
  tide_addrset_unlock_all (&tide_cuda_handles);
  tide_addrset_unlock_all (&tide_cuda_blocks);
}

/* CUDA does not survive fork: the child starts with no device blocks. */
static void
fork_child (void)
{
  tide_addrset_reset_locks (&tide_cuda_blocks);
  tide_addrset_reset_locks (&tide_cuda_handles);
  tide_addrset_clear (&tide_cuda_blocks);
  tide_addrset_clear (&tide_cuda_handles);
}

static void
sets_init (void)
{
  tide_cuda_sets_ok = tide_addrset_init (&tide_cuda_blocks)
                      && tide_addrset_init (&tide_cuda_handles);
  if (tide_cuda_sets_ok)
    pthread_atfork (fork_prepare, fork_parent, fork_child);
}

static bool
sets_ready (void)
{
  pthread_once (&tide_cuda_once, sets_init);
  return tide_cuda_sets_ok;
}

void
tide_cuda_record_alloc (uint64_t addr,
                        uint64_t size,
                        uint16_t kind,
                        int      device)
{
  _Alignas (8) unsigned char rec[TIDE_ENCODE_ALLOC_MAX];
  uint64_t frames[TIDE_WIRE_MAX_FRAMES];
  int saved = errno;
  uint32_t n_frames, len;

  tide_tls.guard++;
  if (!tide_active () || addr == 0 || !sets_ready ()
      || !tide_addrset_insert (&tide_cuda_blocks, addr, size,
                               kind | (uint32_t) (device + 1) << 16))
    goto out;
  if (TIDE_UNLIKELY (atomic_load_explicit (&tide_objects_dirty, memory_order_relaxed) != 0))
    tide_objects_announce ();
  n_frames = tide_unwind (frames, TIDE_WIRE_MAX_FRAMES);
  if (tide_python_depth () > 0)
    n_frames = tide_python_splice (frames, n_frames, TIDE_WIRE_MAX_FRAMES);
  len = tide_encode_alloc (rec, sizeof rec, tide_stamp (), addr, size, 1.0,
                           tide_scope_current (), kind, frames, n_frames);
  if (len > 0)
    {
      ((TideWireAlloc *) rec)->device = (int16_t) device;
      tide_buffer_append (rec, len);
    }
out:
  tide_tls.guard--;
  errno = saved;
}

/* Sends FREE for a block that was recorded; called before the real free,
 * since the address may be handed out again at once. */
void
tide_cuda_record_free (uint64_t addr)
{
  _Alignas (8) unsigned char rec[sizeof (TideWireFree)];
  TideAddrEntry e;
  int saved = errno;
  uint32_t len;

  if (addr == 0 || !tide_cuda_sets_ok)
    return;
  tide_tls.guard++;
  if (tide_addrset_remove (&tide_cuda_blocks, addr, 0, &e) && tide_active ())
    {
      len = tide_encode_free (rec, sizeof rec, tide_stamp (), addr, (uint16_t) (e.kind & 0xffff));
      ((TideWireFree *) rec)->device = (int16_t) ((int) (e.kind >> 16) - 1);
      tide_buffer_append (rec, len);
    }
  tide_tls.guard--;
  errno = saved;
}

/* The header time is the start of the copy; the duration is the call's. */
void
tide_cuda_record_transfer (uint32_t direction,
                           uint64_t bytes,
                           int      device,
                           uint64_t start_ns)
{
  _Alignas (8) unsigned char rec[sizeof (TideWireTransfer) + 8u * TIDE_WIRE_MAX_FRAMES];
  TideWireTransfer *t = (TideWireTransfer *) rec;
  uint64_t end_ns = tide_now_ns ();
  int saved = errno;
  uint32_t n_frames;

  tide_tls.guard++;
  if (!tide_active () || bytes == 0)
    goto out;
  if (TIDE_UNLIKELY (atomic_load_explicit (&tide_objects_dirty, memory_order_relaxed) != 0))
    tide_objects_announce ();
  n_frames = tide_unwind (t->frames, TIDE_WIRE_MAX_FRAMES);
  if (tide_python_depth () > 0)
    n_frames = tide_python_splice (t->frames, n_frames, TIDE_WIRE_MAX_FRAMES);
  t->h.type = TIDE_WIRE_TRANSFER;
  t->h.len = (uint16_t) (sizeof *t + 8u * n_frames);
  t->h.tid = tide_thread_tid ();
  t->h.time_ns = start_ns;
  t->bytes = bytes;
  t->duration_ns = end_ns > start_ns ? end_ns - start_ns : 0;
  t->direction = direction;
  t->device = (int16_t) device;
  t->reserved = 0;
  t->scope_id = tide_scope_current ();
  t->n_frames = n_frames;
  tide_buffer_append (rec, t->h.len);
out:
  tide_tls.guard--;
  errno = saved;
}

/* Failures are rare, and may be the last thing the process does: sent
 * at once, stack and all, like a copy. */
void
tide_cuda_record_failure (uint16_t api,
                          uint32_t error,
                          uint64_t bytes,
                          uint16_t kind,
                          int      device)
{
  _Alignas (8) unsigned char rec[sizeof (TideWireAllocFailed) + 8u * TIDE_WIRE_MAX_FRAMES];
  TideWireAllocFailed *f = (TideWireAllocFailed *) rec;
  int saved = errno;
  uint32_t n_frames;

  tide_tls.guard++;
  if (!tide_active ())
    goto out;
  if (TIDE_UNLIKELY (atomic_load_explicit (&tide_objects_dirty, memory_order_relaxed) != 0))
    tide_objects_announce ();
  n_frames = tide_unwind (f->frames, TIDE_WIRE_MAX_FRAMES);
  if (tide_python_depth () > 0)
    n_frames = tide_python_splice (f->frames, n_frames, TIDE_WIRE_MAX_FRAMES);
  f->h.type = TIDE_WIRE_ALLOC_FAILED;
  f->h.len = (uint16_t) (sizeof *f + 8u * n_frames);
  f->h.tid = tide_thread_tid ();
  f->h.time_ns = tide_now_ns ();
  f->bytes = bytes;
  f->error = error;
  f->api = api;
  f->kind = kind;
  f->device = (int16_t) device;
  f->reserved = 0;
  f->scope_id = tide_scope_current ();
  f->n_frames = n_frames;
  f->reserved2 = 0;
  tide_buffer_append (rec, f->h.len);
out:
  tide_tls.guard--;
  errno = saved;
}

void
tide_cuda_handle_add (uint64_t handle,
                      uint64_t size,
                      int      device)
{
  tide_tls.guard++;
  if (handle != 0 && sets_ready ())
    tide_addrset_insert (&tide_cuda_handles, handle, size, (uint32_t) (device + 1));
  tide_tls.guard--;
}

/* The device of a cuMemCreate handle, or the current one. */
int
tide_cuda_handle_device (uint64_t handle)
{
  TideAddrEntry e;

  if (handle != 0 && tide_cuda_sets_ok && tide_addrset_lookup (&tide_cuda_handles, handle, &e))
    return (int) e.kind - 1;
  return tide_cuda_driver_device ();
}

void
tide_cuda_handle_remove (uint64_t handle)
{
  if (handle != 0 && tide_cuda_sets_ok)
    tide_addrset_remove (&tide_cuda_handles, handle, 0, NULL);
}
