/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-frame.h: one frame of a recorded stack as the reports show it (a
 * row of the frames table, with the plumbing marks of tide-plumbing.h),
 * and the names it goes by.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  int      kind;                /* TideFrameKind */
  char    *function;
  char    *file;
  char    *file_name;           /* how reports name file, unique in its trace
                                 * (tide-file-names.h); NULL: tide_frame_file_name() */
  int      line;
  char    *module;
  gint64   module_offset;
  gboolean plumbing;            /* allocator or runtime plumbing (tide-plumbing.h) */
  gboolean library;             /* Python code of the interpreter's standard library or of
                                 * an installed package, not the user's (tide-plumbing.h) */
} TideFrame;

TideFrame  *tide_frame_copy                  (const TideFrame *frame);
void        tide_frame_copy_into             (TideFrame       *copy,
                                              const TideFrame *frame);
void        tide_frame_clear                 (TideFrame       *frame);
void        tide_frame_free                  (TideFrame       *frame);
char       *tide_frame_file_name             (const char      *path);
char       *tide_frame_dup_file_name         (const TideFrame *frame);
char       *tide_frame_describe              (const TideFrame *frame);
char       *tide_frame_describe_source_first (const TideFrame *frame);
const char *tide_frame_kind_name             (const TideFrame *frame);

G_END_DECLS
