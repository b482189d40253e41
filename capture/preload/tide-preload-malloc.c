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
 * that calls its own malloc through the PLT is not counted twice.
 */
#include "config.h"

#include "tide-preload-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Real malloc, or the arena while dlsym is still running on this thread. */
static void *
boot_malloc (size_t size)
{
  tide_real_resolve ();
  if (tide_real.malloc != NULL)
    return tide_real.malloc (size);
  return tide_bootstrap_alloc (size, 16);
}

static inline void
maybe_record_free (void *ptr)
{
  int mode = atomic_load_explicit (&tide_state.free_mode, memory_order_relaxed);

  if (TIDE_LIKELY (mode == TIDE_FREE_IGNORE) || tide_tls.guard)
    return;
  if (mode == TIDE_FREE_ALL)
    tide_record_free (ptr, TIDE_KIND_MALLOC);
  else if (TIDE_UNLIKELY (tide_addrset_maybe (&tide_state.addrset, (uintptr_t) ptr)))
    tide_record_free_if_sampled (ptr, TIDE_KIND_MALLOC, NULL);
}

/* Slow path of an allocation of `size` bytes made by `call`. */
#define TIDE_ALLOC_SLOW(result, size, call)                        \
  do                                                               \
    {                                                              \
      double weight_ = tide_sample_decide (size);                  \
                                                                   \
      tide_tls.guard++;                                            \
      result = (call);                                             \
      tide_tls.guard--;                                            \
      if (weight_ > 0.0 && (result) != NULL)                       \
        tide_record_alloc ((result), (size), weight_, TIDE_KIND_MALLOC); \
    }                                                              \
  while (0)

TIDE_EXPORT void *
malloc (size_t size)
{
  void *p;

  if (TIDE_UNLIKELY (tide_real.malloc == NULL))
    return boot_malloc (size);
  if (TIDE_LIKELY (!tide_should_sample (size)))
    return tide_real.malloc (size);
  TIDE_ALLOC_SLOW (p, size, tide_real.malloc (size));
  return p;
}

TIDE_EXPORT void
free (void *ptr)
{
  if (ptr == NULL || TIDE_UNLIKELY (tide_bootstrap_owns (ptr)))
    return;
  maybe_record_free (ptr);
  if (TIDE_UNLIKELY (tide_real.free == NULL))
    tide_real_resolve ();
  tide_real.free (ptr);
}

TIDE_EXPORT void *
calloc (size_t nmemb,
        size_t size)
{
  size_t total;
  void *p;

  if (TIDE_UNLIKELY (tide_real.calloc == NULL))
    {
      tide_real_resolve ();
      if (tide_real.calloc == NULL)
        return __builtin_mul_overflow (nmemb, size, &total)
               ? NULL : tide_bootstrap_alloc (total, 16);
    }
  if (__builtin_mul_overflow (nmemb, size, &total) || !tide_should_sample (total))
    return tide_real.calloc (nmemb, size);
  TIDE_ALLOC_SLOW (p, total, tide_real.calloc (nmemb, size));
  return p;
}

/* realloc out of the start-up arena: a new real block and a copy. */
static void *
realloc_from_arena (void   *ptr,
                    size_t  size)
{
  size_t old = tide_bootstrap_size (ptr);
  void *p = malloc (size);

  if (p != NULL)
    memcpy (p, ptr, old < size ? old : size);
  return p;
}

/* A recorded block that moves is a FREE of the old address and an ALLOC of
 * the new one; an unrecorded one may become recorded by the sampler. */
static void *
realloc_common (void   *ptr,
                size_t  size,
                void   *(*call) (void *, size_t, size_t),
                size_t  nmemb)
{
  int mode = atomic_load_explicit (&tide_state.free_mode, memory_order_relaxed);
  bool sample = tide_should_sample (size);
  TideAddrEntry old;
  bool had = false;
  double weight = 0.0;
  void *p;

  if (TIDE_LIKELY (!sample && (ptr == NULL || mode == TIDE_FREE_IGNORE
                               || tide_tls.guard
                               || (mode == TIDE_FREE_FILTER
                                   && !tide_addrset_maybe (&tide_state.addrset, (uintptr_t) ptr)))))
    return call (ptr, nmemb, size);
  if (sample)
    weight = tide_sample_decide (size);
  if (ptr != NULL && mode == TIDE_FREE_ALL && !tide_tls.guard)
    {
      tide_record_free (ptr, TIDE_KIND_MALLOC);
      had = true;
      old.size = 0;
    }
  else if (ptr != NULL && mode == TIDE_FREE_FILTER && !tide_tls.guard)
    had = tide_record_free_if_sampled (ptr, TIDE_KIND_MALLOC, &old);
  tide_tls.guard++;
  p = call (ptr, nmemb, size);
  tide_tls.guard--;
  if (p == NULL && size > 0 && had && old.size > 0)
    tide_record_alloc (ptr, old.size, tide_sampler_weight (old.size, tide_state.sample_bytes),
                       TIDE_KIND_MALLOC);  /* failed: the old block lives on */
  else if (p != NULL && (weight > 0.0 || (had && size > 0)))
    tide_record_alloc (p, size, weight > 0.0 ? weight
                       : tide_sampler_weight (size, tide_state.sample_bytes), TIDE_KIND_MALLOC);
  return p;
}

static void *
call_realloc (void   *ptr,
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
    {
      tide_real_resolve ();
      if (tide_real.realloc == NULL)
        return ptr == NULL ? tide_bootstrap_alloc (size, 16) : NULL;
    }
  if (TIDE_UNLIKELY (tide_bootstrap_owns (ptr)))
    return realloc_from_arena (ptr, size);
  return realloc_common (ptr, size, call_realloc, 1);
}

static void *
call_reallocarray (void   *ptr,
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
  if (TIDE_UNLIKELY (tide_bootstrap_owns (ptr)))
    return realloc_from_arena (ptr, total);
  return realloc_common (ptr, total, call_reallocarray, nmemb);
}

TIDE_EXPORT int
posix_memalign (void   **memptr,
                size_t   alignment,
                size_t   size)
{
  double weight;
  int r;

  if (TIDE_UNLIKELY (tide_real.posix_memalign == NULL))
    {
      tide_real_resolve ();
      if (tide_real.posix_memalign == NULL)
        {
          *memptr = tide_bootstrap_alloc (size, alignment);
          return *memptr != NULL ? 0 : ENOMEM;
        }
    }
  if (TIDE_LIKELY (!tide_should_sample (size)))
    return tide_real.posix_memalign (memptr, alignment, size);
  weight = tide_sample_decide (size);
  tide_tls.guard++;
  r = tide_real.posix_memalign (memptr, alignment, size);
  tide_tls.guard--;
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
  if (tide_real.malloc == NULL)
    return tide_bootstrap_alloc (size, alignment);
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
