/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Hostile traces, as someone could mail them: a real recording (from
 * corpus/) with times that no recording has.  `tidemark export --png` and
 * `tidemark report` must end in bounded time, each with exit status 2 and
 * one line "the trace is damaged: ..." when a time cannot be true, or with
 * the picture clamped to what the rows cover when a claimed end lies past
 * them.  Every run has a time limit, so a hang fails the test instead of
 * hanging it.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "tide-run-limited.h"
#include "tide-test-util.h"
#include "tide-timeline-data.h"
#include "tide-trace.h"

/* Each run ends in well under a second on a good trace; the issue allows a
 * hostile one 20 s. */
#define LIMIT_S 20.0

typedef struct
{
  char *dir;
  char *trace;
  char *png;
} Fixture;

static char *
corpus_path (const char *name)
{
  return g_build_filename (TIDE_CORPUS_DIR, name, NULL);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *seed = corpus_path (data);
  g_autofree char *contents = NULL;
  gsize length;

  f->dir = tide_test_make_dir ("tide-hostile");
  g_assert_no_error (error);
  f->trace = g_build_filename (f->dir, "hostile.tide", NULL);
  f->png = g_build_filename (f->dir, "out.png", NULL);
  g_assert_true (g_file_get_contents (seed, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (f->trace, contents, length, NULL));
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_unlink (f->trace);
  g_unlink (f->png);
  g_rmdir (f->dir);
  g_free (f->trace);
  g_free (f->png);
  g_free (f->dir);
}


static void
run_tidemark (const char     *command,
              const Fixture  *f,
              TideLimitedRun *run)
{
  const char *export_argv[] = { TIDE_TIDEMARK_EXE, "export", f->trace, "--png", f->png, NULL };
  const char *report_argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, NULL };

  tide_run_limited (g_str_equal (command, "export") ? export_argv : report_argv, LIMIT_S, run);
  g_test_message ("tidemark %s: status %d after %.2f s", command, run->status, run->seconds);
}

/* Both commands end with status 2 and exactly @line on stderr. */
static void
assert_damaged (const Fixture *f,
                const char    *line)
{
  g_autofree char *expected = g_strdup_printf ("tidemark: the trace is damaged: %s\n", line);
  const char *commands[] = { "export", "report" };

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_auto(TideLimitedRun) run = { 0 };

      run_tidemark (commands[i], f, &run);
      g_assert_false (run.timed_out);
      g_assert_cmpint (run.status, ==, 2);
      g_assert_cmpstr (run.err, ==, expected);
      g_assert_cmpstr (run.out, ==, "");
      g_assert_false (g_file_test (f->png, G_FILE_TEST_EXISTS));
    }
}

/* A process whose id is 0, which views and reports take for "no
 * process": from the fuzzer, once a critical warning when the job lane
 * asked for its lane. */
static void
test_process_id_zero (Fixture       *f,
                      gconstpointer  data)
{
  tide_test_exec_sql (f->trace, "UPDATE processes SET id = 0"
                                " WHERE id = (SELECT min (id) FROM processes);");
  assert_damaged (f, "processes.id holds 0, not a process id");
}

/* A processes table rebuilt without its INTEGER PRIMARY KEY, which then
 * holds a process without an id: from the fuzzer, the same critical
 * warning as test_process_id_zero(). */
static void
test_process_id_null (Fixture       *f,
                      gconstpointer  data)
{
  tide_test_exec_sql (f->trace, "ALTER TABLE processes RENAME TO old_processes;"
                                "CREATE TABLE processes AS SELECT * FROM old_processes;"
                                "DROP TABLE old_processes;"
                                "UPDATE processes SET id = NULL;");
  assert_damaged (f, "processes.id holds nothing, not a process id");
}

