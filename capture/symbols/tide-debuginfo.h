/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-debuginfo.h: where an ELF file's separate debug file is.  The
 * symbolizer opens it for DWARF; the symbol cache asks whether there is one,
 * because a debug file installed after a recording changes what a
 * recording can resolve (source lines, local functions).
 */
#pragma once

#include <elfutils/libdwfl.h>
#include <glib.h>

G_BEGIN_DECLS

#define TIDE_DEBUGINFO_DIR "/usr/lib/debug"
/* Names another root for the debug files instead of TIDE_DEBUGINFO_DIR:
 * for debug files kept elsewhere, and for tests, which cannot write to
 * /usr/lib/debug. */
#define TIDE_DEBUGINFO_DIR_ENV "TIDEMARK_DEBUGINFO_DIR"

/* Opens the separate debug file of @file_name, looking where
 * dwfl_standard_find_debuginfo looks but never asking debuginfod: the
 * build-id under the debug root (TIDE_DEBUGINFO_DIR, or
 * $TIDEMARK_DEBUGINFO_DIR when set), then @debuglink (the .gnu_debuglink
 * name, or NULL) next to the file, in its .debug/ and under the debug
 * root.  A candidate must carry the same build-id when the
 * file has one.  Returns the open fd and sets @found_path (malloc()ed, as
 * libdwfl frees it), or returns -1. */
int      tide_debuginfo_open       (const char          *file_name,
                                    const unsigned char *build_id,
                                    int                  build_id_len,
                                    const char          *debuglink,
                                    char               **found_path);

/* The callbacks of every Dwfl of ours (symbolizer, unwinder): files found
 * by build-id, and separate debug files by tide_debuginfo_open, so that
 * none asks debuginfod. */
extern const Dwfl_Callbacks tide_debuginfo_dwfl_callbacks;

/* Reads the GNU build-id of the ELF file @path as lowercase hex, and
 * whether it has a separate debug file (as tide_debuginfo_open finds it).
 * Returns NULL when the file cannot be read or has no build-id. */
char    *tide_debuginfo_identify   (const char          *path,
                                    gboolean            *has_debug_file);

G_END_DECLS
