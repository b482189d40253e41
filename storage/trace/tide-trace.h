/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-trace.h: a trace opened for reading (TideTrace): the checked file,
 * its time bounds and meta; every report and query takes one.
 */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define TIDE_TYPE_TRACE (tide_trace_get_type ())

G_DECLARE_FINAL_TYPE (TideTrace, tide_trace, TIDE, TRACE, GObject)

TideTrace  *tide_trace_open         (const char  *path,
                                     GError     **error);
const char *tide_trace_get_path     (TideTrace   *self);
gboolean    tide_trace_is_complete  (TideTrace   *self);
char       *tide_trace_describe_early_end (TideTrace *self);
gint64      tide_trace_get_start_ns (TideTrace   *self);
gint64      tide_trace_get_end_ns   (TideTrace   *self);
char       *tide_trace_dup_meta     (TideTrace   *self,
                                     const char  *key);

G_END_DECLS