/* A few counter samples at the last nanosecond a gint64 holds. */
static void
test_counters_at_int64_max (Fixture       *f,
                            gconstpointer  data)
{
  g_autofree char *line = NULL;
  gint64 start;

  tide_test_exec_sql (f->trace, "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT id, 1, -1, 9223372036854775807, 4096 FROM processes;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT id, 2, -1, 9223372036854775806, 8192 FROM processes;");
  start = tide_test_query_file_int (f->trace, "SELECT value FROM meta WHERE key = 'start_ns'");
  line = g_strdup_printf ("counters.ts_ns holds 9223372036854775807, more than 366 days from "
                          "the trace's start (%" G_GINT64_FORMAT ")", start);
  assert_damaged (f, line);
}

/* The same in a trace whose recording did not finish: its summaries are
 * built when it is opened, from those very rows. */
static void
test_unfinished_counters_at_int64_max (Fixture       *f,
                                       gconstpointer  data)
{
  g_autofree char *line = NULL;
  gint64 start;

  tide_test_exec_sql (f->trace, "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT id, 1, -1, 9223372036854775807, 4096 FROM processes;");
  start = tide_test_query_file_int (f->trace, "SELECT value FROM meta WHERE key = 'start_ns'");
  line = g_strdup_printf ("counters.ts_ns holds 9223372036854775807, more than 366 days from "
                          "the trace's start (%" G_GINT64_FORMAT ")", start);
  assert_damaged (f, line);
}

static void
test_meta_end_1e308 (Fixture       *f,
                     gconstpointer  data)
{
  tide_test_exec_sql (f->trace, "UPDATE meta SET value = 1e308 WHERE key = 'end_ns'");
  assert_damaged (f, "meta end_ns holds 1.0e+308, not a time in nanoseconds");
}

/* A step that starts long before the trace does. */
static void
test_step_before_start (Fixture       *f,
                        gconstpointer  data)
{
  g_autofree char *line = NULL;

  tide_test_exec_sql (f->trace, "UPDATE steps SET start_ns = -9223372036854775808"
                                " WHERE number = 3");
  line = g_strdup_printf ("steps.start_ns holds -9223372036854775808, more than 366 days from "
                          "the trace's start (%" G_GINT64_FORMAT ")",
                          tide_test_query_file_int (f->trace, "SELECT value FROM meta"
                                                              " WHERE key = 'start_ns'"));
  assert_damaged (f, line);
}

/* `tidemark report @path @mode --format csv`, which must succeed in time
 * and say nothing on stderr. */
static char *
report_csv (const char *path,
            const char *mode)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", path, mode, "--format", "csv", NULL };
  g_auto(TideLimitedRun) run = { 0 };

  tide_run_limited (argv, LIMIT_S, &run);
  g_assert_false (run.timed_out);
  g_assert_cmpstr (run.err, ==, "");
  g_assert_cmpint (run.status, ==, 0);
  return g_steal_pointer (&run.out);
}

/* A device number past what an int holds (2^31 read as an int is
 * negative, and indexed an array): the series is ignored, as one of a
 * device past the 64 that a report shows is, so the steps read as if its
 * row were not there. */
static void
test_device_past_int (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *without = g_build_filename (f->dir, "without.tide", NULL);
  g_autofree char *expected = NULL;
  g_autofree char *report = NULL;
  g_autofree char *contents = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (f->trace, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (without, contents, length, NULL));
  tide_test_exec_sql (without, "DELETE FROM step_series"
                               " WHERE rowid = (SELECT min (rowid) FROM step_series)");
  tide_test_exec_sql (f->trace, "UPDATE step_series SET device = 2147483648"
                                " WHERE rowid = (SELECT min (rowid) FROM step_series)");
  expected = report_csv (without, "--steps");
  report = report_csv (f->trace, "--steps");
  g_assert_cmpstr (report, ==, expected);
  g_unlink (without);
}

/* Step 2's RSS at the least a gint64 holds: its change and what is left
 * unexplained saturate at that bound, and step 3's change at the other,
 * rather than overflowing (undefined behaviour; it wrapped to a small
 * number of the wrong sign). */
