/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-heap.h: the profiler's own heap.
 *
 * What the profiler allocates while it works (with tide_tls.guard raised)
 * must not come from the program's allocator.  The one that mattered:
 * libunwind is dlopen'ed, so ld.so allocates its thread-local block with
 * malloc in each thread, at that thread's first sampled allocation.  That
 * long-lived block landed in the middle of the thread's glibc arena and
 * changed where the program's next blocks went and when glibc trimmed the
 * arena: alloc-bench made more madvise(MADV_DONTNEED) calls and more page
 * faults when recorded, and ran slower for it (bench/README.md).  The
 * same heap serves dlsym's calloc before the real functions are known.
 *
 * One reservation of address space (MAP_NORESERVE: only what is touched
 * is committed), 16 MiB, or 1 MiB where RLIMIT_AS does not allow that: a
 * recorded alloc-bench or torch import uses a small part of it, and a
 * much larger reservation can leave a program running under a tight
 * RLIMIT_AS no room for glibc's 64 MiB arena reservations,
 * which changes its heap as surely as allocating from it would.  It is
 * carved by a bump pointer into power-of-two blocks, each class with a
 * free list, all under one mutex: the profiler allocates a few dozen
 * blocks in a run, never on a hot path.  Each block starts with
 * a 16-byte header just before the pointer handed out.  When the
 * reservation is spent (or cannot be made) tide_heap_alloc() returns NULL
 * and the caller falls back to the real allocator.
 *
 * Pure code (raw system calls, no hooks), unit-tested directly.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIDE_HEAP_RESERVE ((size_t) 16 << 20)

/* Set once, under the heap's lock, before any block is handed out. */
extern _Atomic uintptr_t tide_heap_base;
extern _Atomic uintptr_t tide_heap_span;

void  *tide_heap_alloc       (size_t      size,
                              size_t      align,
                              bool        zero);
void  *tide_heap_realloc     (void       *p,
                              size_t      size);
void   tide_heap_free        (void       *p);
size_t tide_heap_usable_size (const void *p);
void   tide_heap_lock        (void);
void   tide_heap_unlock      (void);
void   tide_heap_reset_lock  (void);

/* Two loads and a compare: free() asks this of every pointer. */
static inline bool
tide_heap_owns (const void *p)
{
  uintptr_t base = atomic_load_explicit (&tide_heap_base, memory_order_relaxed);

  return (uintptr_t) p - base < atomic_load_explicit (&tide_heap_span, memory_order_relaxed);
}
