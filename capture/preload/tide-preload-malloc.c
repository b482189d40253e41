/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-malloc.c: the malloc family.  C++ new and delete reach these
 * through libstdc++.
 *
 * The fast path of an allocation is tide_should_sample() and the real call;
 * the fast path of a free is one relaxed load of the free mode and, in
 * sampled mode, one relaxed load of the address filter.  The real call of a
 * recorded allocation is made with the guard raised, so that an allocator
 * that calls its own malloc through the PLT is not counted twice; it is
 * marked as a real call, so that such calls still reach the real allocator.
 * Everything else asked for with the guard raised is the profiler's own and
 * comes from its own heap (tide-preload-heap.h), as do dlsym's allocations
 * before the real functions are known.
 */
#include "config.h"

#include "tide-preload-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The profiler's own allocations, and any made before the real functions
 * are known (dlsym at start-up). */
static inline bool
wants_own_heap (void)
{
  return TIDE_UNLIKELY (tide_in_profiler () || tide_real.malloc == NULL);
}

/* From the profiler's heap, or from the real allocator when that heap is
 * spent: correct either way, since free() tells them apart. */
static void *
own_alloc (size_t size,
           size_t align,
           bool   zero)
{
  void *p = tide_heap_alloc (size, align, zero);

  if (p != NULL || tide_real.malloc == NULL)
    return p;
  if (align > 16 && tide_real.posix_memalign != NULL)
    return tide_real.posix_memalign (&p, align, size) == 0 ? p : NULL;
  return zero ? tide_real.calloc (1, size) : tide_real.malloc (size);
}

/* Slow path of an allocation of `size` bytes made by `call`. */
#define TIDE_ALLOC_SLOW(result, size, call)                        \
  do                                                               \
    {                                                              \
      double weight_ = tide_sample_decide (size);                  \
                                                                   \
      TIDE_REAL_CALL (result = (call));                            \
      if (weight_ > 0.0 && (result) != NULL)                       \
        tide_record_alloc ((result), (size), weight_, TIDE_KIND_MALLOC); \
    }                                                              \
  while (0)

/* Whether a call of the malloc family is the program's, with the real
 * functions known: then it goes to the real allocator, sampled or not. */
static inline bool
is_programs_call (void)
{
  return TIDE_LIKELY (tide_real.malloc != NULL && !tide_in_profiler ());
}

/* The rare paths of each function are out of line, so that the common call
 * keeps no frame of its own and ends in a tail call of the real one. */
static __attribute__ ((noinline)) void *
malloc_sampled (size_t size)
{
  void *p;

  TIDE_ALLOC_SLOW (p, size, tide_real.malloc (size));
  return p;
}

static __attribute__ ((noinline)) void *
malloc_unusual (size_t size)
{
  if (TIDE_UNLIKELY (tide_real.malloc == NULL))
    tide_real_resolve ();
  if (wants_own_heap ())
    return own_alloc (size, 16, false);
  if (TIDE_LIKELY (!tide_should_sample (size)))
    return tide_real.malloc (size);
  return malloc_sampled (size);
}

TIDE_EXPORT void *
malloc (size_t size)
{
  if (TIDE_UNLIKELY (!is_programs_call ()))
    return malloc_unusual (size);
  if (TIDE_LIKELY (!tide_should_sample (size)))
    return tide_real.malloc (size);
  return malloc_sampled (size);
}

static __attribute__ ((noinline)) void
free_looked_up (void *ptr)
{
  tide_maybe_record_free (ptr, TIDE_KIND_MALLOC);
  if (TIDE_UNLIKELY (tide_real.free == NULL))
    tide_real_resolve ();
  tide_real.free (ptr);
}

TIDE_EXPORT void
free (void *ptr)
{
  if (ptr == NULL)
    return;
  if (TIDE_UNLIKELY (tide_heap_owns (ptr)))
    {
      tide_heap_free (ptr);
      return;
    }
  if (TIDE_UNLIKELY (tide_free_may_record (ptr) || tide_real.free == NULL))
    {
      free_looked_up (ptr);
      return;
    }
  tide_real.free (ptr);
}

static __attribute__ ((noinline)) void *
calloc_sampled (size_t nmemb,
                size_t size,
                size_t total)
{
  void *p;

  TIDE_ALLOC_SLOW (p, total, tide_real.calloc (nmemb, size));
  return p;
}

