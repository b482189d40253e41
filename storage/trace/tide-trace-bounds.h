/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The time bounds of an untrusted trace.  Every time axis, bucket count and
 * tick loop is sized by the span from a trace's start to its end, so the
 * times in the file are checked before anything is sized by them:
 *
 *  - the start (meta start_ns, else the first process's start) is an
 *    integer within 2^62 ns of 0, so that start ± span never overflows;
 *  - every time in counters, processes, steps and transfers is an integer
 *    within TIDE_TRACE_MAX_SPAN_DAYS of the start;
 *  - the end (meta end_ns) is an integer, clamped to at most
 *    TIDE_TRACE_END_SLACK_NS past the last row: past that, it claims time
 *    that no row covers.
 *
 * Every process id is an integer of at least 1: views and reports take 0
 * for "no process", and a table whose schema the file rewrote can hold
 * any value in it.
 *
 * A value that breaks these rules fails with TIDE_STORAGE_ERROR_DAMAGED and
 * one line, "the trace is damaged: <column> holds <value>, ...".
 */
#pragma once

#include <sqlite3.h>

#include <glib.h>

G_BEGIN_DECLS

/* A year: far beyond any recording. */
#define TIDE_TRACE_MAX_SPAN_DAYS 366
#define TIDE_TRACE_MAX_SPAN_NS ((gint64) TIDE_TRACE_MAX_SPAN_DAYS * 86400 * \
                                G_GINT64_CONSTANT (1000000000))
/* The recorder stops a moment after its last poll. */
#define TIDE_TRACE_END_SLACK_NS (10 * G_GINT64_CONSTANT (1000000000))

gboolean tide_trace_bounds_check_process_ids (sqlite3  *db,
                                              GError  **error);
gboolean tide_trace_bounds_load (sqlite3  *db,
                                 gint64   *start_ns,
                                 gint64   *end_ns,
                                 GError  **error);

G_END_DECLS
