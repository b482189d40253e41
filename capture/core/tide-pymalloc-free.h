/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-pymalloc-free.h: what CPython's small-object allocator (pymalloc)
 * holds in its arenas that no live object uses.  An arena goes back to the
 * system only when every object in it is freed, so a few long-lived objects
 * among many short-lived ones keep whole arenas mapped: fragmentation,
 * which neither the objects' stacks nor glibc's free memory show.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* pymalloc serves requests of 1 to 512 bytes (SMALL_REQUEST_THRESHOLD,
 * CPython 3.8 and later); others go to malloc. */
#define TIDE_PYMALLOC_SMALL_MAX 512
/* Its smallest arena: 256 KiB on 3.8, 3.9 and 32-bit builds, 1 MiB on
 * 64-bit 3.10 and later.  Smaller blocks of the arena allocator are the
 * interpreter's frame stack chunks (3.11 and later: 16 KiB, doubled for a
 * frame that needs more), which are not pymalloc's. */
#define TIDE_PYMALLOC_ARENA_MIN (256 * 1024)

typedef struct
{
  double   arena_bytes; /* live pymalloc arenas */
  double   used_bytes;  /* live objects that pymalloc serves, at their size class */
  gboolean hooked;      /* the objects are recorded: the preload wraps pymalloc itself */
} TidePymallocFree;

/* The size class that pymalloc serves @size from. */
guint64  tide_pymalloc_size_class        (guint64                 size);
/* An allocation (@weight > 0) or a free (@weight < 0) of @weight blocks of
 * @size bytes, of TideAllocKind @kind: only Python objects and arenas
 * count. */
void     tide_pymalloc_free_account      (TidePymallocFree       *self,
                                          guint                   kind,
                                          guint64                 size,
                                          double                  weight);
/* Bytes of pymalloc's blocks in use when the allocator hooks were set,
 * whose objects are never recorded; the preload sends them only where
 * its hooks wrap pymalloc itself. */
void     tide_pymalloc_free_add_unhooked (TidePymallocFree       *self,
                                          gint64                  bytes);
/* FALSE when the process has no pymalloc arena (PYTHONMALLOC=malloc, or
 * no Python), or its objects are not recorded as pymalloc serves them
 * (tracemalloc's interpreter, pymalloc's debug hooks). */
gboolean tide_pymalloc_free_get          (const TidePymallocFree *self,
                                          gint64                 *free_bytes);

G_END_DECLS
