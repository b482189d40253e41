/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-symbolizer.h: native address → function, source file and line, with
 * libdw.  Recorder side only; symbolization never happens in the target.
 *
 * One TideSymbolizer serves the whole recorder.  It keeps one Dwfl per ELF
 * path, so a library mapped by ten processes is parsed once.  Addresses are
 * given in the ELF file's own vaddr space: runtime pc minus the object's
 * load bias (see TideAddressSpace), already minus 1 for return addresses.
 *
 * Debug info is looked up in the file itself, then through .gnu_debuglink
 * and the build-id under /usr/lib/debug (dwfl_standard_find_debuginfo); the
 * ELF symbol tables (.symtab, .dynsym, .gnu_debugdata) are the fallback for
 * the function name.  debuginfod is never asked.
 *
 * Not thread-safe: one thread owns a symbolizer.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideSymbolizer TideSymbolizer;

/* One level of calls that the compiler inlined at an address. */
typedef struct
{
  char *function;  /* the inlined function's name, demangled when possible; owned */
  char *file;      /* where in it the address is (innermost level), or where it
                    * calls the next inner level; or NULL; owned */
  int   line;
} TideInlineLevel;

typedef struct
{
  char *function;  /* symbol name, demangled when possible; owned */
  char *file;      /* source file (absolute when the CU's dir is known), or NULL; owned */
  int   line;      /* source line, or 0 */
  /* The calls inlined into @function at the address, innermost first; with
   * any, @file and @line are the call site of the outermost one in
   * @function, so that every level names its own function and line. */
  TideInlineLevel *inlines;  /* owned, or NULL */
  guint            n_inlines;
} TideSymbol;

TideSymbolizer *tide_symbolizer_new      (void);
void            tide_symbolizer_free     (TideSymbolizer *self);

/* Fills @out and returns TRUE when a function name was found for
 * @elf_address in the ELF file @path.  Returns FALSE, with @out cleared,
 * when the file cannot be opened or no symbol covers the address; the caller
 * then shows "path+0xoffset".  Release @out with tide_symbol_clear(). */
gboolean        tide_symbolizer_lookup   (TideSymbolizer *self,
                                          const char     *path,
                                          guint64         elf_address,
                                          TideSymbol     *out);

/* Forgets the cached Dwfl for @path (the file was replaced on disk). */
void            tide_symbolizer_forget   (TideSymbolizer *self,
                                          const char     *path);

/* Caps how many ELF files stay open (default 256; each holds one fd, two
 * with a separate debug file); the least recently used is closed first. */
void            tide_symbolizer_set_max_files    (TideSymbolizer *self,
                                                  guint           max_files);
guint           tide_symbolizer_get_n_open_files (TideSymbolizer *self);

void            tide_symbol_clear        (TideSymbol     *symbol);
/* Fills @dest with a deep copy of @src. */
void            tide_symbol_copy         (TideSymbol       *dest,
                                          const TideSymbol *src);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideSymbolizer, tide_symbolizer_free)

G_END_DECLS
