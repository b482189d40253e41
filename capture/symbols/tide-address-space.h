/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-address-space.h: the file-backed mappings of one process image, so
 * that a runtime pc can be turned into (ELF path, pc - load_bias) for
 * TideSymbolizer.
 *
 * Entries never overlap: adding a mapping replaces whatever it covers, as
 * mmap(MAP_FIXED) does.  Not thread-safe.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideAddressSpace TideAddressSpace;

/* Called when no entry holds @pc; returns TRUE if it added entries, and
 * the lookup is then tried once more. */
typedef gboolean (*TideAddressMissFunc) (TideAddressSpace *space,
                                         guint64           pc,
                                         gpointer          user_data);

TideAddressSpace *tide_address_space_new          (void);
void              tide_address_space_free         (TideAddressSpace *self);

/* Maps [@start, @end) to @path; runtime pc - @load_bias is the ELF vaddr.
 * Parts of older entries inside the range are dropped. */
void              tide_address_space_add          (TideAddressSpace *self,
                                                   guint64           start,
                                                   guint64           end,
                                                   guint64           load_bias,
                                                   const char       *path);

/* Unmaps [@start, @end): entries are trimmed or split as munmap() does. */
void              tide_address_space_remove       (TideAddressSpace *self,
                                                   guint64           start,
                                                   guint64           end);

/* Finds the entry holding @pc.  *@path is a g_intern_string(): valid for
 * the whole process and equal, as a pointer, across address spaces. */
gboolean          tide_address_space_resolve      (TideAddressSpace *self,
                                                   guint64           pc,
                                                   const char      **path,
                                                   guint64          *load_bias);

guint             tide_address_space_get_n_entries (TideAddressSpace *self);

/* Calls @func on every entry, by address; @path as in resolve. */
typedef void (*TideAddressFunc) (guint64     start,
                                 guint64     end,
                                 guint64     load_bias,
                                 const char *path,
                                 gpointer    user_data);

void              tide_address_space_foreach      (TideAddressSpace *self,
                                                   TideAddressFunc   func,
                                                   gpointer          user_data);

/* Changes whenever an entry is added, trimmed or removed: a pc resolved in
 * one generation resolves the same way until it changes. */
guint64           tide_address_space_get_generation (TideAddressSpace *self);

void              tide_address_space_set_miss_func (TideAddressSpace    *self,
                                                    TideAddressMissFunc  func,
                                                    gpointer             user_data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideAddressSpace, tide_address_space_free)

G_END_DECLS
