/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * pymalloc's free memory, from the records alone: the bytes of its live
 * arenas less those of the live objects it serves.  An object takes the
 * whole of its size class (a 33-byte object takes 48 bytes), so each is
 * counted at its class: what is left is the free blocks of used pools,
 * the pools no class uses yet, and what pools lose to their headers and
 * to rounding (under 1% of an arena), all of which an arena holds and
 * no object uses.  A sampled object stands for `weight` objects of its
 * size, so the figure is an estimate like the heap's; with every object
 * recorded it is exact but for the objects made before the hooks, which
 * the preload measures once (tide_pymalloc_free_add_unhooked): those of
 * them freed later are free memory this count does not see, so it errs
 * low, never high.  Without that measure there is no figure: the objects
 * are not recorded (an interpreter that tracemalloc traces), or not as
 * pymalloc serves them (its debug hooks add bytes to each).
 */
#include "config.h"

#include "tide-pymalloc-free.h"

#include "tide-wire.h"

/* ALIGNMENT of obmalloc.c since 3.8: 16 bytes on 64-bit builds. */
#define SIZE_CLASS_STEP ((guint64) (sizeof (void *) > 4 ? 16 : 8))

guint64
tide_pymalloc_size_class (guint64 size)
{
  return (size + SIZE_CLASS_STEP - 1) & ~(SIZE_CLASS_STEP - 1);
}

void
tide_pymalloc_free_account (TidePymallocFree *self,
                            guint             kind,
                            guint64           size,
                            double            weight)
{
  /* A request of 0 bytes goes to malloc too. */
  if (kind == TIDE_KIND_PYOBJECT && size > 0 && size <= TIDE_PYMALLOC_SMALL_MAX)
    self->used_bytes += weight * (double) tide_pymalloc_size_class (size);
  else if (kind == TIDE_KIND_PYARENA && size >= TIDE_PYMALLOC_ARENA_MIN)
    self->arena_bytes += weight * (double) size;
}

void
tide_pymalloc_free_add_unhooked (TidePymallocFree *self,
                                 gint64            bytes)
{
  self->used_bytes += (double) bytes;
  self->hooked = TRUE;
}

gboolean
tide_pymalloc_free_get (const TidePymallocFree *self,
                        gint64                 *free_bytes)
{
  /* Sums of many doubles: a process without arenas may hold -0.5. */
  if (!self->hooked || self->arena_bytes < 0.5)
    return FALSE;
  *free_bytes = (gint64) MAX (self->arena_bytes - self->used_bytes + 0.5, 0.0);
  return TRUE;
}
