/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark attach` end to end: attach-toucher keeps touching new pages
 * from attach_touch_pages in some steps; the trace must show them as
 * resident pages of that stack, RSS per step as the program itself read it
 * from /proc/self/status, and the program must run on unchanged after a
 * detach.  A program without frame pointers has its whole stack.  Needs
 * root (CI runs as root) and a kernel with BTF.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <glib/gstdio.h>

#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-attach.h"
#include "tide-test-util.h"
#include "tide-trace.h"

static void
check_resident_pages (TideTrace *trace,
                      double     expected)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, &error);
  double bytes = 0;

  g_assert_no_error (error);
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);

      if (!stack_has (g, "attach_touch_pages", 0))
        continue;
      /* The scratch pages were unmapped: only main's calls hold pages. */
      g_assert_true (stack_has (g, "main", 1));
      bytes += g->bytes;
    }
  g_test_message ("resident pages of attach_touch_pages: %.0f, expected %.0f", bytes, expected);
  /* Anonymous pages without huge pages fault one at a time: exact. */
  g_assert_cmpfloat (bytes, ==, expected);
}

/* The trace's first @n_steps steps against the program's own log. */
static void
check_rss_per_step (TideTrace  *trace,
                    const char *rss_log,
                    guint       n_steps)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) steps = tide_report_steps (trace, &error);
  g_autofree char *log = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (rss_log, &log, NULL, NULL));
  lines = g_strsplit (g_strstrip (log), "\n", -1);
  g_assert_cmpuint (steps->len, ==, n_steps);
  g_assert_cmpuint (g_strv_length (lines), >=, n_steps);
  for (guint i = 0; i < steps->len; i++)
    {
      TideStepRow *row = g_ptr_array_index (steps, i);
      int number = 0;
      gint64 vm_rss = 0;

      g_assert_cmpint (sscanf (lines[i], "%d %" G_GINT64_FORMAT, &number, &vm_rss), ==, 2);
      g_assert_cmpint (row->number, ==, number);
      g_assert_cmpint (row->number, ==, i + 1);
      g_assert_true (row->has_rss);
      g_test_message ("step %d: trace RSS %" G_GINT64_FORMAT ", VmRSS %" G_GINT64_FORMAT,
                      number, row->rss_end, vm_rss);
      g_assert_cmpfloat (ABS ((double) (row->rss_end - vm_rss)), <=, 0.02 * vm_rss);
    }
}

static void
test_attach_resident_pages (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GSubprocess) toucher = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;
  g_autofree char *mode = NULL;

  if (!tide_test_can_attach ())
    return;
  toucher = start_toucher (f->rss_log, "0", TRUE, "--leak", LEAK_SIZE_ARG, "--pause-each-step",
                           NULL);
  attach = start_attach (g_subprocess_get_identifier (toucher), f->trace, NULL, NULL);
  say_go (toucher);
  /* Each step goes on once the trace holds the one before, whose RSS the
   * attach read when its marker came: then nothing of the next step is in
   * it, however slow the machine. */
  for (guint step = 1; step <= TOUCH_STEPS; step++)
    {
      wait_for_logged_steps (f->rss_log, step);
      wait_for_trace_steps (f->trace, step);
      say_go (toucher);
    }
  out = finish (toucher);
  g_assert_cmpstr (out, ==, "attach-toucher: 6 steps, 32 MiB kept, checksum 1240320\n");
  /* The attach ends by itself when its target exits. */
  attach_out = finish (attach);

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  mode = tide_trace_dup_meta (trace, "mode");
  g_assert_cmpstr (mode, ==, "attach");
  check_resident_pages (trace, KEPT_BYTES);
  check_rss_per_step (trace, f->rss_log, TOUCH_STEPS);
  /* Without --uprobes, no malloc is seen: only pages. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations"
                                               " WHERE size = " LEAK_SIZE_ARG), ==, 0);
}

/* The bytes of @column in @table at step @number, of the stacks whose
 * innermost frame is attach_touch_pages called from main.  step_series
 * and step_residency have a row where a value changed, so a stack's bytes
 * at a step are those of its last row at or before it; with @born_only,
 * the bytes of a row of that step alone (what blocks born in it hold). */
static gint64
touched_at_step (TideTrace  *trace,
                 const char *table,
                 const char *column,
                 guint       number)
{
  g_autofree char *at_step = g_str_equal (column, "resident_born_bytes")
    ? g_strdup_printf ("%u", number)
    : g_strdup_printf ("(SELECT max (s2.number) FROM %s t2 JOIN steps s2 ON s2.id = t2.step_id"
                       " WHERE t2.stack_id = t.stack_id AND s2.number <= %u)", table, number);
  g_autofree char *sql = g_strdup_printf (
    "SELECT coalesce (sum (t.%s), 0) FROM %s t JOIN steps s ON s.id = t.step_id"
    " JOIN stacks n ON n.id = t.stack_id"
    " JOIN frames f ON f.id = json_extract (n.frames, '$[#-1]')"
    " JOIN frames cf ON cf.id = json_extract (n.frames, '$[#-2]')"
    " WHERE f.function = 'attach_touch_pages' AND cf.function = 'main' AND s.number = %s",
    column, table, at_step);

  return tide_test_query_int (trace, sql);
}

/* Steps of an attach have what a recording's steps have, written by the
 * attach as each step ends: what each step keeps of the pages that
 * attach_touch_pages touched (8 MiB in steps 1, 2, 4 and 5), and how much
 * of it is resident, all of it and what the step itself touched.  The
 * residency is read while the program waits after the step, before the
 * next one runs; the pages stay resident, since nothing here frees them. */
static void
test_attach_step_summaries (Fixture       *f,
                            gconstpointer  data)
{
  static const gint64 kept_mib[TOUCH_STEPS] = { 8, 16, 16, 24, 32, 32 };
  static const gint64 born_mib[TOUCH_STEPS] = { 8, 8, 0, 8, 8, 0 };
  g_autoptr(GSubprocess) toucher = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;

  if (!tide_test_can_attach ())
    return;
  toucher = start_toucher (f->rss_log, "0", TRUE, "--pause-each-step", NULL, NULL, NULL);
  attach = start_attach (g_subprocess_get_identifier (toucher), f->trace, NULL, NULL);
  say_go (toucher);
  for (guint step = 1; step <= TOUCH_STEPS; step++)
    {
      wait_for_logged_steps (f->rss_log, step);
      wait_for_trace_rows (f->trace, "SELECT count (*) FROM step_residency_totals", step);
      say_go (toucher);
    }
  out = finish (toucher);
  g_assert_cmpstr (out, ==, "attach-toucher: 6 steps, 32 MiB kept, checksum 1240320\n");
  attach_out = finish (attach);

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < TOUCH_STEPS; i++)
    {
      g_test_message ("step %u: kept %" G_GINT64_FORMAT ", resident %" G_GINT64_FORMAT
                      ", born resident %" G_GINT64_FORMAT, i + 1,
                      touched_at_step (trace, "step_series", "live_bytes", i + 1),
                      touched_at_step (trace, "step_residency", "resident_bytes", i + 1),
                      touched_at_step (trace, "step_residency", "resident_born_bytes", i + 1));
      g_assert_cmpint (touched_at_step (trace, "step_series", "live_bytes", i + 1), ==,
                       kept_mib[i] * 1048576);
      g_assert_cmpint (touched_at_step (trace, "step_residency", "resident_bytes", i + 1), ==,
                       kept_mib[i] * 1048576);
      g_assert_cmpint (touched_at_step (trace, "step_residency", "resident_born_bytes", i + 1),
                       ==, born_mib[i] * 1048576);
    }
  /* The scratch pages, touched and unmapped in every step, are kept by
   * none. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM step_series t"
                                               " JOIN stacks n ON n.id = t.stack_id"
                                               " JOIN frames cf ON cf.id ="
                                               "   json_extract (n.frames, '$[#-2]')"
                                               " WHERE cf.function = 'attach_touch_scratch'"
                                               " AND t.live_bytes <> 0"), ==, 0);
}

/* The NVML poll, on the stand-in NVML of tests/cuda, which says that the
 * one device of 16 GiB has 3 GiB in use, 1.5 GiB of it by the program:
 * the attach writes the device's use and size on its process, and the
 * program's own use, as the recorder does. */
static void
test_attach_nvml (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GSubprocess) toucher = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;
  g_autofree char *process = NULL;
  const char *env[] = {
    "LD_LIBRARY_PATH", TIDE_STANDIN_DIR,
    "TIDE_STANDIN_NVML_USED", "3221225472",
    "TIDE_STANDIN_NVML_PROCESS", NULL,
    NULL,
  };

  if (!tide_test_can_attach ())
    return;
  toucher = start_toucher (f->rss_log, "0", TRUE, "--pause-after", "1", NULL, NULL);
  process = g_strdup_printf ("%s:1610612736", g_subprocess_get_identifier (toucher));
  env[5] = process;
  attach = start_attach_with_env (g_subprocess_get_identifier (toucher), f->trace, NULL, NULL,
                                  env);
  say_go (toucher);
  wait_for_logged_steps (f->rss_log, 1);
  /* The device_process counter (8), written by a poll while attached. */
  wait_for_trace_rows (f->trace, "SELECT count (*) FROM counters WHERE counter = 8", 1);
  g_subprocess_send_signal (attach, SIGINT);
  attach_out = finish (attach);
  say_go (toucher);
  out = finish (toucher);
  g_assert_cmpstr (out, ==, "attach-toucher: 6 steps, 32 MiB kept, checksum 1240320\n");

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  /* device_used (6), device_total (7), device_process (8): one value each,
   * written once since it never changed, on device 0 of process 1. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM counters"
                                               " WHERE counter IN (6, 7, 8)"), ==, 3);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM counters WHERE counter = 6"
                                               " AND device = 0 AND process_id = 1"), ==,
                   G_GINT64_CONSTANT (3221225472));
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM counters WHERE counter = 7"
                                               " AND device = 0 AND process_id = 1"), ==,
                   G_GINT64_CONSTANT (17179869184));
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM counters WHERE counter = 8"
                                               " AND device = 0 AND process_id = 1"), ==,
                   G_GINT64_CONSTANT (1610612736));
}

/* Alive and not a zombie. */
static gboolean
is_running (const char *pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%s/stat", pid);
  g_autofree char *stat = NULL;
  const char *paren;

  if (!g_file_get_contents (path, &stat, NULL, NULL) || (paren = strrchr (stat, ')')) == NULL)
    return FALSE;
  return paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* Detaching in the middle leaves the program to finish as it would have,
 * and a trace of what happened until then: the program is held after each
 * step until the trace holds it, and between its steps 2 and 3 while the
 * attach detaches (SIGINT), so the trace holds exactly two steps, their
 * RSS as the program read it, and the pages that those two steps
 * touched. */
static void
test_attach_detach (Fixture       *f,
                    gconstpointer  data)
{
  g_autofree char *plain_log = g_build_filename (f->dir, "plain.log", NULL);
  g_autoptr(GSubprocess) plain = NULL;
  g_autoptr(GSubprocess) toucher = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *plain_out = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;
  g_autofree char *mode = NULL;

  if (!tide_test_can_attach ())
    return;
  plain = start_toucher (plain_log, "1", FALSE, NULL, NULL, NULL, NULL);
  plain_out = finish (plain);

  toucher = start_toucher (f->rss_log, "0", TRUE, "--pause-each-step", NULL, NULL, NULL);
  attach = start_attach (g_subprocess_get_identifier (toucher), f->trace, NULL, NULL);
  say_go (toucher);
  wait_for_logged_steps (f->rss_log, 1);
  wait_for_trace_steps (f->trace, 1);
  say_go (toucher);
  wait_for_logged_steps (f->rss_log, 2);
  wait_for_trace_steps (f->trace, 2);
  g_subprocess_send_signal (attach, SIGINT);
  attach_out = finish (attach);
  g_assert_true (is_running (g_subprocess_get_identifier (toucher)));
  /* Steps 2 to 6 each wait for a line. */
  for (guint step = 2; step <= TOUCH_STEPS; step++)
    say_go (toucher);
  out = finish (toucher);
  g_assert_cmpstr (out, ==, plain_out);

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  g_assert_true (tide_trace_is_complete (trace));
  mode = tide_trace_dup_meta (trace, "mode");
  g_assert_cmpstr (mode, ==, "attach");
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 1);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"
                                               " WHERE label = 'toucher'"), ==, 2);
  check_rss_per_step (trace, f->rss_log, 2);
  /* Steps 1 and 2 touched; 3 to 6 ran after the detach. */
  check_resident_pages (trace, 2.0 * TOUCH_MIB * 1048576.0);
}

/* --step-interval: steps are the attach's own, one every interval, with
 * no label; the program's tidemark_step markers (label "toucher") are not
 * probed.  The program is held between two steps of its own until the
 * trace holds three of the attach's. */
static void
test_attach_step_interval (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(GSubprocess) toucher = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;

  if (!tide_test_can_attach ())
    return;
  toucher = start_toucher (f->rss_log, "1", TRUE, "--pause-after", "2", NULL, NULL);
  attach = start_attach (g_subprocess_get_identifier (toucher), f->trace, "--step-interval",
                         "100");
  say_go (toucher);
  wait_for_logged_steps (f->rss_log, 2);
  wait_for_trace_steps (f->trace, 3);
  g_subprocess_send_signal (attach, SIGINT);
  attach_out = finish (attach);
  say_go (toucher);
  out = finish (toucher);
  g_assert_cmpstr (out, ==, "attach-toucher: 6 steps, 32 MiB kept, checksum 1240320\n");

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  steps = tide_report_steps (trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (steps->len, >=, 3);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"
                                               " WHERE label <> ''"), ==, 0);
  for (guint i = 0; i < steps->len; i++)
    {
      TideStepRow *row = g_ptr_array_index (steps, i);

      g_assert_cmpint (row->number, ==, i + 1);
      g_assert_true (row->has_rss);
      /* The first starts when the process was found, a moment after the
       * interval's clock; every later one lasts a whole interval. */
      if (i > 0)
        g_assert_cmpint (row->duration_ns, >=, 100 * 1000000);
      else
        g_assert_cmpint (row->duration_ns, >, 0);
    }
}

/* --uprobes malloc: each step's malloc of LEAK_SIZE bytes from
 * attach_leak_block is a row, live at the end, with its stack. */
static void
test_attach_uprobes_malloc (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GSubprocess) toucher = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;
  double leaked = 0;
  guint n_leaked = 0;

  if (!tide_test_can_attach ())
    return;
  toucher = start_toucher (f->rss_log, "1", TRUE, "--leak", LEAK_SIZE_ARG, NULL, NULL);
  attach = start_attach (g_subprocess_get_identifier (toucher), f->trace, "--uprobes",
                         "malloc");
  say_go (toucher);
  out = finish (toucher);
  g_assert_cmpstr (out, ==, "attach-toucher: 6 steps, 32 MiB kept, checksum 1240320\n");
  attach_out = finish (attach);

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations"
                                               " WHERE size = " LEAK_SIZE_ARG), ==, TOUCH_STEPS);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, TOUCH_STEPS);
  groups = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);

      for (guint depth = 0; depth < 3; depth++)
        if (stack_has (g, "attach_leak_block", depth))
          {
            leaked += g->bytes;
            n_leaked += g->count;
            break;
          }
    }
  g_assert_cmpfloat (leaked, ==, (double) TOUCH_STEPS * LEAK_SIZE);
  g_assert_cmpuint (n_leaked, ==, TOUCH_STEPS);
}

/* A program built at -O2 without frame pointers (tests/targets/nofp-leak.c)
 * fills 3 blocks of 1 MiB with memset, four calls under main.  Its stack
 * is unwound from the copy of the stack with the DWARF call frame
 * information: the stack that keeps the most pages (every page a memset
 * touched first: 256 of each block; malloc wrote the first) is memset,
 * then the four functions by name, the line of the memset call, main, and
 * on to _start, with no frame missing. */
static void
test_attach_dwarf_unwind (Fixture       *f,
                          gconstpointer  data)
{
  static const char * const callers[] = {
    "nofp_fill_weights", "nofp_alloc_weights", "nofp_add_layer", "nofp_build_model", "main",
  };
  g_autoptr(GSubprocess) target = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  TideGroup *top;
  TideFrame *frame;

  if (!tide_test_can_attach ())
    return;
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                        G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  /* No environment (meson's MALLOC_PERTURB_ would have malloc fill each
   * block itself, first), so that main runs within the stack window of
   * the top of the stack: the copy must stop there, and the eBPF
   * programs must not take a fault of their own copy for one of the
   * program's (a page above the stack, kept by memset's stack). */
  g_subprocess_launcher_set_environ (launcher, (char *[]) { NULL });
  target = g_subprocess_launcher_spawn (launcher, &error, build_path ("tests/targets/nofp-leak"),
                                        "--wait", NULL);
  g_assert_no_error (error);
  attach = start_attach (g_subprocess_get_identifier (target), f->trace, "--sample-pages", "1");
  say_go (target);
  out = finish (target);
  g_assert_cmpstr (out, ==, "nofp-leak: 3 layers, 3 MiB kept, first byte 3\n");
  attach_out = finish (attach);

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  groups = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (groups->len, >, 0);
  /* About 800 samples of 20 KiB: the ring buffer holds them all, however
   * slowly the recorder drains it (under ASan). */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta"
                                               " WHERE key = 'dropped_events'"), ==, 0);
  /* Every fault of the program first touched a page (--sample-pages 1: a
   * row each); a fault that the copy of a stack took is no fault of the
   * program's, and no page of it. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta WHERE key = 'page_faults'"),
                   ==, tide_test_query_int (trace, "SELECT count (*) FROM allocations"));
  top = g_ptr_array_index (groups, 0);
  for (guint i = 0; i < top->frames->len; i++)
    {
      frame = g_ptr_array_index (top->frames, i);
      g_test_message ("top stack %u: %s %s:%d (%s)", i, frame->function, frame->file,
                      frame->line, frame->module);
      g_assert_cmpint (frame->kind, ==, TIDE_FRAME_NATIVE);
    }
  g_assert_cmpint (top->bytes, ==, 3 * 256 * 4096);
  g_assert_cmpuint (top->frames->len, >=, 1 + G_N_ELEMENTS (callers) + 1);
  frame = g_ptr_array_index (top->frames, 0);
  g_assert_true (g_str_has_prefix (frame->function, "__memset"));
  for (guint i = 0; i < G_N_ELEMENTS (callers); i++)
    {
      frame = g_ptr_array_index (top->frames, 1 + i);
      g_assert_cmpstr (frame->function, ==, callers[i]);
    }
  frame = g_ptr_array_index (top->frames, 1);
  g_assert_true (g_str_has_suffix (frame->file, "/tests/targets/nofp-leak.c"));
  g_assert_cmpint (frame->line, ==,
                   tide_test_source_line ("tests/targets/nofp-leak.c", "/* LEAK-LINE */"));
  /* On through libc to the program's entry point, where the stack ends. */
  frame = g_ptr_array_index (top->frames, top->frames->len - 1);
  g_assert_cmpstr (frame->function, ==, "_start");
}

/* Run as nobody: one clear line that says what is needed. */
static void
drop_to_nobody (gpointer data)
{
  if (setgroups (0, NULL) != 0 || setgid (65534) != 0 || setuid (65534) != 0)
    _exit (99);
}

static void
test_attach_unprivileged (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) p = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *pid = g_strdup_printf ("%d", getpid ());
  g_autofree char *err = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *trace = g_build_filename (g_get_tmp_dir (), "tide-never-written.tide", NULL);

  if (geteuid () != 0)
    {
      g_test_skip ("needs root to become nobody");
      return;
    }
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_child_setup (launcher, drop_to_nobody, NULL, NULL);
  p = g_subprocess_launcher_spawn (launcher, &error, build_path ("app/tidemark"), "attach",
                                   "-p", pid, "-o", trace, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (p, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 1);
  expected = g_strdup_printf ("tidemark: attaching needs root, or the CAP_BPF and CAP_PERFMON "
                              "capabilities (try: sudo tidemark attach -p %s)\n", pid);
  g_assert_cmpstr (err, ==, expected);
  g_assert_false (g_file_test (trace, G_FILE_TEST_EXISTS));
}

int
main (int    argc,
      char **argv)
{
  if (argc > 1 && strcmp (argv[argc - 1], "--torch-jobs") == 0)
    {
      argv[--argc] = NULL;
      g_test_init (&argc, &argv, NULL);
      add_torch_job_tests ();
      return g_test_run ();
    }
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/attach/resident-pages", Fixture, NULL, fixture_setup,
              test_attach_resident_pages, fixture_teardown);
  g_test_add ("/attach/step-summaries", Fixture, NULL, fixture_setup,
              test_attach_step_summaries, fixture_teardown);
  g_test_add ("/attach/nvml", Fixture, NULL, fixture_setup, test_attach_nvml, fixture_teardown);
  g_test_add ("/attach/detach", Fixture, NULL, fixture_setup, test_attach_detach,
              fixture_teardown);
  g_test_add ("/attach/step-interval", Fixture, NULL, fixture_setup, test_attach_step_interval,
              fixture_teardown);
  g_test_add ("/attach/uprobes-malloc", Fixture, NULL, fixture_setup, test_attach_uprobes_malloc,
              fixture_teardown);
  g_test_add ("/attach/dwarf-unwind", Fixture, NULL, fixture_setup, test_attach_dwarf_unwind,
              fixture_teardown);
  add_attach_python_tests ();
  g_test_add ("/attach/unprivileged", Fixture, NULL, fixture_setup, test_attach_unprivileged,
              fixture_teardown);
  return g_test_run ();
}
