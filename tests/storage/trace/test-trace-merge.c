/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide_trace_merge on small written traces, one per "node": ids, frames
 * deduplicated by build-id, clocks shifted by the recorded real-time
 * offsets and cross-checked by step ends, reports over the result grouped
 * by host, and every refusal in one line with nothing left behind.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "tide-report-format.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-trace-merge.h"
#include "tide-trace-writer.h"

#define MS G_GINT64_CONSTANT (1000000)
#define MiB G_GINT64_CONSTANT (1048576)

static char *dir;

typedef struct
{
  const char *host;
  const char *boot_id;          /* NULL: a trace made before boot ids were recorded */
  gint64      offset_ns;        /* realtime_offset_ns; 0: none recorded */
  gint64      step_delay_ns;    /* added to every time of the trace */
  gint        rank;
  gboolean    leaks;
  const char *module;           /* where the frames' code lies on this node */
  const char *build_id;         /* NULL: no modules table row */
  gboolean    stack_rows;       /* its stack a row of stacks, not stack nodes */
} NodeShape;

/* Residency as a recording writes it (schema 4): the leak's row where it
 * grew, at each of its steps, and each step's total. */
static void
add_residency (TideTraceWriter *w,
               const NodeShape *shape,
               gint             k)
{
  gint64 kept = shape->leaks && k >= 4 ? (k - 3) * MiB : 0;
  TideResidencyRow row = { .step_id = k, .stack_id = 2, .device = -1, .resident_bytes = kept,
                           .resident_born_bytes = kept > 0 ? MiB : 0 };

  if (kept > 0)
    tide_trace_writer_add_residency (w, &row);
  tide_trace_writer_add_residency_total (w, k, kept, row.resident_born_bytes);
}

/* One rank of a job: 10 steps of 1 ms from @shape->step_delay_ns; a leaking
 * rank keeps 1 MiB in each step from 4 on, from stack keep_outputs <- main. */
static char *
write_node (const char      *name,
            const NodeShape *shape)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  gint64 t0 = 1000 * MS + shape->step_delay_ns;
  TideFrameRow caller = { .id = 1, .kind = TIDE_FRAME_NATIVE, .function = "main",
                          .file = "/src/train.c", .line = 90, .module = shape->module,
                          .module_offset = 0x40 };
  TideFrameRow leak = { .id = 2, .kind = TIDE_FRAME_NATIVE, .function = "keep_outputs",
                        .file = "/src/train.c", .line = 25, .module = shape->module,
                        .module_offset = 0x100 };
  TideProcessRow proc = { .id = 1, .pid = 500 + shape->rank, .ppid = 1, .start_ns = t0,
                          .all_mode = TRUE, .exe = "/usr/bin/train",
                          .cmdline = "/usr/bin/train --ddp" };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", t0);
  tide_trace_writer_set_meta (w, "hostname", shape->host);
  if (shape->boot_id != NULL)
    tide_trace_writer_set_meta (w, "boot_id", shape->boot_id);
  if (shape->offset_ns != 0)
    tide_trace_writer_set_meta_int (w, "realtime_offset_ns", shape->offset_ns);
  tide_trace_writer_set_meta_int (w, "all_mode", 1);
  if (shape->build_id != NULL)
    tide_trace_writer_add_module (w, shape->module, shape->build_id);
  tide_trace_writer_add_frame (w, &caller);
  tide_trace_writer_add_frame (w, &leak);
  if (shape->stack_rows)
    tide_trace_writer_add_stack (w, 2, (const gint64[]) { 1, 2 }, 2);
  else
    {
      tide_trace_writer_add_stack_node (w, 1, 0, 1, 1);
      tide_trace_writer_add_stack_node (w, 2, 1, 2, 2);
    }
  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_set_process_rank (w, 1, shape->rank);
  for (gint k = 1; k <= 10; k++)
    {
      gint64 end = t0 + k * MS;
      TideAllocRow a = { .process_id = 1, .alloc_ns = end - 1000, .address = 0x100000 * k,
                         .size = MiB, .weight = 1, .stack_id = 2, .device = -1, .kind = 1 };

      tide_trace_writer_add_step (w, k, 1, k, "", end - MS, end);
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, end - 1, (100 + k) * MiB);
      if (shape->leaks && k >= 4)
        tide_trace_writer_add_allocation (w, &a);
      if (shape->stack_rows)
        add_residency (w, shape, k);
    }
  tide_trace_writer_end_process (w, 1, t0 + 10 * MS, &tide_test_exited_0, 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return path;
}

