/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-unwind.c: native stacks with libunwind's unw_backtrace,
 * which walks DWARF CFI with a per-thread cache of unwind info.
 *
 * libunwind is loaded with dlopen(RTLD_LOCAL) instead of being linked: the
 * shared libunwind also exports the _Unwind_* ABI, and linked into a
 * preloaded library it would come early in the global scope and take C++
 * exception handling over from libgcc_s in the target.  Loaded locally, its
 * symbols are seen only by us.  Without it, stacks are empty.
 *
 * The first frames are libunwind's and ours (the hook, the record path);
 * they are cut by address: everything up to and including the last frame of
 * the innermost run inside libtidemark-preload.so.
 */
#include "config.h"

#include "tide-preload-unwind.h"

#include "tide-preload-objects.h"
#include "tide-preload-private.h"

#include <dlfcn.h>
#include <stddef.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define TIDE_STR_(x) #x
#define TIDE_STR(x)  TIDE_STR_ (x)

int (*tide_unw_backtrace) (void **, int);

void
tide_unwind_init (void)
{
  static const char *const names[] = { "libunwind.so.8", "libunwind.so" };
  int (*set_policy) (unw_addr_space_t, unw_caching_policy_t);
  unw_addr_space_t *space;
  void *lib = NULL;

  if (tide_unw_backtrace != NULL || tide_real.dlopen == NULL)
    return;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && lib == NULL; i++)
    lib = tide_real.dlopen (names[i], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    return;
  *(void **) &set_policy = dlsym (lib, TIDE_STR (unw_set_caching_policy));
  space = dlsym (lib, TIDE_STR (unw_local_addr_space));
  if (set_policy != NULL && space != NULL)
    set_policy (*space, UNW_CACHE_PER_THREAD);
  *(void **) &tide_unw_backtrace = dlsym (lib, "unw_backtrace");
}
