/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideSession without a display: the rules that tie a step, a range, a
 * process and a trace together, the visible window and its zoom history,
 * and that a handler of any notification sees the whole change; the
 * trace's tables it reads with the trace, and the retained query that
 * follows its selection.
 */
#include "config.h"

#include <glib/gstdio.h>

#include "tide-retained-query.h"
#include "tide-session.h"
#include "tide-test-trace.h"
#include "tide-test-util.h"

#define SECOND (TEST_N_STEPS * TEST_STEP_NS)

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  unused)
{
  g_autoptr(GError) error = NULL;

  f->dir = tide_test_make_dir ("tide-session");
  g_assert_no_error (error);
  f->path = tide_test_trace_write (f->dir, TRUE, NULL);
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  unused)
{
  g_clear_object (&f->trace);
  tide_test_trace_remove (f->dir, f->path);
  g_free (f->path);
  g_free (f->dir);
}

static void
assert_visible (TideSession *session,
                gint64       begin,
                gint64       end)
{
  gint64 b, e;

  tide_session_get_visible (session, &b, &e);
  g_assert_cmpint (b, ==, begin);
  g_assert_cmpint (e, ==, end);
}

static void
assert_range (TideSession *session,
              gint64       begin,
              gint64       end)
{
  gint64 b, e;

  tide_session_get_range (session, &b, &e);
  g_assert_cmpint (b, ==, begin);
  g_assert_cmpint (e, ==, end);
}

/* A step and a range exclude each other; another process clears both. */
static void
test_selection_rules (Fixture       *f,
                      gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();

  tide_session_set_trace (session, f->trace);
  tide_session_set_process_id (session, 1);
  tide_session_set_step (session, 5);
  assert_range (session, -1, -1);

  tide_session_set_range (session, 120000000, 340000000);
  g_assert_cmpint (tide_session_get_step (session), ==, 0);
  assert_range (session, 120000000, 340000000);

  g_object_set (session, "step", 3, NULL);
  g_assert_cmpint (tide_session_get_step (session), ==, 3);
  assert_range (session, -1, -1);

  /* An empty range is none, and leaves the step. */
  tide_session_set_range (session, 500, 500);
  g_assert_cmpint (tide_session_get_step (session), ==, 3);
  assert_range (session, -1, -1);

  tide_session_set_range (session, 10, 20);
  tide_session_set_process_id (session, 2);
  g_assert_cmpint (tide_session_get_step (session), ==, 0);
  assert_range (session, -1, -1);
  tide_session_set_step (session, 4);
  tide_session_set_process_id (session, 1);
  g_assert_cmpint (tide_session_get_step (session), ==, 0);
}

typedef struct
{
  guint  calls;
  gint   step;
  gint64 range_begin;
  gint64 range_end;
} Seen;

static void
record_seen (TideSession *session,
             GParamSpec  *pspec,
             Seen        *seen)
{
  seen->calls++;
  seen->step = tide_session_get_step (session);
  tide_session_get_range (session, &seen->range_begin, &seen->range_end);
}

/* A handler of the step's notification sees the range already cleared:
 * setters change everything first and notify after. */
static void
test_handlers_see_whole_change (Fixture       *f,
                                gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();
  Seen seen = { 0 };

  tide_session_set_trace (session, f->trace);
  tide_session_set_range (session, 100, 200);
  g_signal_connect (session, "notify::range-begin", G_CALLBACK (record_seen), &seen);
  tide_session_set_step (session, 7);
  g_assert_cmpuint (seen.calls, ==, 1);
  g_assert_cmpint (seen.step, ==, 7);
  g_assert_cmpint (seen.range_begin, ==, -1);
  g_assert_cmpint (seen.range_end, ==, -1);

  /* Setting what is already there notifies nothing. */
  tide_session_set_step (session, 7);
  tide_session_set_range (session, -1, -1);
  g_assert_cmpuint (seen.calls, ==, 1);
}

/* Zoom actions zoom around the middle by TIDE_SESSION_ZOOM_FACTOR; each
 * that changes the window is undone by zoom-back, newest first. */
