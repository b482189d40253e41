/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-retained-query.h: what the session's selection retained, queried
 * off the main thread, for the drill-down and the flame graph.
 */
#pragma once

#include <gio/gio.h>

#include "tide-session.h"

G_BEGIN_DECLS

#define TIDE_TYPE_RETAINED_QUERY (tide_retained_query_get_type ())

G_DECLARE_FINAL_TYPE (TideRetainedQuery, tide_retained_query, TIDE, RETAINED_QUERY, GObject)

TideRetainedQuery *tide_retained_query_new            (TideSession       *session);
GPtrArray         *tide_retained_query_get_groups     (TideRetainedQuery *self);
GHashTable        *tide_retained_query_get_compared   (TideRetainedQuery *self);
gboolean           tide_retained_query_get_loading    (TideRetainedQuery *self);
const char        *tide_retained_query_get_error      (TideRetainedQuery *self);
TideTrace         *tide_retained_query_get_trace      (TideRetainedQuery *self);
gint64             tide_retained_query_get_process_id (TideRetainedQuery *self);
gint               tide_retained_query_get_step       (TideRetainedQuery *self);
void               tide_retained_query_get_range      (TideRetainedQuery *self,
                                                       gint64            *begin,
                                                       gint64            *end);

/* The running query's, for the tests: NULL when none runs. */
GCancellable      *_tide_retained_query_get_cancellable (TideRetainedQuery *self);

G_END_DECLS
