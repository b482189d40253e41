/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-session.h: what the user is looking at in one trace, which every view
 * reads.
 */
#pragma once

#include <glib-object.h>

#include "tide-trace-diff.h"
#include "tide-trace-tables.h"
#include "tide-trace.h"

G_BEGIN_DECLS

#define TIDE_TYPE_SESSION (tide_session_get_type ())

G_DECLARE_FINAL_TYPE (TideSession, tide_session, TIDE, SESSION, GObject)

/* What one zoom action changes the visible window by. */
#define TIDE_SESSION_ZOOM_FACTOR 2.0

TideSession *tide_session_new               (void);
TideTrace   *tide_session_get_trace         (TideSession *self);
void         tide_session_set_trace         (TideSession *self,
                                             TideTrace   *trace);
TideTraceTables *tide_session_get_tables    (TideSession *self);
const TideGroup *tide_session_get_suspect   (TideSession *self);
void         tide_session_set_suspect       (TideSession     *self,
                                             const TideGroup *suspect);
gint64       tide_session_get_process_id    (TideSession *self);
void         tide_session_set_process_id    (TideSession *self,
                                             gint64       process_id);
gint         tide_session_get_step          (TideSession *self);
void         tide_session_set_step          (TideSession *self,
                                             gint         number);
void         tide_session_get_range         (TideSession *self,
                                             gint64      *begin,
                                             gint64      *end);
void         tide_session_set_range         (TideSession *self,
                                             gint64       begin,
                                             gint64       end);
void         tide_session_get_visible       (TideSession *self,
                                             gint64      *begin,
                                             gint64      *end);
void         tide_session_set_visible       (TideSession *self,
                                             gint64       begin,
                                             gint64       end);
void         tide_session_zoom              (TideSession *self,
                                             double       factor);
void         tide_session_zoom_fit          (TideSession *self);
gboolean     tide_session_zoom_back         (TideSession *self);
guint        tide_session_get_zoom_depth    (TideSession *self);
TideTrace   *tide_session_get_compare_trace (TideSession *self);
void         tide_session_set_compare_trace (TideSession *self,
                                             TideTrace   *trace);
const TideTraceDiff *tide_session_get_comparison    (TideSession *self);
const char          *tide_session_get_compare_error (TideSession *self);

G_END_DECLS