static void
test_zoom_history (Fixture       *f,
                   gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();
  guint depth = 99;

  tide_session_set_trace (session, f->trace);
  assert_visible (session, 0, SECOND);
  g_assert_cmpuint (tide_session_get_zoom_depth (session), ==, 0);

  tide_session_zoom (session, TIDE_SESSION_ZOOM_FACTOR);
  assert_visible (session, 250000000, 750000000);
  tide_session_zoom (session, TIDE_SESSION_ZOOM_FACTOR);
  assert_visible (session, 375000000, 625000000);
  /* Panning is not a zoom: it moves the window, not the history. */
  tide_session_set_visible (session, 900000000, 1150000000);
  assert_visible (session, 750000000, SECOND);
  tide_session_zoom (session, 1.0 / TIDE_SESSION_ZOOM_FACTOR);
  assert_visible (session, 500000000, SECOND);
  g_object_get (session, "zoom-depth", &depth, NULL);
  g_assert_cmpuint (depth, ==, 3);

  /* Fitting what already fits is no zoom. */
  tide_session_zoom_fit (session);
  assert_visible (session, 0, SECOND);
  tide_session_zoom_fit (session);
  g_assert_cmpuint (tide_session_get_zoom_depth (session), ==, 4);

  g_assert_true (tide_session_zoom_back (session));
  assert_visible (session, 500000000, SECOND);
  g_assert_true (tide_session_zoom_back (session));
  assert_visible (session, 750000000, SECOND);
  g_assert_true (tide_session_zoom_back (session));
  assert_visible (session, 250000000, 750000000);
  g_assert_true (tide_session_zoom_back (session));
  assert_visible (session, 0, SECOND);
  g_assert_false (tide_session_zoom_back (session));
  g_assert_cmpuint (tide_session_get_zoom_depth (session), ==, 0);
}

/* The same file reopened (a growing capture) keeps the process, the step
 * and the zoom history; another file keeps only a zoomed window. */
static void
test_reopen_keeps_session (Fixture       *f,
                           gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();
  g_autoptr(TideTrace) again = NULL;
  g_autoptr(TideTrace) other = NULL;
  g_autofree char *copy = g_build_filename (f->dir, "copy.tide", NULL);
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autoptr(GError) error = NULL;

  tide_session_set_trace (session, f->trace);
  tide_session_set_process_id (session, 1);
  tide_session_set_step (session, 6);
  tide_session_zoom (session, TIDE_SESSION_ZOOM_FACTOR);

  again = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
  tide_session_set_trace (session, again);
  g_assert_true (tide_session_get_trace (session) == again);
  g_assert_cmpint (tide_session_get_process_id (session), ==, 1);
  g_assert_cmpint (tide_session_get_step (session), ==, 6);
  g_assert_cmpuint (tide_session_get_zoom_depth (session), ==, 1);
  assert_visible (session, 250000000, 750000000);

  g_assert_true (g_file_get_contents (f->path, &contents, &length, &error));
  g_assert_true (g_file_set_contents (copy, contents, length, &error));
  other = tide_trace_open (copy, &error);
  g_assert_no_error (error);
  tide_session_set_trace (session, other);
  g_assert_cmpint (tide_session_get_process_id (session), ==, 0);
  g_assert_cmpint (tide_session_get_step (session), ==, 0);
  g_assert_cmpuint (tide_session_get_zoom_depth (session), ==, 0);
  assert_visible (session, 250000000, 750000000);

  /* No trace: nothing chosen, and a window of the narrowest span. */
  tide_session_set_trace (session, NULL);
  g_assert_null (tide_session_get_trace (session));
  assert_visible (session, 0, 1000);
  g_clear_object (&other);
  g_assert_cmpint (g_unlink (copy), ==, 0);
}

static void
count_cb (GObject    *object,
          GParamSpec *pspec,
          guint      *n)
{
  (*n)++;
}

/* The compared trace is the session's: its comparison follows the chosen
 * process and the shown file (the same file reopened keeps it, another
 * ends it), and each change says so once. */
static void
test_compare_trace (Fixture       *f,
                    gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();
  g_autoptr(TideTrace) fixed = NULL;
  g_autoptr(TideTrace) again = NULL;
  g_autofree char *fixed_path = tide_test_fixed_trace_write (f->dir);
  g_autoptr(GError) error = NULL;
  const TideTraceDiff *diff;
  guint notified = 0;

  fixed = tide_trace_open (fixed_path, &error);
  g_assert_no_error (error);
  g_signal_connect (session, "notify::comparison", G_CALLBACK (count_cb), &notified);
  tide_session_set_trace (session, f->trace);
  tide_session_set_process_id (session, 1);
  g_assert_cmpuint (notified, ==, 0);
  g_assert_null (tide_session_get_comparison (session));

  tide_session_set_compare_trace (session, fixed);
  g_assert_cmpuint (notified, ==, 1);
  g_assert_true (tide_session_get_compare_trace (session) == fixed);
  diff = tide_session_get_comparison (session);
  g_assert_nonnull (diff);
  g_assert_null (tide_session_get_compare_error (session));
  g_assert_cmpint (diff->before_process->id, ==, 1);
  g_assert_cmpint (diff->after_process->id, ==, 1);
  g_assert_cmpuint (diff->steps->len, ==, TEST_N_STEPS);

  /* No process chosen: the comparison `tidemark diff` makes by default. */
  tide_session_set_process_id (session, 0);
  g_assert_cmpuint (notified, ==, 2);
  g_assert_nonnull (tide_session_get_comparison (session));

  again = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
  tide_session_set_trace (session, again);
  g_assert_cmpuint (notified, ==, 3);
  g_assert_true (tide_session_get_compare_trace (session) == fixed);
  g_assert_nonnull (tide_session_get_comparison (session));

  tide_session_set_trace (session, fixed);
  g_assert_cmpuint (notified, ==, 4);
  g_assert_null (tide_session_get_compare_trace (session));
  g_assert_null (tide_session_get_comparison (session));
  g_clear_object (&fixed);
  g_clear_object (&again);
  g_clear_object (&session);
  g_assert_cmpint (g_unlink (fixed_path), ==, 0);
}