static gboolean
merge (const char * const *inputs,
       const char         *output,
       gboolean            allow_incomplete,
       gboolean            force,
       GError            **error)
{
  TideMergeOptions options = { .allow_incomplete = allow_incomplete, .force = force };

  return tide_trace_merge (inputs, output, &options, error);
}

static char *
merge_ok (const char * const *inputs,
          const char         *name)
{
  g_autoptr(GError) error = NULL;
  char *output = g_build_filename (dir, name, NULL);

  g_unlink (output);
  g_assert_true (merge (inputs, output, FALSE, FALSE, &error));
  g_assert_no_error (error);
  return output;
}

static const NodeShape node_a = { "node-a", "boot-a", 1000000000000, 0, 0, FALSE,
                                  "/opt/a/libtrain.so", "b1d0" };
static const NodeShape node_b = { "node-b", "boot-b", 1000000001500, 0, 1, TRUE,
                                  "/opt/b/libtrain.so", "b1d0" };

/* Two nodes, one rank each: processes with their host and rank, one copy of
 * each frame and stack node (one build under two paths), and rank 1's leak
 * under node-b. */
static void
test_two_nodes (void)
{
  g_autofree char *a = write_node ("a.tide", &node_a);
  g_autofree char *b = write_node ("b.tide", &node_b);
  g_autofree char *job = merge_ok ((const char *[]) { a, b, NULL }, "job.tide");
  g_autoptr(TideTrace) trace = tide_test_open_trace (job);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) summaries = tide_report_processes (trace, &error);
  g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, &error);
  TideProcessSummary *s0, *s1;
  TideGroup *g;

  g_assert_no_error (error);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM frames"), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM stack_nodes"), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations"), ==, 7);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, 20);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM merge_sources"), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (DISTINCT stack_id)"
                                               " FROM allocations"), ==, 1);

  g_assert_cmpuint (summaries->len, ==, 2);
  s0 = g_ptr_array_index (summaries, 0);
  s1 = g_ptr_array_index (summaries, 1);
  g_assert_cmpstr (s0->process->host, ==, "node-a");
  g_assert_cmpstr (s0->process->label, ==, "rank 0 on node-a");
  g_assert_cmpint (s0->process->dist_rank, ==, 0);
  g_assert_cmpstr (s1->process->host, ==, "node-b");
  g_assert_cmpstr (s1->process->label, ==, "rank 1 on node-b");
  g_assert_cmpuint (s1->n_suspects, ==, 1);

  g_assert_cmpuint (suspects->len, ==, 1);
  /* The processes report, host by host. */
  {
    g_autoptr(GString) text = g_string_new (NULL);
    g_autoptr(GString) csv = g_string_new (NULL);
    const char *a_at, *b_at;

    tide_format_processes (text, summaries, NULL, TIDE_FORMAT_TEXT);
    tide_format_processes (csv, summaries, NULL, TIDE_FORMAT_CSV);
    a_at = strstr (text->str, "\nhost node-a\n     500 ");
    b_at = strstr (text->str, "\nhost node-b\n     501 ");
    g_assert_nonnull (a_at);
    g_assert_nonnull (b_at);
    g_assert_true (a_at < b_at);
    g_assert_cmpstr (csv->str, ==, "pid,parent_pid,role,dist_rank,peak_rss_bytes,"
                                   "peak_rss_read_bytes,rss_growth_bytes,steps,suspects,end,"
                                   "exit_code,signal,signal_name,core_dumped,oom_killed,oom_scope,"
                                   "oom_limit_bytes,end_step,device_oom,command,host\n"
                                   "500,,rank 0 on node-a,0,115343360,115343360,9437184,10,0,"
                                   "exited,0,,,0,0,,,,,train --ddp,node-a\n"
                                   "501,,rank 1 on node-b,1,115343360,115343360,9437184,10,1,"
                                   "exited,0,,,0,0,,,,,train --ddp,node-b\n");
  }
  g = g_ptr_array_index (suspects, 0);
  g_assert_cmpstr (g->process.role, ==, "rank 1 on node-b");
  g_assert_cmpint (g->growth_bytes, ==, 7 * MiB);
  g_assert_cmpstr (tide_test_top_function (g), ==, "keep_outputs");
}

