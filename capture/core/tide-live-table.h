/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-live-table.h: the recorded blocks of one process that are not freed
 * yet, matched with their frees although the two may arrive in either order.
 *
 * Each thread of the target sends its records in order, but threads flush
 * independently: thread B can free a block before the recorder has heard
 * thread A allocate it, and A can allocate the same address again before B's
 * free arrives.  So a free that matches nothing waits as an orphan for the
 * allocation it belongs to, and an address can hold several allocations
 * whose frees are still on their way.  A free ends the newest allocation of
 * its address made at or before it; an allocation takes the earliest orphan
 * free at or after it.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  guint64 addr;
  guint64 size;
  double  weight;
  gint64  alloc_ns;
  gint64  stack_id;
  gint64  scope_id;
  gint64  thread_id;
  gint16  device;
  guint8  kind;
  guint32 residency_group; /* the residency's mark (tide-capture-process-residency.c):
                            * 0 as the block comes into the table */
} TideLiveAlloc;

typedef struct _TideLiveTable TideLiveTable;

/* Where a block lies, and which of an array it is. */
typedef struct
{
  guint64 addr;
  guint64 size;
  guint64 index;
} TideBlockPlace;

/* Called for every block still live; free_ns is 0, or the time by which it
 * must have been freed (a newer block took its address). */
typedef void (*TideLiveFunc) (const TideLiveAlloc *alloc,
                              gint64               free_ns,
                              gpointer             user_data);

TideLiveTable *tide_live_table_new            (void);
void           tide_live_table_free           (TideLiveTable       *self);
gboolean       tide_live_table_alloc          (TideLiveTable       *self,
                                               const TideLiveAlloc *alloc,
                                               gint64              *matched_free_ns);
gboolean       tide_live_table_release        (TideLiveTable       *self,
                                               guint64              addr,
                                               gint64               free_ns,
                                               TideLiveAlloc       *out);
void           tide_live_table_expire_orphans (TideLiveTable       *self,
                                               gint64               before_ns);
void           tide_live_table_foreach        (TideLiveTable       *self,
                                               TideLiveFunc         func,
                                               gpointer             user_data);
/* As TideLiveFunc, for a caller that may change the block's
 * residency_group, and nothing else of it. */
typedef void (*TideLiveMarkFunc) (TideLiveAlloc *alloc,
                                  gint64         free_ns,
                                  gpointer       user_data);
void           tide_live_table_foreach_to_mark (TideLiveTable      *self,
                                                TideLiveMarkFunc    func,
                                                gpointer            user_data);
guint          tide_live_table_get_size       (TideLiveTable       *self);
guint          tide_live_table_get_n_orphans  (TideLiveTable       *self);

TideBlockPlace *tide_live_allocs_places_by_addr (const TideLiveAlloc *allocs,
                                                 guint                n);
void           tide_live_allocs_sort_by_addr  (GArray              *allocs);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideLiveTable, tide_live_table_free)

G_END_DECLS