static void
test_rss_at_int64_min (Fixture       *f,
                       gconstpointer  data)
{
  g_autofree char *report = NULL;
  g_auto(GStrv) lines = NULL;

  tide_test_exec_sql (f->trace, "UPDATE step_stats SET rss_end = -9223372036854775808"
                                " WHERE step_id = (SELECT id FROM steps WHERE number = 2)");
  report = report_csv (f->trace, "--steps");
  lines = g_strsplit (report, "\n", -1);
  /* pid, role, dist_rank, steps_pid, step, label, start, duration, rss_end,
   * rss_delta, ..., unattributed (19th) */
  g_assert_true (g_regex_match_simple ("^[0-9]+,[^,]*,,[0-9]+,2,,[0-9]+,[0-9]+,"
                                       "-9223372036854775808,-9223372036854775808,0,0,0,0,0,0,0,"
                                       "0,-9223372036854775808,0,0,,,,,,,,$", lines[2], 0, 0));
  g_assert_true (g_regex_match_simple ("^[0-9]+,[^,]*,,[0-9]+,3,,[0-9]+,[0-9]+,3289088,"
                                       "9223372036854775807,", lines[3], 0, 0));

  /* In text, 2^63 bytes are 8388608 TiB, with the sign. */
  {
    const char *argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--steps", NULL };
    g_auto(TideLimitedRun) run = { 0 };
    g_auto(GStrv) text = NULL;

    tide_run_limited (argv, LIMIT_S, &run);
    g_assert_cmpint (run.status, ==, 0);
    text = g_strsplit (run.out, "\n", -1);
    g_assert_true (g_regex_match_simple ("^ +2 .* -8388608\\.00 TiB -8388608\\.00 TiB ", text[3],
                                         0, 0));
  }
}

/* Pages that a child holds because its parent wrote its own, far past the
 * pages it holds alone (cow_left_bytes past cow_bytes), read with its
 * private memory at step 2's end: its own copies are none, never a
 * negative count. */
static void
test_cow_left_past_copies (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *report = NULL;
  g_autofree char *cell = NULL;

  tide_test_exec_sql (f->trace, "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 16, -1, end_ns, 8192 FROM steps"
                                " WHERE number = 2;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 24, -1, end_ns, 4096 FROM steps"
                                " WHERE number = 2;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 27, -1, end_ns, 9223372036854775807 FROM steps"
                                " WHERE number = 2;");
  report = report_csv (f->trace, "--steps");
  cell = tide_test_csv_cell (report, 2, "cow_bytes");
  g_assert_cmpstr (cell, ==, "0");
}

/* An allocator's free bytes at the largest value a counter holds while its
 * bytes on pages not present fall from it to none, pymalloc's bytes from
 * before the hooks and a fork's child's inherited frees as large, and the
 * anonymous memory falling as far:
 * the change on present pages, the room the heap fits in and the terms'
 * sum are past what an int64 holds, and saturate rather than overflow. */
static void
test_free_absent_past_int64 (Fixture       *f,
                             gconstpointer  data)
{
  g_autofree char *report = NULL;
  g_autofree char *cell = NULL;

  tide_test_exec_sql (f->trace, "DELETE FROM counters WHERE counter = 18;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 18, -1, end_ns, 9223372036854775807 FROM steps"
                                " WHERE number = 2;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 37, -1, end_ns, 9223372036854775807 FROM steps"
                                " WHERE number = 1;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 37, -1, end_ns, 0 FROM steps WHERE number = 2;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 32, -1, end_ns, 9223372036854775807 FROM steps"
                                " WHERE number = 2;"
                                "DELETE FROM counters WHERE counter = 13;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 13, -1, end_ns, 9223372036854775807 FROM steps"
                                " WHERE number = 1;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 13, -1, end_ns, 0 FROM steps WHERE number = 2;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 38, -1, end_ns, 0 FROM steps WHERE number = 1;"
                                "INSERT INTO counters (process_id, counter, device, ts_ns, value)"
                                " SELECT process_id, 38, -1, end_ns, 9223372036854775807 FROM steps"
                                " WHERE number = 2;");
  report = report_csv (f->trace, "--rss");
  cell = tide_test_csv_cell (report, 2, "alloc_free_bytes");
  g_assert_cmpstr (cell, ==, "9223372036854775807");
  g_free (cell);
  cell = tide_test_csv_cell (report, 2, "py_unhooked_bytes");
  g_assert_cmpstr (cell, ==, "9223372036854775807");
  g_free (cell);
  cell = tide_test_csv_cell (report, 2, "inherited_freed_bytes");
  g_assert_cmpstr (cell, ==, "-9223372036854775807");
}