static __attribute__ ((noinline)) void *
calloc_unusual (size_t nmemb,
                size_t size)
{
  size_t total;

  if (TIDE_UNLIKELY (tide_real.calloc == NULL))
    tide_real_resolve ();
  if (wants_own_heap ())
    return __builtin_mul_overflow (nmemb, size, &total) ? NULL : own_alloc (total, 16, true);
  if (__builtin_mul_overflow (nmemb, size, &total) || !tide_should_sample (total))
    return tide_real.calloc (nmemb, size);
  return calloc_sampled (nmemb, size, total);
}

TIDE_EXPORT void *
calloc (size_t nmemb,
        size_t size)
{
  size_t total;

  if (TIDE_UNLIKELY (!is_programs_call () || tide_real.calloc == NULL))
    return calloc_unusual (nmemb, size);
  if (__builtin_mul_overflow (nmemb, size, &total) || TIDE_LIKELY (!tide_should_sample (total)))
    return tide_real.calloc (nmemb, size);
  return calloc_sampled (nmemb, size, total);
}

/* realloc of a block of the profiler's heap: it stays there while the
 * profiler works; a block the program reallocs (one glibc made for it
 * while the guard was up) moves to the real allocator. */
static void *
realloc_own (void   *ptr,
             size_t  size)
{
  size_t old = tide_heap_usable_size (ptr);
  void *p = wants_own_heap () ? tide_heap_realloc (ptr, size) : NULL;

  if (p != NULL)
    return p;
  p = malloc (size);
  if (p == NULL)
    return NULL;
  memcpy (p, ptr, old < size ? old : size);
  tide_heap_free (ptr);
  return p;
}

/* A realloc is a free and an allocation: a recorded block's record ends
 * (a FREE of the old address), and the new block is recorded when the
 * sampler takes it, as any allocation of its size.  Keeping a recorded
 * block recorded would count it once per realloc of its history: a block
 * grown from 32 to 64 to 128 bytes was sampled nearly twice as often as a
 * block made at 128, at the weight of one. */
void *
tide_realloc_tracked (void            *ptr,
                      size_t           size,
                      uint16_t         kind,
                      TideReallocCall  call,
                      void            *ctx,
                      size_t           nmemb)
{
  int mode = atomic_load_explicit (&tide_state.free_mode, memory_order_relaxed);
  bool sample = tide_should_sample (size);
  TideAddrEntry old = { .kind = kind };  /* a recorded block keeps its kind */
  bool had = false;
  double weight = 0.0;
  void *p;

  /* A chained allocator (CPython's) decides itself where its blocks go. */
  if (ptr == NULL && kind == TIDE_KIND_MALLOC && wants_own_heap ())
    return own_alloc (size, 16, false);
  if (TIDE_LIKELY (!sample && (ptr == NULL || mode == TIDE_FREE_IGNORE
                               || tide_tls.guard
                               || (mode == TIDE_FREE_FILTER
                                   && !tide_addrset_maybe (&tide_state.addrset, (uintptr_t) ptr)))))
    return call (ctx, ptr, nmemb, size);
  if (sample)
    weight = tide_sample_decide (size);
  if (ptr != NULL && mode == TIDE_FREE_ALL && !tide_tls.guard)
    {
      tide_record_free (ptr, kind);
      had = true;
      old.size = 0;
    }
  else if (ptr != NULL && mode == TIDE_FREE_FILTER && !tide_tls.guard)
    had = tide_record_free_if_sampled (ptr, kind, &old);
  TIDE_REAL_CALL (p = call (ctx, ptr, nmemb, size));
  if (p == NULL && size > 0 && had && old.size > 0)
    tide_record_alloc (ptr, old.size, tide_sampler_weight (old.size, tide_state.sample_bytes),
                       (uint16_t) old.kind);  /* failed: the old block lives on */
  else if (p != NULL && weight > 0.0)
    tide_record_alloc (p, size, weight, (uint16_t) old.kind);
  return p;
}

static void *
call_realloc (void   *ctx,
              void   *ptr,
              size_t  nmemb,
              size_t  size)
{
  return tide_real.realloc (ptr, size);
}

TIDE_EXPORT void *
realloc (void   *ptr,
         size_t  size)
{
  if (TIDE_UNLIKELY (tide_real.realloc == NULL))
    tide_real_resolve ();
  if (TIDE_UNLIKELY (tide_heap_owns (ptr)))
    return realloc_own (ptr, size);
  if (TIDE_UNLIKELY (tide_real.realloc == NULL))
    return ptr == NULL ? own_alloc (size, 16, false) : NULL;
  return tide_realloc_tracked (ptr, size, TIDE_KIND_MALLOC, call_realloc, NULL, 1);
}