/* Other boots: node-b's times move by the difference of the offsets
 * (+1500 ns); step ends a constant 400 ns apart leave a skew of 400 ns.
 * One boot: one clock, whatever the offsets say. */
static void
test_clocks (void)
{
  NodeShape late_b = node_b;
  NodeShape same_boot_b = node_b;
  g_autofree char *a = write_node ("clock-a.tide", &node_a);
  g_autofree char *b = NULL;
  g_autofree char *c = NULL;
  g_autofree char *job = NULL;
  g_autofree char *same = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(TideTrace) same_trace = NULL;

  late_b.step_delay_ns = -1100;
  b = write_node ("clock-b.tide", &late_b);
  same_boot_b.boot_id = "boot-a";
  same_boot_b.offset_ns = node_a.offset_ns + 77777;
  c = write_node ("clock-c.tide", &same_boot_b);
  job = merge_ok ((const char *[]) { a, b, NULL }, "clock-job.tide");
  same = merge_ok ((const char *[]) { a, c, NULL }, "clock-same.tide");
  trace = tide_test_open_trace (job);
  same_trace = tide_test_open_trace (same);

  g_assert_cmpint (tide_test_query_int (trace, "SELECT shift_ns FROM merge_sources WHERE id = 2"),
                   ==, 1500);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT skew_ns FROM merge_sources WHERE id = 2"),
                   ==, 400);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT skew_ns FROM merge_sources WHERE id = 1"),
                   ==, 0);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT end_ns FROM steps WHERE number = 3 AND"
                                               " process_id = 2"), ==, 1003 * MS + 400);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT min (alloc_ns) FROM allocations"), ==,
                   1004 * MS - 1000 + 400);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT start_ns FROM processes WHERE id = 2"),
                   ==, 1000 * MS + 400);
  g_assert_cmpint (tide_trace_get_start_ns (trace), ==, 1000 * MS);
  g_assert_cmpint (tide_test_query_int (same_trace, "SELECT shift_ns FROM merge_sources"
                                                    " WHERE id = 2"), ==, 0);
}

/* One library at one path, but two builds of it: nothing shared. */
static void
test_other_build_not_shared (void)
{
  NodeShape b = node_b;
  g_autofree char *a = write_node ("build-a.tide", &node_a);
  g_autofree char *bp = NULL;
  g_autofree char *job = NULL;
  g_autoptr(TideTrace) trace = NULL;

  b.module = node_a.module;
  b.build_id = "f00d";
  bp = write_node ("build-b.tide", &b);
  job = merge_ok ((const char *[]) { a, bp, NULL }, "build-job.tide");
  trace = tide_test_open_trace (job);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM frames"), ==, 4);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM stack_nodes"), ==, 4);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM modules"), ==, 1);
}

/* Traces from before hosts and build-ids were recorded: merged all the
 * same, their frames shared where every field agrees. */
static void
test_older_traces (void)
{
  g_autofree char *a = g_build_filename (dir, "old-a.tide", NULL);
  g_autofree char *b = g_build_filename (dir, "old-b.tide", NULL);
  g_autofree char *job = NULL;
  g_autoptr(TideTrace) trace = NULL;

  tide_test_write_two_ranks (a);
  tide_test_write_two_ranks (b);
  job = merge_ok ((const char *[]) { a, b, NULL }, "old-job.tide");
  trace = tide_test_open_trace (job);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 4);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM frames"), ==, 1);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM merge_sources"
                                               " WHERE boot_id IS NULL AND shift_ns = 0"), ==, 2);
}

/* ---- refusals --------------------------------------------------------------------- */

static void
assert_refused (const char * const *inputs,
                const char         *output,
                gboolean            force,
                const char         *message)
{
  g_autoptr(GError) error = NULL;
  gboolean existed = g_file_test (output, G_FILE_TEST_EXISTS);

  g_assert_false (merge (inputs, output, FALSE, force, &error));
  g_assert_nonnull (error);
  if (!g_str_equal (error->message, message))
    g_error ("expected «%s», got «%s»", message, error->message);
  g_assert_null (strchr (error->message, '\n'));
  g_assert_cmpint (g_file_test (output, G_FILE_TEST_EXISTS), ==, existed);
}

static void
copy_file (const char *from,
           const char *to)
{
  g_autofree char *bytes = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (from, &bytes, &len, NULL));
  g_assert_true (g_file_set_contents (to, bytes, len, NULL));
}

