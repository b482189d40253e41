/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-objects.c: MAPPING records for the loaded objects.
 *
 * All objects are announced at start-up; new ones after a dlopen.  dlopen
 * cannot be wrapped by an ordinary C function: glibc takes the return address
 * of the dlopen call as "the caller", whose RUNPATH and $ORIGIN drive the
 * search, and a wrapper would make every dlopen look as if
 * libtidemark-preload.so made it (libraries found through their RUNPATH, as
 * in Python wheels, would stop loading).  On x86-64 the hook is therefore a
 * three-instruction trampoline that marks the objects dirty and jumps to the
 * real dlopen, leaving the return address alone; the next recorded
 * allocation on any thread, or the flusher within TIDE_FLUSH_TICK_NS,
 * announces what was added (the flusher also compares dlpi_adds, which
 * covers other architectures and objects added later in the same dlopen).
 *
 * dl_iterate_phdr runs its callback under the loader's lock, so the callback
 * only encodes records into memory; they are sent after it returns.  Every
 * MAPPING ever built is kept, so that the child of a fork can resend them on
 * its new connection without walking the loader's list.
 */
#include "config.h"

#include "tide-preload-objects.h"

#include "tide-preload-buffer.h"
#include "tide-preload-encode.h"
#include "tide-preload-private.h"
#include "tide-preload-raw.h"
#include "tide-preload-unwind.h"

#include <link.h>
#include <pthread.h>
#include <string.h>

#define TIDE_OBJECTS_CHUNK (1u << 20)

uintptr_t tide_self_start;
uintptr_t tide_self_end;
_Atomic uint64_t tide_objects_dirty;

typedef struct
{
  unsigned char *data;   /* every MAPPING record built, back to back */
  uint32_t       len;
  uint32_t       cap;
  uint32_t       sent;   /* records [0, sent) are on the connection */
  uint64_t       adds;   /* dlpi_adds at the last scan */
} TideObjects;

static pthread_mutex_t tide_objects_lock = PTHREAD_MUTEX_INITIALIZER;
static TideObjects tide_objects;

static int
find_self_cb (struct dl_phdr_info *info,
              size_t               size,
              void                *data)
{
  uintptr_t probe = (uintptr_t) data;
  uintptr_t lo = UINTPTR_MAX, hi = 0;

  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t start = info->dlpi_addr + ph->p_vaddr;

      if (ph->p_type != PT_LOAD)
        continue;
      if (start < lo)
        lo = start;
      if (start + ph->p_memsz > hi)
        hi = start + ph->p_memsz;
    }
  if (probe < lo || probe >= hi)
    return 0;
  tide_self_start = lo;
  tide_self_end = hi;
  return 1;
}

void
tide_objects_init (void)
{
  if (tide_self_end == 0)
    dl_iterate_phdr (find_self_cb, (void *) (uintptr_t) &tide_objects_init);
}

static bool
known (uint64_t    start,
       uint64_t    bias,
       const char *path)
{
  for (uint32_t off = 0; off < tide_objects.len;)
    {
      const TideWireMapping *m = (const void *) (tide_objects.data + off);

      if (m->start == start && m->load_bias == bias && strcmp (m->path, path) == 0)
        return true;
      off += m->h.len;
    }
  return false;
}

static bool
reserve (uint32_t need)
{
  unsigned char *bigger;
  uint32_t cap;

  if (tide_objects.len + need <= tide_objects.cap)
    return true;
  cap = tide_objects.cap + TIDE_OBJECTS_CHUNK;
  bigger = tide_raw_mmap (cap);
  if (bigger == NULL)
    return false;
  if (tide_objects.data != NULL)
    memcpy (bigger, tide_objects.data, tide_objects.len);
  tide_raw_munmap (tide_objects.data, tide_objects.cap);
  tide_objects.data = bigger;
  tide_objects.cap = cap;
  return true;
}