/* One live block with scope 0, the others with none (NULL): SQL groups
 * them apart, and both are "no scope" to the report, which once loaded the
 * details of only one of the two and crashed on the other. */
static void
test_scope_null_and_zero (Fixture       *f,
                          gconstpointer  data)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--retained", "--by", "scope",
                         NULL };
  g_auto(TideLimitedRun) run = { 0 };
  g_auto(GStrv) lines = NULL;

  tide_test_exec_sql (f->trace, "UPDATE allocations SET scope_id = 0 WHERE id = (SELECT min (id)"
                                " FROM allocations WHERE free_ns IS NULL AND scope_id IS NULL)");
  tide_run_limited (argv, LIMIT_S, &run);
  g_assert_false (run.timed_out);
  g_assert_cmpstr (run.err, ==, "");
  g_assert_cmpint (run.status, ==, 0);
  lines = g_strsplit (run.out, "\n", -1);
  g_assert_true (g_str_has_suffix (lines[0], " in 2 groups"));
  g_assert_true (g_str_has_suffix (lines[2], "(no scope)"));
  g_assert_true (g_str_has_suffix (lines[3], "(no scope)"));
}

/* Stack and scope ids near the top of a gint64 still group and rank as
 * the ids they replaced.  The reports' hash functions multiplied such ids
 * as signed numbers; clang's UBSan stopped there (the fuzzer's reproducer,
 * corpus/stack-id-hash-overflow.tide), while GCC's build narrows that
 * product to 32 bits and does not, so this test checks the outcome. */
static void
test_ids_near_int64_max (Fixture       *f,
                         gconstpointer  data)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--steps", "--suspects",
                         "--retained", NULL };
  g_auto(TideLimitedRun) run = { 0 };

  tide_test_exec_sql (f->trace, "UPDATE allocations SET stack_id = stack_id + 4611686018427387904,"
                                " scope_id = 4611686018427387905;"
                                "UPDATE step_series SET stack_id = stack_id + 4611686018427387904,"
                                " scope_id = 4611686018427387905;");
  tide_run_limited (argv, LIMIT_S, &run);
  g_assert_false (run.timed_out);
  g_assert_cmpstr (run.err, ==, "");
  g_assert_cmpint (run.status, ==, 0);
  /* The ids name no stack now: the two suspects stand as they were,
   * without frames. */
  g_assert_nonnull (strstr (run.out, "fastest first:\n"
                                     "  1. (a stack without frames)\n"
                                     "       +4.00 MiB/step since step 5, 24.00 MiB live at the "
                                     "last step, in leaky-steps (pid 22222) on host\n"
                                     "  2. (a stack without frames)\n"
                                     "       +1.50 MiB/step since step 4, 10.50 MiB live at the "
                                     "last step, in leaky-steps (pid 22222) on host\n"));
}

/* Two processes whose RSS summaries stand at G_MAXINT64: the "all
 * processes" lane sums them, saturating at G_MAXINT64 rather than
 * overflowing to -2. */
