/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-unwind.h: native stacks of recorded allocations.
 */
#pragma once

#include "tide-preload-objects.h"
#include "tide-wire.h"

#include <stddef.h>
#include <stdint.h>

/* Frames we expect above the program's: libunwind, record path, hook. */
#define TIDE_UNWIND_SLACK 16

extern int (*tide_unw_backtrace) (void **, int);

void     tide_unwind_init (void);

/* The return addresses of the program's frames, innermost first.  Inlined
 * into its caller so that the walk starts one frame nearer the program's:
 * libunwind's cost is per frame, and a recorded allocation of --all is
 * only a few frames deep. */
__attribute__ ((always_inline)) static inline uint32_t
tide_unwind (uint64_t *frames,
             uint32_t  max_frames)
{
  void *ips[TIDE_WIRE_MAX_FRAMES + TIDE_UNWIND_SLACK];
  int n, i = 0;
  uint32_t out = 0;

  if (tide_unw_backtrace == NULL)
    return 0;
  n = tide_unw_backtrace (ips, (int) (sizeof ips / sizeof ips[0]));
  /* Skip libunwind's frames up to our first one, then ours. */
  while (i < n && !tide_objects_is_self ((uintptr_t) ips[i]))
    i++;
  if (i == n)
    i = 0;  /* none of ours seen (inlined away): keep everything */
  for (; i < n && out < max_frames; i++)
    if (!tide_objects_is_self ((uintptr_t) ips[i]))
      frames[out++] = (uintptr_t) ips[i];
  return out;
}