/* Under the loader's lock: encode, never send. */
static int
scan_cb (struct dl_phdr_info *info,
         size_t               size,
         void                *data)
{
  uint32_t *index = data;
  const char *path = info->dlpi_name;
  TideStamp st = tide_stamp ();

  if ((*index)++ == 0 && (path == NULL || path[0] == '\0'))
    path = tide_state.exe;  /* the main program */
  if (path == NULL || path[0] != '/')
    return 0;  /* the vDSO and the like: nothing to read symbols from */
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uint64_t start = info->dlpi_addr + ph->p_vaddr;

      if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || known (start, info->dlpi_addr, path))
        continue;
      if (!reserve (TIDE_ENCODE_STRING_MAX))
        return 1;
      tide_objects.len += tide_encode_mapping (tide_objects.data + tide_objects.len,
                                               TIDE_ENCODE_STRING_MAX, st, start,
                                               start + ph->p_memsz, info->dlpi_addr, path);
    }
  tide_objects.adds = info->dlpi_adds;
  return 0;
}

/* Sends records [from, len) in messages of whole records. */
static void
send_from (uint32_t from)
{
  while (from < tide_objects.len)
    {
      uint32_t end = from;

      while (end < tide_objects.len)
        {
          const TideWireHeader *h = (const void *) (tide_objects.data + end);

          if (end - from + h->len > TIDE_WIRE_MAX_MESSAGE)
            break;
          end += h->len;
        }
      tide_conn_send (tide_objects.data + from, end - from);
      from = end;
    }
}

void
tide_objects_announce (void)
{
  uint32_t index = 0;

  pthread_mutex_lock (&tide_objects_lock);
  atomic_store (&tide_objects_dirty, 0);
  dl_iterate_phdr (scan_cb, &index);
  tide_buffer_flush_self ();
  send_from (tide_objects.sent);
  tide_objects.sent = tide_objects.len;
  pthread_mutex_unlock (&tide_objects_lock);
}

static int
adds_cb (struct dl_phdr_info *info,
         size_t               size,
         void                *data)
{
  *(uint64_t *) data = info->dlpi_adds;
  return 1;
}

/* Flusher tick: one object's worth of dl_iterate_phdr, and a scan if the
 * loader's count of loads moved. */
void
tide_objects_poll (void)
{
  uint64_t adds = 0;

  dl_iterate_phdr (adds_cb, &adds);
  if (adds != tide_objects.adds || atomic_load (&tide_objects_dirty) != 0)
    tide_objects_announce ();
}

/* On a new connection (child of fork): every MAPPING again. */
void
tide_objects_resend_all (void)
{
  pthread_mutex_lock (&tide_objects_lock);
  for (uint32_t off = 0; off < tide_objects.len;)
    {
      TideWireHeader *h = (void *) (tide_objects.data + off);

      h->tid = tide_thread_tid ();
      off += h->len;
    }
  send_from (0);
  tide_objects.sent = tide_objects.len;
  pthread_mutex_unlock (&tide_objects_lock);
}

void
tide_objects_fork_prepare (void)
{
  pthread_mutex_lock (&tide_objects_lock);
}

void
tide_objects_fork_parent (void)
{
  pthread_mutex_unlock (&tide_objects_lock);
}

void
tide_objects_fork_child (void)
{
  pthread_mutex_init (&tide_objects_lock, NULL);
  tide_objects.sent = 0;
}

/* dlclose: the unwind tables of the object may go with it, and a stack
 * memo that relied on them with it (tide-preload-unwind.c).  Counted
 * before the object goes, so that no memo taken from then on is used. */
TIDE_EXPORT int
dlclose (void *handle)
{
  atomic_fetch_add_explicit (&tide_unwind_unloads, 1, memory_order_release);
  tide_real_resolve ();
  return tide_real.dlclose != NULL ? tide_real.dlclose (handle) : -1;
}

#if defined(__x86_64__)
/* dlopen: mark dirty, then jump to the real one with the caller's return
 * address still on the stack.  Before the real dlopen is known, the C
 * fallback resolves it (the caller is then lost; only constructors that
 * run before ours can get there). */
void *tide_dlopen_fallback (const char *file, int mode) __attribute__ ((used));

__asm__ (".text\n"
         ".globl dlopen\n"
         ".type dlopen, @function\n"
         "dlopen:\n"
         "  lock addq $1, tide_objects_dirty(%rip)\n"
         "  movq tide_dlopen_next(%rip), %rax\n"
         "  testq %rax, %rax\n"
         "  je tide_dlopen_fallback\n"
         "  jmp *%rax\n"
         ".size dlopen, .-dlopen\n");

void *
tide_dlopen_fallback (const char *file,
                      int         mode)
{
  tide_real_resolve ();
  return tide_real.dlopen != NULL ? tide_real.dlopen (file, mode) : NULL;
}
#endif