static void
test_lane_sum_saturates (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(TideTimelineData) timeline = NULL;
  g_autoptr(GError) error = NULL;
  const TideLaneData *rss;
  TideTimeWindow window;
  guint n_summed = 0;

  tide_test_exec_sql (f->trace, "UPDATE counter_lod SET min_value = 9223372036854775807,"
                                " max_value = 9223372036854775807, last_value = 9223372036854775807"
                                " WHERE counter = 1;"
                                "INSERT INTO processes (id, pid, ppid, exe, start_ns, end_ns,"
                                " sample_bytes, all_mode)"
                                " SELECT 2, pid + 1, pid, exe, start_ns, end_ns, sample_bytes,"
                                " all_mode FROM processes WHERE id = 1;"
                                "INSERT INTO counter_lod SELECT 2, counter, device, level, bucket,"
                                " min_value, max_value, last_value FROM counter_lod"
                                " WHERE process_id = 1"
                                " AND counter = 1;");
  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  window = (TideTimeWindow) { 0, tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace),
                              200 };
  timeline = tide_timeline_data_query (trace, 0, &window, &error);
  g_assert_no_error (error);
  rss = tide_timeline_data_find_lane (timeline, 1, -1);
  g_assert_nonnull (rss);
  g_assert_cmpint (rss->peak, ==, G_MAXINT64);
  for (guint c = 0; c < rss->n_columns; c++)
    if (rss->has[c])
      {
        g_assert_cmpint (rss->min[c], ==, G_MAXINT64);
        g_assert_cmpint (rss->last[c], ==, G_MAXINT64);
        n_summed++;
      }
  g_assert_cmpuint (n_summed, >, 100);
}

/* Every block of 1e308 bytes: sums of sizes saturate at G_MAXINT64 bytes
 * (llround () of 1e308 is unspecified; here it gave G_MININT64) and their
 * total as well. */
static void
test_size_1e308 (Fixture       *f,
                 gconstpointer  data)
{
  const char *json[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--retained", "--step", "5",
                         "--format", "json", NULL };
  const char *text[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--retained", "--by", "scope",
                         NULL };
  g_auto(TideLimitedRun) run = { 0 };
  g_auto(TideLimitedRun) run_text = { 0 };

  tide_test_exec_sql (f->trace, "UPDATE allocations SET size = 1e308");
  tide_run_limited (json, LIMIT_S, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (g_str_has_prefix (run.out, "{\"retained\":[{\"position\":1,\"pid\":22222,"
                                            "\"role\":\"leaky-steps\",\"dist_rank\":null,"
                                            "\"device\":\"host\",\"bytes\":9223372036854775807,"));
  tide_run_limited (text, LIMIT_S, &run_text);
  g_assert_cmpint (run_text.status, ==, 0);
  g_assert_true (g_str_has_prefix (run_text.out, "Retained by scope, still live when the trace "
                                                 "ended: 8388608.00 TiB in 1 group\n"));
}

/* A second process without steps, whose heap at the first's step ends
 * comes from its allocation rows (storage/trace/tide-live-at.c), all of
 * them damaged: sizes of 1e308, weights of -1e308, times and frees at
 * both ends of int64, kinds no recording writes, block ranges inverted
 * and one that claims every row, and short-lived rows that may live
 * G_MAXINT64 ns.  The report ends at once, its sums saturated. */
static void
test_borrowed_heap_rows (Fixture       *f,
                         gconstpointer  data)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", f->trace, "--rss", NULL };
  g_auto(TideLimitedRun) run = { 0 };

  tide_test_exec_sql (f->trace,
    "CREATE TEMP TABLE t AS SELECT * FROM processes WHERE id = 1;"
    "UPDATE t SET id = 2, pid = 22223, parent_id = 1;"
    "INSERT INTO processes SELECT * FROM t;"
    "INSERT INTO allocations (process_id, kind, device, address, size, weight, alloc_ns, free_ns)"
    " SELECT 2, CASE id % 3 WHEN 0 THEN 1 WHEN 1 THEN 2 ELSE 99 END, -1, address,"
    "  CASE WHEN id % 5 = 0 THEN 1e308 ELSE size END,"
    "  CASE WHEN id % 7 = 0 THEN -1e308 ELSE weight END,"
    "  CASE WHEN id % 11 = 0 THEN -9223372036854775808 ELSE alloc_ns END,"
    "  CASE WHEN id % 2 = 0 THEN -9223372036854775808"
    "       WHEN id % 13 = 0 THEN 9223372036854775807 ELSE free_ns END"
    " FROM allocations WHERE process_id = 1;"
    "INSERT INTO allocation_ranges VALUES"
    " (9000000, 1, 9223372036854775807, -9223372036854775808),"
    " (-5, 9223372036854775807, -9223372036854775808, 9223372036854775807);"
    "UPDATE meta SET value = 9223372036854775807 WHERE key = 'short_lived_ns';");
  tide_run_limited (argv, LIMIT_S, &run);
  g_assert_false (run.timed_out);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "\nstep 1, leaky-steps (pid 22223): 0 B RSS: "
                                     "heap +8388608.00 TiB, unexplained -8388608.00 TiB\n"));
}

