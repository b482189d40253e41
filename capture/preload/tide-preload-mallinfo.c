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
 * leaves the counter out.  A program that brings another allocator still
 * has glibc's arenas (for its start-up and its libraries' blocks): those
 * are what is counted.
 */
#include "config.h"

#include "tide-preload-private.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdatomic.h>

typedef struct mallinfo2 (*Mallinfo2Func) (void);

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

/* fordblks: the bytes of free chunks in every arena, the top chunks
 * included. */
void
tide_preload_send_allocator_free (void)
{
  Mallinfo2Func mallinfo2_fn = lookup_mallinfo2 ();
  struct mallinfo2 info;

  if (mallinfo2_fn == NULL)
    return;
  info = mallinfo2_fn ();
  tidemark_preload_counter (TIDE_WIRE_COUNTER_ALLOC_FREE, -1, (int64_t) info.fordblks);
}
