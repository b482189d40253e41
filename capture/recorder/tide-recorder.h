/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-recorder.h: the recorder behind `tidemark record`.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  char       **argv;          /* the target command */
  const char  *output;        /* trace path */
  const char  *preload_path;  /* libtidemark-preload.so */
  guint64      sample_bytes;  /* mean sampling interval */
  gboolean     all;           /* record every allocation */
  gboolean     sync_steps;    /* a step marker waits until the recorder measured the step */
  guint        poll_hz;       /* /proc/PID/statm polls per second */
  const char  *const *extra_env; /* NAME=VALUE pairs added for the target */
  gboolean     quiet;         /* no summary on stderr */
  const char  *symbol_cache_dir; /* NULL: no symbol cache (tide-symbol-cache.h) */
} TideRecordOptions;

/* Runs the target under the profiler until it and every process it started
 * have exited, writes the trace and returns the target's exit status
 * (128 + signal when it was killed), or -1 with @error set when the
 * recording could not start. */
int tide_record_run (const TideRecordOptions  *options,
                     GError                  **error);

G_END_DECLS
