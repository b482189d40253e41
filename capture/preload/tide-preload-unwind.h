/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-unwind.h: native stacks of recorded allocations.
 */
#pragma once

#include "tide-preload-objects.h"
#include "tide-wire.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Frames we expect above the program's: libunwind, record path, hook. */
#define TIDE_UNWIND_SLACK 16

extern int (*tide_unw_backtrace) (void **, int);

/* Counts dlclose calls: a stack memo taken before one is not used after. */
extern _Atomic uint64_t tide_unwind_unloads;

void     tide_unwind_init (void);

/* The return addresses of the current stack, innermost first: from the
 * program's frame that called into the profiler on, out of the thread's
 * memo or a walk that refills it (tide-preload-unwind.c), and then
 * *@in_program is true; or from unw_backtrace, which starts inside
 * libunwind. */
int      tide_unwind_raw (void **ips,
                          int    max,
                          bool  *in_program);

/* Copies the program's frames of @ips to @frames, leaving ours out.  A
 * walk that did not start @in_program began with libunwind's frames and
 * the hook's: everything before our first frame is cut.  Frames of ours
 * further out are cut alone: a hook that calls the real function (dlsym)
 * sits between frames of the program, and what that function allocates
 * keeps the frames inside it. */
static inline uint32_t
tide_unwind_strip (void *const *ips,
                   int          n,
                   bool         in_program,
                   uint64_t    *frames,
                   uint32_t     max_frames)
{
  int i = 0;
  uint32_t out = 0;

  if (!in_program)
    {
      while (i < n && !tide_objects_is_self ((uintptr_t) ips[i]))
        i++;
      if (i == n)
        i = 0;  /* none of ours seen (inlined away): keep everything */
    }
  for (; i < n && out < max_frames; i++)
    if (!tide_objects_is_self ((uintptr_t) ips[i]))
      frames[out++] = (uintptr_t) ips[i];
  return out;
}

/* The return addresses of the program's frames, innermost first. */
static inline uint32_t
tide_unwind (uint64_t *frames,
             uint32_t  max_frames)
{
  void *ips[TIDE_WIRE_MAX_FRAMES + TIDE_UNWIND_SLACK];
  bool in_program = false;
  int n;

  if (tide_unw_backtrace == NULL)
    return 0;
  n = tide_unwind_raw (ips, (int) (sizeof ips / sizeof ips[0]), &in_program);
  return tide_unwind_strip (ips, n, in_program, frames, max_frames);
}
