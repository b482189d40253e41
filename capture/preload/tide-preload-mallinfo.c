/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-mallinfo.c: what glibc's allocator holds free, sent at each
 * step end.  Freed blocks stay in the arenas (and the top chunk), so RSS
 * can climb while the heap of live blocks does not: this counter
 * (TIDE_COUNTER_ALLOC_FREE of storage/tide-schema.h) is how a report tells that apart from a leak.
 * Only the program can ask its allocator, so the preload does, on the
 * thread that marks the step, which is about to wait for the recorder's
 * flush anyway.
 *
 * mallinfo2 came with glibc 2.33; it is looked up, so an older glibc
 * leaves glibc's part out.  A program on jemalloc (preloaded or linked:
 * its mallctl is found) still has glibc's arenas for its start-up, and
 * jemalloc's free memory is added: the pages it keeps resident that no
 * live block uses (stats.resident - stats.allocated, its metadata
 * included), sent on their own too (TIDE_COUNTER_JEMALLOC_FREE) so that a
 * report can say which allocator keeps them.
 */
#include "config.h"

#include "tide-preload-private.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct mallinfo2 (*Mallinfo2Func) (void);
typedef int (*MallctlFunc) (const char *name, void *old, size_t *old_len, void *new_value,
                            size_t new_len);

static Mallinfo2Func
lookup_mallinfo2 (void)
{
  static _Atomic (Mallinfo2Func) cached;
  static atomic_int looked_up;
  Mallinfo2Func fn = atomic_load (&cached);

  if (fn == NULL && !atomic_exchange (&looked_up, 1))
    {
      *(void **) &fn = dlsym (RTLD_DEFAULT, "mallinfo2");
      atomic_store (&cached, fn);
    }
  return fn;
}

static MallctlFunc
lookup_mallctl (void)
{
  static _Atomic (MallctlFunc) cached;
  static atomic_int looked_up;
  MallctlFunc fn = atomic_load (&cached);

  if (fn == NULL && !atomic_exchange (&looked_up, 1))
    {
      /* Without jemalloc the lookup fails, and glibc allocates the error's
       * text: that block is ours, not the program's, and the error is
       * cleared so that the program's next dlerror() does not see it. */
      tide_tls.guard++;
      *(void **) &fn = dlsym (RTLD_DEFAULT, "mallctl");
      if (fn == NULL)
        dlerror ();
      tide_tls.guard--;
      atomic_store (&cached, fn);
    }
  return fn;
}

/* jemalloc's statistics are a snapshot that "epoch" refreshes. */
static bool
read_jemalloc_free (MallctlFunc mallctl_fn,
                    int64_t    *free_out)
{
  uint64_t epoch = 1;
  size_t epoch_len = sizeof epoch, len = sizeof (size_t);
  size_t resident = 0, allocated = 0;

  if (mallctl_fn ("epoch", &epoch, &epoch_len, &epoch, sizeof epoch) != 0 ||
      mallctl_fn ("stats.resident", &resident, &len, NULL, 0) != 0 ||
      mallctl_fn ("stats.allocated", &allocated, &len, NULL, 0) != 0)
    return false;
  *free_out = resident > allocated ? (int64_t) (resident - allocated) : 0;
  return true;
}

/* fordblks: the bytes of free chunks in every glibc arena, the top chunks
 * included; and jemalloc's, when it is there. */
void
tide_preload_send_allocator_free (void)
{
  Mallinfo2Func mallinfo2_fn = lookup_mallinfo2 ();
  MallctlFunc mallctl_fn = lookup_mallctl ();
  int64_t total = 0, jemalloc_free = 0;
  bool any = false;

  if (mallinfo2_fn != NULL)
    {
      total += (int64_t) mallinfo2_fn ().fordblks;
      any = true;
    }
  tide_tls.guard++;
  if (mallctl_fn != NULL && !read_jemalloc_free (mallctl_fn, &jemalloc_free))
    mallctl_fn = NULL;
  tide_tls.guard--;
  if (mallctl_fn != NULL)
    {
      total += jemalloc_free;
      any = true;
      tidemark_preload_counter (TIDE_WIRE_COUNTER_JEMALLOC_FREE, -1, jemalloc_free);
    }
  if (any)
    tidemark_preload_counter (TIDE_WIRE_COUNTER_ALLOC_FREE, -1, total);
}
