/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * allocator-first: which thread asks glibc's allocator for its state
 * first.  glibc sets its allocator up at the first call into it, with no
 * lock, so a second thread that calls in meanwhile can read an arena that
 * is not set up yet; the preload's own thread must not be the first.
 *
 * The program exports its own mallinfo2 (linked with -rdynamic), which
 * the preload finds as the process's, notes the first thread that calls
 * it and hands on to glibc's.  It makes no call of its own into the
 * allocator, marks no step, and waits a second, over many of the
 * preload's ticks; then it prints "main" when the process's main thread
 * called first, "another" when another thread did, or "none", and exits
 * 0.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target-util.h"

typedef struct mallinfo2 (*Mallinfo2Func) (void);

static atomic_long first_caller;

struct mallinfo2
mallinfo2 (void)
{
  static _Atomic (Mallinfo2Func) real;
  Mallinfo2Func fn = atomic_load (&real);
  long none = 0;

  atomic_compare_exchange_strong (&first_caller, &none, (long) syscall (SYS_gettid));
  if (fn == NULL)
    {
      *(void **) &fn = dlsym (RTLD_NEXT, "mallinfo2");
      atomic_store (&real, fn);
    }
  return fn ();
}

int
main (void)
{
  long first;

  target_sleep_ms (1000);
  first = atomic_load (&first_caller);
  printf ("%s\n", first == 0 ? "none" : first == (long) getpid () ? "main" : "another");
  return 0;
}
