/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-report-rss.h: resident memory by class, in words: what a fork's
 * child copied on write and from which of its parent's blocks.
 */
#pragma once

#include "tide-trace.h"

G_BEGIN_DECLS

/* One fork's child that copied pages of its parent. */
typedef struct
{
  gint64  process_id;
  gint64  pid;
  char   *label;          /* the process's label (tide-processes.h) */
  gint64  copied_bytes;   /* the last cow_bytes value */
  gint64  source_stack_id;  /* the parent's stack whose blocks cover the most
                             * copied bytes; 0: none recorded */
  gint64  source_bytes;   /* copied bytes that its blocks cover */
  char   *source;         /* "file:line (function)" of its headline; NULL: none */
} TideCowRow;

void       tide_cow_row_free (TideCowRow *row);

/* Every process that copied on write, in process order; empty for a
 * trace without copy-on-write (or written before it was measured). */
GPtrArray *tide_report_cow   (TideTrace  *trace,
                              GError    **error);

/* "worker 1: +134.0 MiB copied on write from the parent's blocks allocated
 * at dataset.py:22 (MyDataset.__init__)" */
char      *tide_cow_row_describe (const TideCowRow *row);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideCowRow, tide_cow_row_free)

G_END_DECLS