/* An end 300 days out, an integer as the recorder writes it: the trace
 * opens, ending 10 s after its last row rather than at the claimed end. */
static void
test_meta_end_past_rows (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(TideLimitedRun) run = { 0 };
  gint64 start, last_row;

  tide_test_exec_sql (f->trace, "UPDATE meta SET value = value + 300 * 86400000000000"
                                " WHERE key = 'end_ns'");
  start = tide_test_query_file_int (f->trace, "SELECT value FROM meta WHERE key = 'start_ns'");
  last_row = tide_test_query_file_int (f->trace, "SELECT max ((SELECT max (ts_ns) FROM counters),"
                                  " (SELECT max (end_ns) FROM processes),"
                                  " (SELECT max (end_ns) FROM steps))");
  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tide_trace_get_start_ns (trace), ==, start);
  g_assert_cmpint (tide_trace_get_end_ns (trace), ==, last_row + 10 * G_GINT64_CONSTANT (1000000000));

  run_tidemark ("export", f, &run);
  g_assert_false (run.timed_out);
  g_assert_cmpstr (run.err, ==, "");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (g_file_test (f->png, G_FILE_TEST_IS_REGULAR));
}

/* Stacks kept as rows (schema 4) whose frames are not what the recorder
 * writes: text that is not JSON fails the report in one line; values that
 * are not frame ids, and an array far deeper than any stack, name what
 * they can. */
static void
test_stack_rows (Fixture       *f,
                 gconstpointer  data)
{
  static const struct
  {
    const char *frames;  /* SQL */
    int         status;
    const char *err;
  } cases[] = {
    { "'[1,'", 2, "tidemark: cannot query the trace: malformed JSON\n" },
    { "'[1,\"x\",{\"a\":[2]},-5,9223372036854775807,1e308,null,[]]'", 0, "" },
    { "'[' || replace (hex (zeroblob (100000)), '00', '1,') || '1]'", 0, "" },
  };

  tide_test_exec_sql (f->trace, "PRAGMA user_version = 4;"
                                " CREATE TABLE stacks (id INTEGER PRIMARY KEY,"
                                " frames TEXT NOT NULL) STRICT;"
                                " INSERT INTO stacks (id, frames) SELECT id, '[]' FROM stack_nodes;"
                                " DELETE FROM stack_nodes");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *sql = g_strdup_printf ("UPDATE stacks SET frames = %s", cases[i].frames);
      g_auto(TideLimitedRun) run = { 0 };

      tide_test_exec_sql (f->trace, sql);
      run_tidemark ("report", f, &run);
      g_assert_false (run.timed_out);
      g_assert_cmpstr (run.err, ==, cases[i].err);
      g_assert_cmpint (run.status, ==, cases[i].status);
    }
}

