/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-cow.h: the pages that a fork's child inherited and has since made
 * its own (copy-on-write), from /proc/PID/pagemap.
 *
 * tide_cow_open() must run before the child writes: it notes the inherited
 * pages.  tide_cow_measure() then counts those that are now mapped by the
 * child alone.  Unprivileged on a process of the same user.
 *
 * Not thread-safe: one thread uses a handle.
 */
#pragma once

#include <glib.h>

#include "tide-procfs.h"

G_BEGIN_DECLS

typedef struct _TideCow TideCow;

/* @parent: the process @pid forked from, whose pages those that @pid
 * alone maps already were copied from; 0: none counted.  Open errors
 * are in the G_IO_ERROR domain (from errno). */
TideCow *tide_cow_open             (int        pid,
                                    int        parent,
                                    GError   **error);
void     tide_cow_free             (TideCow   *self);

/* Bytes of the inherited pages that the process alone maps now (and of
 * those it alone mapped already when it was opened), and in
 * @left_out those of them that are still the frames it inherited (its
 * parent wrote or freed its own), -1 where pagemap hides frames (a reader
 * without CAP_SYS_ADMIN).  When @copied is not NULL, appends the pages
 * that the process copied itself to it as TideRange runs, sorted by
 * address (all of them where frames are hidden).  Returns FALSE when
 * pagemap could not be read (the process is gone); @bytes_out is then 0. */
gboolean tide_cow_measure          (TideCow   *self,
                                    guint64   *bytes_out,
                                    gint64    *left_out,
                                    GArray    *copied);

/* Bytes of the pages noted as inherited at open. */
guint64  tide_cow_get_inherited    (TideCow   *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideCow, tide_cow_free)

G_END_DECLS