static void
count_notify_cb (GObject    *object,
                 GParamSpec *pspec,
                 gpointer    data)
{
  (*(guint *) data)++;
}

/* Plumbing frames are hidden from the start; a change notifies once, the
 * same value not at all. */
static void
test_hide_plumbing (Fixture       *f,
                    gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();
  gboolean hide = FALSE;
  guint notified = 0;

  g_object_get (session, "hide-plumbing", &hide, NULL);
  g_assert_true (hide);
  g_signal_connect (session, "notify::hide-plumbing", G_CALLBACK (count_notify_cb), &notified);
  g_object_set (session, "hide-plumbing", FALSE, NULL);
  g_object_set (session, "hide-plumbing", FALSE, NULL);
  g_object_get (session, "hide-plumbing", &hide, NULL);
  g_assert_false (hide);
  g_assert_cmpuint (notified, ==, 1);
}

/* The suspect chosen is one of the tables' and chooses its process; the
 * same file reopened (a live capture growing) makes new tables, which
 * drop it. */
static void
test_suspect (Fixture       *f,
              gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();
  g_autoptr(TideTrace) reopened = tide_trace_open (f->path, NULL);
  GPtrArray *suspects;
  const TideGroup *top;
  gint64 process_id;

  tide_session_set_trace (session, f->trace);
  suspects = tide_trace_tables_get_suspects (tide_session_get_tables (session));
  g_assert_cmpuint (suspects->len, ==, 1);
  top = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (top->growth_step, ==, TEST_LEAK_FROM);
  g_assert_cmpint (tide_session_get_process_id (session), ==, 0);
  tide_session_set_suspect (session, top);
  g_assert_true (tide_session_get_suspect (session) == top);
  process_id = top->process.id;
  g_assert_cmpint (process_id, ==, 1);
  g_assert_cmpint (tide_session_get_process_id (session), ==, process_id);
  /* The tables that held it go: so does it. */
  tide_session_set_trace (session, reopened);
  g_assert_null (tide_session_get_suspect (session));
  g_assert_cmpint (tide_session_get_process_id (session), ==, process_id);
}

/* Waits for @query's result: its query runs on a thread of its own and
 * answers on this one's main context. */
static void
wait_for_groups (TideRetainedQuery *query)
{
  while (tide_retained_query_get_loading (query))
    g_main_context_iteration (NULL, TRUE);
}

static gint64
total_bytes (GPtrArray *groups)
{
  gint64 total = 0;

  for (guint i = 0; groups != NULL && i < groups->len; i++)
    total += ((TideGroup *) g_ptr_array_index (groups, i))->bytes;
  return total;
}

/* The query follows the session alone, as the drill-down and the flame
 * graph bind to it: a step of the session's tables is queried over its
 * span (96 blocks of 16 KiB kept in step TEST_LEAK_FROM, nothing in step
 * 2), a newer step cancels the older one's query and wins, and no trace
 * leaves no rows. */