/* The seed itself opens with the bounds its rows and meta give. */
static void
test_seed_bounds (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(TideTrace) trace = tide_trace_open (f->trace, NULL);

  g_assert_nonnull (trace);
  g_assert_cmpint (tide_trace_get_start_ns (trace), ==,
                   tide_test_query_file_int (f->trace, "SELECT value FROM meta"
                                                       " WHERE key = 'start_ns'"));
  g_assert_cmpint (tide_trace_get_end_ns (trace), ==,
                   tide_test_query_file_int (f->trace, "SELECT value FROM meta"
                                                       " WHERE key = 'end_ns'"));
}

/* An unfinished trace with a zeroed page: its report fails with one line,
 * and no note that the trace is incomplete before it. */
static void
test_unfinished_failure_one_line (void)
{
  g_autofree char *path = corpus_path ("unfinished-zeroed-page.tide");
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", path, "--steps", "--suspects",
                         "--retained", NULL };
  g_auto(TideLimitedRun) run = { 0 };

  tide_run_limited (argv, LIMIT_S, &run);
  g_assert_false (run.timed_out);
  g_assert_cmpint (run.status, ==, 2);
  g_assert_cmpstr (run.err, ==, "tidemark: cannot query the trace: database disk image is "
                                "malformed\n");
  g_assert_cmpstr (run.out, ==, "");
}

/* Every trace of the fuzzer's corpus, seeds and the reproducers of what
 * was found, ends as it must through both commands. */
