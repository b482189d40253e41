/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-unwind.h: native stacks of recorded allocations.
 */
#pragma once

#include "tide-preload-objects.h"
#include "tide-wire.h"

#include <stdatomic.h>
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
 * memo or a walk that refills it (tide-preload-unwind.c); or from
 * unw_backtrace, which starts inside libunwind. */
int      tide_unwind_raw (void **ips,
                          int    max);

/* Copies the program's frames of @ips to @frames: libunwind's frames up to
 * our first one, and ours, are cut. */
static inline uint32_t
tide_unwind_strip (void *const *ips,
                   int          n,
                   uint64_t    *frames,
                   uint32_t     max_frames)
{
  int i = 0;
  uint32_t out = 0;

  while (i < n && !tide_objects_is_self ((uintptr_t) ips[i]))
    i++;
  if (i == n)
    i = 0;  /* none of ours seen (inlined away): keep everything */
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

  if (tide_unw_backtrace == NULL)
    return 0;
  return tide_unwind_strip (ips, tide_unwind_raw (ips, (int) (sizeof ips / sizeof ips[0])),
                            frames, max_frames);
}