static void
test_retained_query (Fixture       *f,
                     gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();
  g_autoptr(TideRetainedQuery) query = tide_retained_query_new (session);
  g_autoptr(GCancellable) first = NULL;
  const TideStepRow *row;
  gint64 begin, end;

  g_assert_null (tide_retained_query_get_groups (query));
  g_assert_false (tide_retained_query_get_loading (query));

  tide_session_set_trace (session, f->trace);
  g_assert_nonnull (tide_session_get_tables (session));
  g_assert_cmpuint (tide_trace_tables_get_steps (tide_session_get_tables (session))->len, ==,
                    TEST_N_STEPS);
  tide_session_set_process_id (session, 1);
  tide_session_set_step (session, TEST_LEAK_FROM);
  g_assert_true (tide_retained_query_get_loading (query));
  g_assert_null (tide_retained_query_get_groups (query));
  wait_for_groups (query);
  g_assert_cmpint (tide_retained_query_get_step (query), ==, TEST_LEAK_FROM);
  row = tide_trace_tables_find_step (tide_session_get_tables (session), 1, TEST_LEAK_FROM);
  tide_retained_query_get_range (query, &begin, &end);
  g_assert_cmpint (begin, ==, row->start_ns);
  g_assert_cmpint (end, ==, row->start_ns + row->duration_ns);
  g_assert_cmpint (total_bytes (tide_retained_query_get_groups (query)), ==, 96 * 16 * 1024);

  tide_session_set_step (session, 2);
  wait_for_groups (query);
  g_assert_nonnull (tide_retained_query_get_groups (query));
  g_assert_cmpint (total_bytes (tide_retained_query_get_groups (query)), ==, 0);

  tide_session_set_step (session, TEST_LEAK_FROM);
  first = g_object_ref (_tide_retained_query_get_cancellable (query));
  tide_session_set_step (session, TEST_LEAK_FROM + 1);
  g_assert_true (g_cancellable_is_cancelled (first));
  wait_for_groups (query);
  g_assert_cmpint (tide_retained_query_get_step (query), ==, TEST_LEAK_FROM + 1);
  g_assert_cmpint (total_bytes (tide_retained_query_get_groups (query)), ==, 96 * 16 * 1024);
  /* The cancelled query's answer changes nothing. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpint (tide_retained_query_get_step (query), ==, TEST_LEAK_FROM + 1);

  tide_session_set_trace (session, NULL);
  g_assert_null (tide_session_get_tables (session));
  g_assert_null (tide_retained_query_get_groups (query));
  g_assert_false (tide_retained_query_get_loading (query));
}

/* A step's rows with a compared run get what the compared run's aligned
 * step retained; when that query fails, the query says why and the rows
 * stay, with nothing compared. */
static void
test_retained_compared_error (Fixture       *f,
                              gconstpointer  unused)
{
  g_autoptr(TideSession) session = tide_session_new ();
  g_autoptr(TideRetainedQuery) query = tide_retained_query_new (session);
  g_autofree char *fixed_path = tide_test_fixed_trace_write (f->dir);
  g_autoptr(TideTrace) fixed = tide_trace_open (fixed_path, NULL);

  tide_session_set_trace (session, f->trace);
  tide_session_set_process_id (session, 1);
  tide_session_set_compare_trace (session, fixed);
  g_assert_nonnull (tide_session_get_comparison (session));
  tide_session_set_step (session, TEST_LEAK_FROM);
  wait_for_groups (query);
  g_assert_nonnull (tide_retained_query_get_compared (query));
  g_assert_null (tide_retained_query_get_error (query));

  tide_test_exec_sql (fixed_path, "ALTER TABLE allocations RENAME TO gone");
  tide_session_set_step (session, TEST_LEAK_FROM + 1);
  wait_for_groups (query);
  g_assert_nonnull (tide_retained_query_get_groups (query));
  g_assert_null (tide_retained_query_get_compared (query));
  g_assert_nonnull (tide_retained_query_get_error (query));
  g_assert_nonnull (strstr (tide_retained_query_get_error (query), "allocations"));
  g_clear_object (&fixed);
  g_unlink (fixed_path);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/session/selection-rules", Fixture, NULL, fixture_setup, test_selection_rules,
              fixture_teardown);
  g_test_add ("/session/handlers-see-whole-change", Fixture, NULL, fixture_setup,
              test_handlers_see_whole_change, fixture_teardown);
  g_test_add ("/session/zoom-history", Fixture, NULL, fixture_setup, test_zoom_history,
              fixture_teardown);
  g_test_add ("/session/reopen-keeps-session", Fixture, NULL, fixture_setup,
              test_reopen_keeps_session, fixture_teardown);
  g_test_add ("/session/hide-plumbing", Fixture, NULL, fixture_setup, test_hide_plumbing,
              fixture_teardown);
  g_test_add ("/session/retained-query", Fixture, NULL, fixture_setup, test_retained_query,
              fixture_teardown);
  g_test_add ("/session/suspect", Fixture, NULL, fixture_setup, test_suspect, fixture_teardown);
  g_test_add ("/session/retained-compared-error", Fixture, NULL, fixture_setup,
              test_retained_compared_error, fixture_teardown);
  g_test_add ("/session/compare-trace", Fixture, NULL, fixture_setup, test_compare_trace,
              fixture_teardown);
  return g_test_run ();
}
