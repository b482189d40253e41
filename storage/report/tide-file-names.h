/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-file-names.h: the names reports give source files, unique within a
 * trace.  A file goes by tide_frame_file_name() (an installed file by its
 * path in its package, another by its base name); where two files of a
 * trace would go by one name (two folders' model.py), each goes by the
 * shortest end of its path that no other of them shares.
 */
#pragma once

#include "tide-trace.h"

G_BEGIN_DECLS

/* @paths: (element-type utf8): the distinct source paths of a trace.
 * Returns: (transfer full): path -> name, for every path whose name is
 *   not tide_frame_file_name()'s own */
GHashTable *tide_file_names_new (GPtrArray *paths);
/* The names of @trace's source files, found at first use and kept on it.
 * Returns: (transfer none) */
GHashTable *tide_file_names_for_trace (TideTrace *trace);

G_END_DECLS