static void *
call_reallocarray (void   *ctx,
                   void   *ptr,
                   size_t  nmemb,
                   size_t  total)
{
  if (tide_real.reallocarray != NULL)
    return tide_real.reallocarray (ptr, nmemb, total / (nmemb ? nmemb : 1));
  return tide_real.realloc (ptr, total);
}

TIDE_EXPORT void *
reallocarray (void   *ptr,
              size_t  nmemb,
              size_t  size)
{
  size_t total;

  if (__builtin_mul_overflow (nmemb, size, &total))
    {
      errno = ENOMEM;
      return NULL;
    }
  if (TIDE_UNLIKELY (tide_real.realloc == NULL))
    tide_real_resolve ();
  if (TIDE_UNLIKELY (tide_heap_owns (ptr)))
    return realloc_own (ptr, total);
  if (TIDE_UNLIKELY (tide_real.realloc == NULL))
    return ptr == NULL ? own_alloc (total, 16, false) : NULL;
  return tide_realloc_tracked (ptr, total, TIDE_KIND_MALLOC, call_reallocarray, NULL, nmemb);
}

TIDE_EXPORT int
posix_memalign (void   **memptr,
                size_t   alignment,
                size_t   size)
{
  double weight;
  int r;

  if (TIDE_UNLIKELY (tide_real.posix_memalign == NULL))
    tide_real_resolve ();
  if (wants_own_heap ())
    {
      if (alignment < sizeof (void *) || (alignment & (alignment - 1)) != 0)
        return EINVAL;
      *memptr = own_alloc (size, alignment, false);
      return *memptr != NULL ? 0 : ENOMEM;
    }
  if (TIDE_LIKELY (!tide_should_sample (size)))
    return tide_real.posix_memalign (memptr, alignment, size);
  weight = tide_sample_decide (size);
  TIDE_REAL_CALL (r = tide_real.posix_memalign (memptr, alignment, size));
  if (r == 0 && weight > 0.0)
    tide_record_alloc (*memptr, size, weight, TIDE_KIND_MALLOC);
  return r;
}

/* memalign, aligned_alloc, valloc and pvalloc, which some libcs lack. */
static void *
aligned_common (void   *(*real) (size_t, size_t),
                size_t   alignment,
                size_t   size)
{
  void *p;

  if (TIDE_UNLIKELY (tide_real.malloc == NULL))
    tide_real_resolve ();
  if (wants_own_heap ())
    return own_alloc (size, alignment, false);
  if (real == NULL)
    {
      void *q = NULL;

      errno = posix_memalign (&q, alignment, size);
      return q;
    }
  if (TIDE_LIKELY (!tide_should_sample (size)))
    return real (alignment, size);
  TIDE_ALLOC_SLOW (p, size, real (alignment, size));
  return p;
}

TIDE_EXPORT void *
memalign (size_t alignment,
          size_t size)
{
  if (TIDE_UNLIKELY (tide_real.malloc == NULL))
    tide_real_resolve ();
  return aligned_common (tide_real.memalign, alignment, size);
}

TIDE_EXPORT void *
aligned_alloc (size_t alignment,
               size_t size)
{
  if (TIDE_UNLIKELY (tide_real.malloc == NULL))
    tide_real_resolve ();
  return aligned_common (tide_real.aligned_alloc, alignment, size);
}

static void *
call_valloc (size_t alignment,
             size_t size)
{
  return tide_real.valloc (size);
}

static void *
call_pvalloc (size_t alignment,
              size_t size)
{
  return tide_real.pvalloc (size);
}

TIDE_EXPORT void *
valloc (size_t size)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);

  if (TIDE_UNLIKELY (tide_real.malloc == NULL))
    tide_real_resolve ();
  return aligned_common (tide_real.valloc != NULL ? call_valloc : NULL, page, size);
}

TIDE_EXPORT void *
pvalloc (size_t size)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  size_t rounded = (size + page - 1) & ~(page - 1);

  if (TIDE_UNLIKELY (tide_real.malloc == NULL))
    tide_real_resolve ();
  return aligned_common (tide_real.pvalloc != NULL ? call_pvalloc : NULL, page,
                         rounded != 0 ? rounded : page);
}

TIDE_EXPORT size_t
malloc_usable_size (void *ptr)
{
  if (ptr == NULL)
    return 0;
  if (TIDE_UNLIKELY (tide_heap_owns (ptr)))
    return tide_heap_usable_size (ptr);
  if (TIDE_UNLIKELY (tide_real.malloc_usable_size == NULL))
    tide_real_resolve ();
  return tide_real.malloc_usable_size != NULL ? tide_real.malloc_usable_size (ptr) : 0;
}
