/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-symbol-cache.h: what the symbolizer found, kept for the next
 * recording.
 *
 * Resolving a frame can cost more than everything else a short recording
 * does with it: libc's separate debug file is compressed, and its DWARF
 * was inflated again at every recording (bench/README.md).
 * What an address resolves to depends only on the ELF file's build-id and
 * on whether a separate debug file exists (tide-debuginfo.h), so results
 * are kept per build-id in DIR/<build-id>.sym and reused.  A file without a
 * build-id is never cached: nothing would tell its versions apart.
 *
 * A cache file that does not parse, or that was written when a debug file
 * existed and now does not (or the other way round), is ignored and
 * replaced at the next save.  Saving replaces a file in one rename, after
 * merging what another recorder saved meanwhile.
 *
 * Not thread-safe: one thread owns a cache.
 */
#pragma once

#include <glib.h>

#include "tide-symbolizer.h"

G_BEGIN_DECLS

#define TIDE_SYMBOL_CACHE_ENV "TIDEMARK_SYMBOL_CACHE"

typedef struct _TideSymbolCache TideSymbolCache;

/* A cache kept in @dir, created at the first save; with @dir NULL nothing
 * is ever found or saved. */
TideSymbolCache *tide_symbol_cache_new         (const char       *dir);
void             tide_symbol_cache_free        (TideSymbolCache  *self);

/* $TIDEMARK_SYMBOL_CACHE when set (empty: NULL, no cache), else
 * $XDG_CACHE_HOME/tidemark/symbols. */
char            *tide_symbol_cache_default_dir (void);

/* Returns TRUE when the cache knows @elf_address of the ELF file @path, with
 * @out filled as tide_symbolizer_lookup() filled it then: function NULL
 * when no symbol covered the address.  Release @out with
 * tide_symbol_clear(). */
gboolean         tide_symbol_cache_lookup      (TideSymbolCache  *self,
                                                const char       *path,
                                                guint64           elf_address,
                                                TideSymbol       *out);

/* Remembers what tide_symbolizer_lookup() gave for @elf_address of @path;
 * @symbol->function NULL records that it found nothing. */
void             tide_symbol_cache_add         (TideSymbolCache  *self,
                                                const char       *path,
                                                guint64           elf_address,
                                                const TideSymbol *symbol);

/* The symbol of @elf_address in @path: from the cache when it knows the
 * address, else from @symbolizer, whose answer the cache then keeps.
 * Returns TRUE when the cache answered; @out is filled either way, as
 * tide_symbol_cache_lookup() fills it. */
gboolean         tide_symbol_cache_resolve     (TideSymbolCache  *self,
                                                TideSymbolizer   *symbolizer,
                                                const char       *path,
                                                guint64           elf_address,
                                                TideSymbol       *out);

/* Writes every cache file that gained entries. */
gboolean         tide_symbol_cache_save        (TideSymbolCache  *self,
                                                GError          **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideSymbolCache, tide_symbol_cache_free)

G_END_DECLS
