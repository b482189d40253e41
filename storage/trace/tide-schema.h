/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-schema.h: the trace's tables and indexes, its version and
 * application id, and the frame kinds of its frames table.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "tide-kinds.h"
#include "tide-sqlite.h"

G_BEGIN_DECLS

/* PRAGMA application_id: "TIDE" in ASCII, so `file` and our opener can tell
 * a trace from any other SQLite file. */
#define TIDE_APPLICATION_ID 0x54494445
/* 2: allocation_ranges, and the writer's allocations_long_lived index in
 * place of allocations_by_alloc.  3: processes.worker and processes.role
 * (tide-processes.h).  4: stacks, a row per stack, in place of
 * stack_nodes' row per frame; step_residency_totals, and step_residency's
 * rows only where they change.  Versions 1 to 3 are still read.  Tables
 * added since without a new version, which readers must do without:
 * modules (build-ids), and in merged traces merge_sources and
 * merge_processes (tide-trace-merge.h). */
#define TIDE_SCHEMA_VERSION 4

/* Frame kinds of the frames table. */
typedef enum
{
  TIDE_FRAME_NATIVE  = 1,
  TIDE_FRAME_PYTHON  = 2,
  TIDE_FRAME_KERNEL  = 3,
  TIDE_FRAME_MISSING = 4,  /* frames the unwinder could not recover */
  /* A call the compiler inlined at a native frame's address: a row of
   * its own, never in a stack, with the native frame's module and
   * module_offset; a native frame's inline rows go innermost first by id. */
  TIDE_FRAME_INLINE  = 5,
} TideFrameKind;

/* Frame ids at and above this are inline frames (TIDE_FRAME_INLINE), which
 * the symbolizer thread numbers on its own: below it, ids belong to the
 * recorder's interning of stack frames. */
#define TIDE_INLINE_FRAME_ID_BASE (G_GINT64_CONSTANT (1) << 40)

/* The counters and frame kinds that statements name, as SQL text: SQL
 * cannot name an enum, so each number is written here once, beside the
 * check that holds it to its enum. */
#define TIDE_SQL_COUNTER_RSS       "1"
#define TIDE_SQL_COUNTER_HEAP_LIVE "3"
#define TIDE_SQL_COUNTER_MAPPED    "4"
#define TIDE_SQL_COUNTER_COW_BYTES "24"
#define TIDE_SQL_COUNTER_COW_LEFT_BYTES "27"
#define TIDE_SQL_COUNTER_RSS_PEAK  "39"
#define TIDE_SQL_FRAME_NATIVE      "1"
#define TIDE_SQL_FRAME_INLINE      "5"
G_STATIC_ASSERT (TIDE_COUNTER_RSS == 1);
G_STATIC_ASSERT (TIDE_COUNTER_HEAP_LIVE == 3);
G_STATIC_ASSERT (TIDE_COUNTER_MAPPED == 4);
G_STATIC_ASSERT (TIDE_COUNTER_COW_BYTES == 24);
G_STATIC_ASSERT (TIDE_COUNTER_COW_LEFT_BYTES == 27);
G_STATIC_ASSERT (TIDE_COUNTER_RSS_PEAK == 39);
G_STATIC_ASSERT (TIDE_FRAME_NATIVE == 1);
G_STATIC_ASSERT (TIDE_FRAME_INLINE == 5);

gboolean tide_schema_create   (sqlite3     *db,
                               GError     **error);
gboolean tide_schema_ensure   (sqlite3     *db,
                               const char  *name,
                               GError     **error);
gboolean tide_schema_ensure_all (sqlite3            *db,
                                 const char * const *names,
                                 GError            **error);
gboolean tide_schema_declares (const char  *name);
char    *tide_schema_stack_frames (const gint64 *frame_ids,
                                   guint         n_frames);

G_END_DECLS
