/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-raw.h: memory for the profiler's own tables, straight from the
 * kernel.  These never go through the (hooked) mmap or malloc, so they can be
 * called from inside any hook, before the real functions are known, and in
 * the child of a fork.  Each mapping is noted (tide-preload-own.h), so that
 * the recorder can say how much of the process's memory is ours.
 */
#pragma once

#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tide-preload-own.h"

static inline void *
tide_raw_mmap (size_t len)
{
  long r = syscall (SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

  if (r == -1)
    return NULL;
  tide_own_note_mapped ((void *) r, len);
  return (void *) r;
}

static inline void
tide_raw_munmap (void  *addr,
                 size_t len)
{
  if (addr == NULL)
    return;
  tide_own_note_unmapped (addr);
  syscall (SYS_munmap, addr, len);
}