static void
assert_leak_frames (TideGroup *g)
{
  g_assert_cmpuint (g->frames->len, ==, 2);
  g_assert_cmpstr (((TideFrame *) g_ptr_array_index (g->frames, 0))->function, ==,
                   "keep_outputs");
  g_assert_cmpstr (((TideFrame *) g_ptr_array_index (g->frames, 1))->function, ==, "main");
}

/* Stacks kept as rows (schema 4) are shared across inputs by their frames,
 * and stand beside the stack nodes of another input; both read alike.  A
 * row that names something other than a frame id refuses the merge. */
static void
test_stack_rows (void)
{
  NodeShape rows_a = node_a, rows_b = node_b, rows_leaking_a = node_a;
  g_autofree char *a = NULL, *b = NULL, *la = NULL, *nb = NULL, *job = NULL, *mixed = NULL;
  g_autofree char *bad = g_build_filename (dir, "rows-bad.tide", NULL);
  g_autofree char *out = g_build_filename (dir, "rows-bad-job.tide", NULL);
  g_autofree char *message = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(TideTrace) mixed_trace = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GError) error = NULL;

  rows_a.stack_rows = rows_b.stack_rows = rows_leaking_a.stack_rows = TRUE;
  rows_leaking_a.leaks = TRUE;
  a = write_node ("rows-a.tide", &rows_a);
  b = write_node ("rows-b.tide", &rows_b);
  la = write_node ("rows-leaking-a.tide", &rows_leaking_a);

  job = merge_ok ((const char *[]) { la, b, NULL }, "rows-job.tide");
  trace = tide_test_open_trace (job);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM stacks"), ==, 1);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM stack_nodes"), ==, 0);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations a"
                                               " JOIN stacks s ON s.id = a.stack_id"
                                               " WHERE s.frames = '[1,2]'"), ==, 14);
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 2);
  assert_leak_frames (g_ptr_array_index (suspects, 0));
  assert_leak_frames (g_ptr_array_index (suspects, 1));
  g_clear_pointer (&suspects, g_ptr_array_unref);
  /* Each rank's residency totals, at its own steps: 1 MiB more a step
   * from step 4 on, the retained report's latest row at the end. */
  {
    g_autoptr(GPtrArray) steps = tide_report_steps (trace, &error);
    g_autoptr(GPtrArray) live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (steps->len, ==, 20);
    for (guint i = 0; i < steps->len; i++)
      {
        TideStepRow *row = g_ptr_array_index (steps, i);

        g_assert_true (row->has_resident);
        g_assert_cmpint (row->resident_explained, ==,
                         row->number >= 4 ? (row->number - 3) * MiB : 0);
      }
    g_assert_cmpuint (live->len, ==, 2);
    for (guint i = 0; i < live->len; i++)
      g_assert_cmpint (((TideGroup *) g_ptr_array_index (live, i))->resident_bytes, ==, 7 * MiB);
  }

  nb = write_node ("nodes-b.tide", &node_b);
  mixed = merge_ok ((const char *[]) { la, nb, NULL }, "mixed-job.tide");
  mixed_trace = tide_test_open_trace (mixed);
  g_assert_cmpint (tide_test_query_int (mixed_trace, "SELECT count (*) FROM stacks"), ==, 1);
  g_assert_cmpint (tide_test_query_int (mixed_trace, "SELECT count (*) FROM stack_nodes"), ==, 2);
  suspects = tide_report_suspects (mixed_trace, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 2);
  assert_leak_frames (g_ptr_array_index (suspects, 0));
  assert_leak_frames (g_ptr_array_index (suspects, 1));

  copy_file (b, bad);
  tide_test_exec_sql (bad, "UPDATE stacks SET frames = '[1,\"main\"]'");
  g_unlink (out);
  message = g_strdup_printf ("%s: the trace is damaged: a stack that names no frame of its own",
                             bad);
  assert_refused ((const char *[]) { a, bad, NULL }, out, FALSE, message);
}

