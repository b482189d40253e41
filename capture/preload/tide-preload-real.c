/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-real.c: finds the functions the hooks wrap, with
 * dlsym(RTLD_NEXT), so that a program that brings its own allocator keeps
 * it.  dlsym itself may call calloc/malloc before any real pointer is known;
 * those calls, on the resolving thread only, are served from a static bump
 * arena that is never given back (free ignores arena pointers, realloc
 * copies out of it).
 */
#include "config.h"

#include "tide-preload-private.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

TideReal tide_real;
void *tide_dlopen_next;

_Alignas (64) unsigned char tide_bootstrap_arena[TIDE_BOOTSTRAP_SIZE];
static _Atomic size_t tide_bootstrap_used;
static _Atomic int tide_real_state;  /* 0 unresolved, 1 resolving, 2 done */

/* Each arena block is preceded by its size, 16 bytes before it. */
void *
tide_bootstrap_alloc (size_t size,
                      size_t align)
{
  size_t used, start, end;

  if (align < 16)
    align = 16;
  used = atomic_load (&tide_bootstrap_used);
  do
    {
      start = (used + 16 + align - 1) & ~(align - 1);
      end = start + ((size + 15) & ~(size_t) 15);
      if (end > TIDE_BOOTSTRAP_SIZE || end < start)
        return NULL;
    }
  while (!atomic_compare_exchange_weak (&tide_bootstrap_used, &used, end));
  *(size_t *) (tide_bootstrap_arena + start - 16) = size;
  return tide_bootstrap_arena + start;  /* static storage: already zero */
}

size_t
tide_bootstrap_size (const void *p)
{
  return *(const size_t *) ((const unsigned char *) p - 16);
}

#define RESOLVE(name) \
  (*(void **) &tide_real.name = dlsym (RTLD_NEXT, #name))

static void
resolve_all (void)
{
  RESOLVE (malloc);
  RESOLVE (free);
  RESOLVE (calloc);
  RESOLVE (realloc);
  RESOLVE (reallocarray);
  RESOLVE (posix_memalign);
  RESOLVE (aligned_alloc);
  RESOLVE (memalign);
  RESOLVE (valloc);
  RESOLVE (pvalloc);
  RESOLVE (mmap);
  RESOLVE (munmap);
  RESOLVE (mremap);
  RESOLVE (brk);
  RESOLVE (sbrk);
  RESOLVE (dlopen);
  RESOLVE (_exit);
  atomic_store ((_Atomic (void *) *) &tide_dlopen_next, *(void **) &tide_real.dlopen);
}

/* Returns with every pointer set, except on the resolving thread while it
 * is inside dlsym (the caller then uses the arena). */
void
tide_real_resolve (void)
{
  int expected = 0;

  if (atomic_load_explicit (&tide_real_state, memory_order_acquire) == 2)
    return;
  if (atomic_compare_exchange_strong (&tide_real_state, &expected, 1))
    {
      tide_tls.resolving++;
      tide_tls.guard++;
      resolve_all ();
      tide_tls.guard--;
      tide_tls.resolving--;
      atomic_store_explicit (&tide_real_state, 2, memory_order_release);
      if (tide_real.malloc == NULL || tide_real.free == NULL)
        abort ();  /* no allocator below us: nothing sensible to do */
      return;
    }
  if (tide_tls.resolving)
    return;
  while (atomic_load_explicit (&tide_real_state, memory_order_acquire) != 2)
    sched_yield ();
}
