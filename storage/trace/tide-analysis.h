/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-analysis.h: the summaries built once when a capture ends (step
 * statistics, the timeline's level-of-detail buckets, what is live at the
 * end, the indexes of the queries), so that no query scans the
 * allocations table again.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* The timeline's level-of-detail buckets: level l is lod_base << (2 l). */
#define TIDE_LOD_BASE_NS   (1000 * 1000)  /* 1 ms */
#define TIDE_LOD_LEVELS    12

gboolean tide_analysis_build (sqlite3  *db,
                              GError  **error);
gint64   tide_analysis_get_short_lived_ns (sqlite3 *db);

G_END_DECLS
