/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-table-memory.h: zeroed arrays for the recorder's large hash tables
 * (the live blocks').
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

gpointer tide_table_memory_new  (gsize    bytes);
void     tide_table_memory_free (gpointer memory,
                                 gsize    bytes);

G_END_DECLS
