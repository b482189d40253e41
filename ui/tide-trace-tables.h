/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-trace-tables.h: what the views show of a whole trace, read once
 * when the session's trace is set.
 */
#pragma once

#include <glib-object.h>

#include "tide-processes.h"
#include "tide-report.h"
#include "tide-trace.h"

G_BEGIN_DECLS

#define TIDE_TYPE_TRACE_TABLES (tide_trace_tables_get_type ())

G_DECLARE_FINAL_TYPE (TideTraceTables, tide_trace_tables, TIDE, TRACE_TABLES, GObject)

TideTraceTables   *tide_trace_tables_new                (TideTrace       *trace);
GPtrArray         *tide_trace_tables_get_steps          (TideTraceTables *self);
GArray            *tide_trace_tables_get_transfers      (TideTraceTables *self);
GPtrArray         *tide_trace_tables_get_suspects       (TideTraceTables *self);
GPtrArray         *tide_trace_tables_get_class_suspects (TideTraceTables *self);
GPtrArray         *tide_trace_tables_get_processes      (TideTraceTables *self);
GArray            *tide_trace_tables_get_deaths         (TideTraceTables *self);
const char        *tide_trace_tables_get_death_message  (TideTraceTables *self);
const char        *tide_trace_tables_get_error          (TideTraceTables *self);
const TideStepRow *tide_trace_tables_find_step          (TideTraceTables *self,
                                                         gint64           process_id,
                                                         gint             number);

G_END_DECLS
