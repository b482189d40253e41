/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-stack-cache.h: the raw stacks of one process, as they came off the
 * wire, mapped to the stack ids they were interned as.
 *
 * Interning a stack resolves every pc to a mapping and looks up a frame and
 * a tree node per frame; an allocation-heavy program sends the same few
 * stacks millions of times, so one hash of the raw pcs and one probe save
 * nearly all of that.  An id is only valid for the state it was interned
 * in (the process's mappings, its Python code objects): the caller names
 * that state by a generation number, and the cache forgets everything when
 * the generation changes.  It also forgets everything when it is full, so
 * its memory stays bounded whatever the program does.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideStackCache TideStackCache;

TideStackCache *tide_stack_cache_new        (void);
void            tide_stack_cache_free       (TideStackCache *self);

/* The id cached for @frames[0..@n_frames) in @generation, or 0. */
gint64          tide_stack_cache_lookup     (TideStackCache *self,
                                             guint64         generation,
                                             const guint64  *frames,
                                             guint           n_frames);
void            tide_stack_cache_insert     (TideStackCache *self,
                                             guint64         generation,
                                             const guint64  *frames,
                                             guint           n_frames,
                                             gint64          stack_id);
guint           tide_stack_cache_get_size   (TideStackCache *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideStackCache, tide_stack_cache_free)

G_END_DECLS
