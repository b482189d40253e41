/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-storage-error.h: the one error domain of storage/: what went wrong
 * with a trace, as one sentence.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define TIDE_STORAGE_ERROR (tide_storage_error_quark ())

/* Each code maps to one clear sentence for the user; see tide-trace.c. */
typedef enum
{
  TIDE_STORAGE_ERROR_IO = 1,        /* missing file, permission, disk */
  TIDE_STORAGE_ERROR_NOT_SQLITE,    /* not an SQLite database at all */
  TIDE_STORAGE_ERROR_FOREIGN,       /* SQLite, but not a Tidemark trace */
  TIDE_STORAGE_ERROR_TRUNCATED,     /* shorter than its header says */
  TIDE_STORAGE_ERROR_CORRUPT,       /* SQLite reports damage */
  TIDE_STORAGE_ERROR_NEWER_SCHEMA,  /* written by a newer Tidemark */
  TIDE_STORAGE_ERROR_SQL,           /* a statement failed */
  TIDE_STORAGE_ERROR_NOT_FOUND,     /* a step or process that is not there */
  TIDE_STORAGE_ERROR_DAMAGED,       /* a value no recording writes (tide-trace-bounds.h) */
} TideStorageError;

GQuark tide_storage_error_quark (void);

G_END_DECLS
