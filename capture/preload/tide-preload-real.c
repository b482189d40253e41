/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-real.c: finds the functions the hooks wrap, with
 * dlsym(RTLD_NEXT), so that a program that brings its own allocator keeps
 * it.  dlsym itself may call calloc/malloc before any real pointer is known;
 * it does so with the guard raised, so those calls are served from the
 * profiler's own heap (tide-preload-heap.h).
 */
#include "config.h"

#include "tide-preload-private.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

TideReal tide_real;
void *tide_dlopen_next;

static _Atomic int tide_real_state;  /* 0 unresolved, 1 resolving, 2 done */

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
  RESOLVE (malloc_usable_size);
  RESOLVE (mmap);
  RESOLVE (munmap);
  RESOLVE (mremap);
  RESOLVE (brk);
  RESOLVE (sbrk);
  RESOLVE (dlopen);
  RESOLVE (dlclose);
  RESOLVE (_exit);
  RESOLVE (waitpid);
  RESOLVE (wait4);
  RESOLVE (waitid);
  atomic_store ((_Atomic (void *) *) &tide_dlopen_next, *(void **) &tide_real.dlopen);
}

/* Returns with every pointer set, except on the resolving thread while it
 * is inside dlsym (the caller then uses the profiler's own heap). */
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
