/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-mmap.c: mmap, munmap, mremap, brk and sbrk made by the
 * program.  glibc's malloc and loader map memory through internal calls that
 * do not come here, so a program on glibc malloc is not counted twice; an
 * allocator that maps through the PLT (jemalloc) shows up both as MMAP and
 * as MALLOC records, told apart by kind.  CPython's arenas are mapped
 * inside a real call (tide-preload-pyalloc.c), so they come as PYARENA
 * records instead.
 *
 * Mappings are always recorded (weight 1) and kept in the address set.
 * An anonymous mapping that the profiler's own work makes (libunwind's
 * caches, as the preload unwinds a stack: inside the guard, and not in a
 * real call made for the program) is the profiler's, noted as such
 * (tide-preload-own.h).
 * What is approximated:
 *  - munmap of a range that starts at a recorded mapping frees the whole
 *    mapping, even when only its head is unmapped (the tail is forgotten);
 *    a range that starts inside a mapping, or spans several, frees nothing
 *    but the one starting at its first address;
 *  - a shrinking brk/sbrk is not recorded;
 *  - MAP_FIXED over a recorded mapping at the same address frees the old one
 *    first; over part of one, nothing.
 */
/* Define mmap itself: with _FILE_OFFSET_BITS=64 the headers rename it to
 * mmap64, which is defined separately below. */
#undef _FILE_OFFSET_BITS

#include "config.h"

#include "tide-preload-private.h"
#include "tide-preload-own.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline bool
recording (void)
{
  return tide_active () && !tide_tls.guard;
}

/* Inside the profiler, and not in a real call made for the program (a
 * pymalloc arena, whose objects are the program's). */
static inline bool
profilers_own (void)
{
  return tide_tls.guard > 0 && tide_tls.real_calls == 0;
}

static void
record_mapping (void   *p,
                size_t  len)
{
  tide_record_free_if_sampled (p, TIDE_KIND_MMAP, NULL);
  tide_record_alloc (p, len, 1.0, TIDE_KIND_MMAP);
}

static void *
real_mmap (void   *addr,
           size_t  len,
           int     prot,
           int     flags,
           int     fd,
           off_t   off)
{
  if (TIDE_UNLIKELY (tide_real.mmap == NULL))
    {
      if (!tide_tls.resolving)
        tide_real_resolve ();
      if (tide_real.mmap == NULL)
        {
          long r = syscall (SYS_mmap, addr, len, prot, flags, fd, off);

          return r == -1 ? MAP_FAILED : (void *) r;
        }
    }
  return tide_real.mmap (addr, len, prot, flags, fd, off);
}

TIDE_EXPORT void *
mmap (void   *addr,
      size_t  len,
      int     prot,
      int     flags,
      int     fd,
      off_t   off)
{
  void *p = real_mmap (addr, len, prot, flags, fd, off);

  if (TIDE_UNLIKELY (recording ()) && p != MAP_FAILED)
    record_mapping (p, len);
  else if (TIDE_UNLIKELY (profilers_own ()) && p != MAP_FAILED && (flags & MAP_ANONYMOUS))
    tide_own_note_mapped (p, len);
  return p;
}

TIDE_EXPORT void *
mmap64 (void    *addr,
        size_t   len,
        int      prot,
        int      flags,
        int      fd,
        off64_t  off)
{
  return mmap (addr, len, prot, flags, fd, (off_t) off);
}

TIDE_EXPORT int
munmap (void   *addr,
        size_t  len)
{
  if (TIDE_UNLIKELY (recording ()))
    tide_record_free_if_sampled (addr, TIDE_KIND_MMAP, NULL);
  else if (TIDE_UNLIKELY (profilers_own ()))
    tide_own_note_unmapped (addr);
  if (TIDE_UNLIKELY (tide_real.munmap == NULL))
    {
      tide_real_resolve ();
      if (tide_real.munmap == NULL)
        return (int) syscall (SYS_munmap, addr, len);
    }
  return tide_real.munmap (addr, len);
}

TIDE_EXPORT void *
mremap (void   *old,
        size_t  old_size,
        size_t  new_size,
        int     flags,
        ...)
{
  void *new_address = NULL;
  TideAddrEntry e = { 0 };
  bool rec = recording ();
  bool had = false;
  va_list ap;
  void *p;

  if (flags & MREMAP_FIXED)
    {
      va_start (ap, flags);
      new_address = va_arg (ap, void *);
      va_end (ap);
    }
  if (TIDE_UNLIKELY (tide_real.mremap == NULL))
    tide_real_resolve ();
  if (rec)
    had = tide_record_free_if_sampled (old, TIDE_KIND_MMAP, &e);
  p = tide_real.mremap (old, old_size, new_size, flags, new_address);
  if (rec && p == MAP_FAILED && had)
    tide_record_alloc (old, e.size, 1.0, TIDE_KIND_MMAP);  /* still there */
  else if (rec && p != MAP_FAILED)
    tide_record_alloc (p, new_size, 1.0, TIDE_KIND_MMAP);
  return p;
}

TIDE_EXPORT void *
sbrk (intptr_t increment)
{
  void *p;

  if (TIDE_UNLIKELY (tide_real.sbrk == NULL))
    tide_real_resolve ();
  p = tide_real.sbrk (increment);
  if (TIDE_UNLIKELY (recording ()) && increment > 0 && p != (void *) -1)
    tide_record_alloc (p, (size_t) increment, 1.0, TIDE_KIND_BRK);
  return p;
}

TIDE_EXPORT int
brk (void *addr)
{
  void *cur;
  int r;

  if (TIDE_UNLIKELY (tide_real.brk == NULL))
    tide_real_resolve ();
  if (!recording ())
    return tide_real.brk (addr);
  cur = tide_real.sbrk (0);
  r = tide_real.brk (addr);
  if (r == 0 && cur != (void *) -1 && (uintptr_t) addr > (uintptr_t) cur)
    tide_record_alloc (cur, (uintptr_t) addr - (uintptr_t) cur, 1.0, TIDE_KIND_BRK);
  return r;
}