static void
test_corpus (void)
{
  const struct
  {
    const char *name;
    int         status;        /* of export --png */
    const char *err;
    int         report_status; /* of report --retained --by scope */
    gboolean    err_after_path; /* err is "tidemark: PATH" then this */
  } traces[] = {
    { "leaky-steps.tide", 0, "", 0 },
    { "rss-toucher.tide", 0, "", 0 },
    { "leaky-steps-unfinished.tide", 0, "", 0 },
    { "counters-at-int64-max.tide", 2,
      "tidemark: the trace is damaged: counters.ts_ns holds 9223372036854775807, more than 366 "
      "days from the trace's start (5045818437512)\n", 2 },
    { "meta-end-1e308.tide", 2,
      "tidemark: the trace is damaged: meta end_ns holds 1.0e+308, not a time in nanoseconds\n", 2 },
    /* Opens, and its timeline's query meets the zeroed page: once exit 1,
     * as if the command had failed rather than the file. */
    { "zeroed-page-timeline.tide", 2,
      "tidemark: cannot query the timeline: database disk image is malformed\n", 0 },
    /* step_series.device = 2^31: once a crash (test_device_past_int). */
    { "device-past-int.tide", 0, "", 0 },
    /* From the fuzzer: counter_lod rows out of key order, one counter a
     * text; the timeline's probe for device lanes once seeked forever. */
    { "counter-lod-out-of-order.tide", 2,
      "tidemark: the trace is damaged: its timeline summary (counter_lod) is out of order\n", 0 },
    /* From the fuzzer: live blocks of scope NULL and of scope 0, once a
     * crash in report --retained --by scope (test_scope_null_and_zero). */
    { "scope-null-and-zero.tide", 0, "", 0 },
    /* From the mutation test (seed 23): its report once said two lines. */
    { "unfinished-zeroed-page.tide", 2,
      "tidemark: cannot query the trace: database disk image is malformed\n", 0 },
    /* From the fuzzer: a stack id that overflowed the reports' signed hash
     * (test_ids_near_int64_max); UBSan stopped the report. */
    { "stack-id-hash-overflow.tide", 0, "", 0 },
    /* From the fuzzer: an index whose name holds line breaks, which
     * SQLite's message quoted: an error of two lines. */
    { "index-name-with-newline.tide", 2,
      " is damaged or truncated (cannot read the trace: malformed database schema "
      "(sqlite_autoindex_ns?\?\?)) - orphan index)\n", 2, TRUE },
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tide_test_make_dir ("tide-corpus");
  g_autofree char *png = g_build_filename (dir, "out.png", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (traces); i++)
    {
      g_autofree char *path = corpus_path (traces[i].name);
      g_autofree char *err = traces[i].err_after_path
                             ? g_strconcat ("tidemark: ", path, traces[i].err, NULL)
                             : g_strdup (traces[i].err);
      const char *argv[] = { TIDE_TIDEMARK_EXE, "export", path, "--png", png, NULL };
      g_auto(TideLimitedRun) run = { 0 };

      tide_run_limited (argv, LIMIT_S, &run);
      g_test_message ("%s: status %d after %.2f s: %s", traces[i].name, run.status, run.seconds,
                      run.err);
      g_assert_false (run.timed_out);
      g_assert_cmpint (run.status, ==, traces[i].status);
      g_assert_cmpstr (run.err, ==, err);
      g_assert_true (g_file_test (png, G_FILE_TEST_EXISTS) == (run.status == 0));
      g_unlink (png);

      {
        const char *report[] = { TIDE_TIDEMARK_EXE, "report", path, "--retained", "--by",
                                 "scope", NULL };
        g_auto(TideLimitedRun) reported = { 0 };

        tide_run_limited (report, LIMIT_S, &reported);
        g_assert_false (reported.timed_out);
        g_assert_cmpint (reported.status, ==, traces[i].report_status);
        if (reported.status == 2)
          g_assert_cmpstr (reported.err, ==, err);
      }
    }
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, seed, func) \
  g_test_add (path, Fixture, seed, fixture_setup, func, fixture_teardown)
  ADD ("/hostile/seed-bounds", "leaky-steps.tide", test_seed_bounds);
  ADD ("/hostile/counters-at-int64-max", "leaky-steps.tide", test_counters_at_int64_max);
  ADD ("/hostile/unfinished-counters-at-int64-max", "leaky-steps-unfinished.tide",
       test_unfinished_counters_at_int64_max);
  ADD ("/hostile/meta-end-1e308", "leaky-steps.tide", test_meta_end_1e308);
  ADD ("/hostile/process-id-zero", "leaky-steps.tide", test_process_id_zero);
  ADD ("/hostile/process-id-null", "leaky-steps.tide", test_process_id_null);
  ADD ("/hostile/step-before-start", "leaky-steps.tide", test_step_before_start);
  ADD ("/hostile/meta-end-past-rows", "leaky-steps.tide", test_meta_end_past_rows);
  ADD ("/hostile/device-past-int", "leaky-steps.tide", test_device_past_int);
  ADD ("/hostile/rss-at-int64-min", "leaky-steps.tide", test_rss_at_int64_min);
  ADD ("/hostile/scope-null-and-zero", "leaky-steps.tide", test_scope_null_and_zero);
  ADD ("/hostile/ids-near-int64-max", "leaky-steps.tide", test_ids_near_int64_max);
  ADD ("/hostile/lane-sum-saturates", "leaky-steps.tide", test_lane_sum_saturates);
  ADD ("/hostile/size-1e308", "leaky-steps.tide", test_size_1e308);
  ADD ("/hostile/stack-rows", "leaky-steps.tide", test_stack_rows);
  ADD ("/hostile/cow-left-past-copies", "leaky-steps.tide", test_cow_left_past_copies);
  ADD ("/hostile/free-absent-past-int64", "leaky-steps.tide", test_free_absent_past_int64);
  ADD ("/hostile/borrowed-heap-rows", "leaky-steps.tide", test_borrowed_heap_rows);
#undef ADD
  g_test_add_func ("/hostile/unfinished-failure-one-line", test_unfinished_failure_one_line);
  g_test_add_func ("/hostile/corpus", test_corpus);
  return g_test_run ();
}