static void
test_refusals (void)
{
  g_autofree char *a = write_node ("r-a.tide", &node_a);
  g_autofree char *b = write_node ("r-b.tide", &node_b);
  g_autofree char *hardlink = g_build_filename (dir, "r-link.tide", NULL);
  g_autofree char *copy = g_build_filename (dir, "r-copy.tide", NULL);
  g_autofree char *damaged = g_build_filename (dir, "r-damaged.tide", NULL);
  g_autofree char *unfinished = g_build_filename (dir, "r-unfinished.tide", NULL);
  g_autofree char *older = g_build_filename (dir, "r-older.tide", NULL);
  g_autofree char *out = g_build_filename (dir, "r-out.tide", NULL);
  g_autofree char *m = NULL;
  g_autofree char *bytes = NULL;
  gsize len;

  g_unlink (out);
  g_assert_cmpint (link (a, hardlink), ==, 0);
  copy_file (a, copy);
  g_assert_true (g_file_get_contents (b, &bytes, &len, NULL));
  g_assert_true (g_file_set_contents (damaged, bytes, len / 2, NULL));
  copy_file (b, unfinished);
  tide_test_exec_sql (unfinished, "UPDATE meta SET value = 0 WHERE key = 'complete'");
  copy_file (b, older);
  tide_test_exec_sql (older, "PRAGMA user_version = 2");

  m = g_strdup_printf ("%s is given twice", a);
  assert_refused ((const char *[]) { a, b, a, NULL }, out, FALSE, m);
  g_free (m);
  m = g_strdup_printf ("%s and %s are the same trace", a, hardlink);
  assert_refused ((const char *[]) { a, hardlink, NULL }, out, FALSE, m);
  g_free (m);
  m = g_strdup_printf ("%s and %s are copies of one recording", a, copy);
  assert_refused ((const char *[]) { a, copy, NULL }, out, FALSE, m);
  g_free (m);
  m = g_strdup_printf ("%s is unfinished (its recording did not end, or ended early); "
                       "--allow-incomplete merges it as it is", unfinished);
  assert_refused ((const char *[]) { a, unfinished, NULL }, out, FALSE, m);
  g_free (m);
  m = g_strdup_printf ("%s has schema version 2; merge joins traces of version %d only (record "
                       "them again with this tidemark)", older, TIDE_SCHEMA_VERSION);
  assert_refused ((const char *[]) { a, older, NULL }, out, FALSE, m);
  g_free (m);
  m = g_strdup_printf ("%s is an input; the merge writes a new trace", b);
  assert_refused ((const char *[]) { a, b, NULL }, b, TRUE, m);

  /* A damaged trace: the reader's own one line. */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GError) open_error = NULL;
    g_autoptr(TideTrace) t = tide_trace_open (damaged, &open_error);

    g_assert_null (t);
    g_assert_false (merge ((const char *[]) { a, damaged, NULL }, out, FALSE, FALSE, &error));
    g_assert_cmpstr (error->message, ==, open_error->message);
    g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  }

  /* --allow-incomplete takes the unfinished one. */
  {
    g_autoptr(GError) error = NULL;

    g_assert_true (merge ((const char *[]) { a, unfinished, NULL }, out, TRUE, FALSE, &error));
    g_assert_no_error (error);
  }
  /* Now the output exists: refused, then replaced with force. */
  g_free (m);
  m = g_strdup_printf ("%s exists already; --force replaces it", out);
  assert_refused ((const char *[]) { a, b, NULL }, out, FALSE, m);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TideTrace) t = NULL;

    g_assert_true (merge ((const char *[]) { a, b, NULL }, out, FALSE, TRUE, &error));
    g_assert_no_error (error);
    t = tide_test_open_trace (out);
    g_assert_cmpint (tide_test_query_int (t, "SELECT count (*) FROM merge_sources"
                                             " WHERE complete = 1"), ==, 2);
  }
  /* Nothing half-written is ever left beside the output. */
  {
    g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
    const char *name;

    while ((name = g_dir_read_name (d)) != NULL)
      g_assert_null (strstr (name, ".merging-"));
  }
}

int
main (int    argc,
      char **argv)
{
  int result;

  g_test_init (&argc, &argv, NULL);
  dir = tide_test_make_dir ("tide-trace-merge");
  g_test_add_func ("/trace-merge/two-nodes", test_two_nodes);
  g_test_add_func ("/trace-merge/clocks", test_clocks);
  g_test_add_func ("/trace-merge/other-build-not-shared", test_other_build_not_shared);
  g_test_add_func ("/trace-merge/older-traces", test_older_traces);
  g_test_add_func ("/trace-merge/refusals", test_refusals);
  g_test_add_func ("/trace-merge/stack-rows", test_stack_rows);
  result = g_test_run ();
  tide_test_remove_dir (dir);
  g_free (dir);
  return result;
}
