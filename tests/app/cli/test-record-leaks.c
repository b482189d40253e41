/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark record` end to end (test-record.c): leaks, exactly and sampled; the symbol cache;
 * a leak in an inlined static function.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TIDE_HAVE_RENDER
#include "tide-test-png.h"
#endif

#include "preload-target.h"
#include "tide-plumbing.h"
#include "tide-report.h"
#include "tide-process-end.h"
#include "tide-format-bytes.h"
#include "tide-schema.h"
#include "tide-timeline-lanes.h"
#include "tide-test-record.h"
#include "tide-test-util.h"
#include "tide-trace.h"

/* ---- leaks, exactly and sampled ------------------------------------------- */

static void
test_leaky_all (Fixture       *f,
                gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) step7 = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  TideGroup *cache, *tensor;

  record (f, "--all", "leaky-steps", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "leaky-steps done\n");

  trace = tide_test_open_trace (f->trace);
  g_assert_true (tide_trace_is_complete (trace));
  steps = tide_report_steps (trace, NULL);
  g_assert_cmpuint (steps->len, ==, 10);
  /* A row per stack that a block names, and no tree of nodes. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM stack_nodes"), ==, 0);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM stacks"), ==,
                   tide_test_query_int (trace, "SELECT count (DISTINCT stack_id)"
                                               " FROM allocations"));

  /* Exactly the two leaks: not the churn, not the step-6 spike. */
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  g_assert_cmpuint (suspects->len, ==, 2);
  tensor = g_ptr_array_index (suspects, 0);
  cache = g_ptr_array_index (suspects, 1);
  g_assert_cmpstr (tide_test_top_function (tensor), ==, "leak_big_tensor");
  g_assert_cmpint (tensor->growth_step, ==, 5);
  g_assert_cmpint (tensor->growth_bytes, ==, 6 * 4 * MiB);
  g_assert_cmpstr (tide_test_top_function (cache), ==, "leak_feature_cache");
  g_assert_cmpint (cache->growth_step, ==, 4);
  g_assert_cmpint (cache->growth_bytes, ==, 7 * 96 * 16384);
  g_assert_cmpfloat (cache->bytes_per_step, ==, 96 * 16384);
  g_assert_nonnull (strstr (((TideFrame *) g_ptr_array_index (cache->frames, 0))->file,
                            "leaky-steps.c"));

  /* What step 7 allocated and kept, by stack. */
  step7 = tide_report_retained (trace, 7, TIDE_GROUP_BY_STACK, NULL);
  g_assert_cmpuint (step7->len, ==, 2);
  g_assert_cmpint (find_group (step7, "leak_feature_cache")->bytes, ==, 96 * 16384);
  g_assert_cmpint (find_group (step7, "leak_feature_cache")->count, ==, 96);
  g_assert_cmpint (find_group (step7, "leak_feature_cache")->growth_step, ==, 4);
  g_assert_cmpint (find_group (step7, "leak_big_tensor")->bytes, ==, 4 * MiB);
  g_assert_cmpint (find_group (step7, "leak_big_tensor")->count, ==, 1);
  /* The leaked blocks were written (memset), so they are resident. */
  g_assert_cmpint (find_group (step7, "leak_big_tensor")->resident_bytes, ==, 4 * MiB);
}

/* A fixed seed samples the same blocks of a deterministic program in every
 * run, whatever its tids: same rows, same estimate. */
static void
test_sampled_repeatable (Fixture       *f,
                         gconstpointer  data)
{
  gint64 rows[2];
  double estimate[2];

  g_setenv ("TIDEMARK_SEED", "20261202", TRUE);
  for (guint i = 0; i < 2; i++)
    {
      g_auto(Run) run = { 0 };
      g_autoptr(TideTrace) trace = NULL;
      g_autoptr(GPtrArray) live = NULL;

      g_remove (f->trace);
      record (f, NULL, "leaky-steps", "--feature-blocks", "384", &run);
      g_assert_cmpint (run.status, ==, 0);
      trace = tide_test_open_trace (f->trace);
      live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, NULL);
      estimate[i] = find_group (live, "leak_feature_cache")->bytes;
      rows[i] = tide_test_query_int (trace, "SELECT count (*) FROM allocations");
    }
  g_unsetenv ("TIDEMARK_SEED");
  g_assert_cmpint (rows[0], >, 0);
  g_assert_cmpint (rows[0], ==, rows[1]);
  g_assert_cmpfloat (estimate[0], ==, estimate[1]);
}

/* Sampled (the default mode): blocks at least as large as the sampling
 * interval are exact; smaller ones are estimated.  The feature cache leaks
 * 384 x 16 KiB per step here (42 MiB in all), where the estimate's standard
 * deviation is 3.6%: 10% is 2.8 sigma.  The seed is fixed so that CI runs
 * are repeatable; the bound holds for any seed but rarely. */
static void
test_leaky_sampled (Fixture       *f,
                    gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GPtrArray) live = NULL;
  TideGroup *cache, *tensor;
  const double cache_per_step = 384.0 * 16384;
  double estimate;

  g_setenv ("TIDEMARK_SEED", "20261202", TRUE);
  record (f, NULL, "leaky-steps", "--feature-blocks", "384", &run);
  g_unsetenv ("TIDEMARK_SEED");
  g_assert_cmpint (run.status, ==, 0);

  trace = tide_test_open_trace (f->trace);
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  g_assert_cmpuint (suspects->len, ==, 2);
  tensor = find_group (suspects, "leak_big_tensor");
  cache = find_group (suspects, "leak_feature_cache");
  g_assert_nonnull (tensor);
  g_assert_nonnull (cache);
  g_assert_cmpint (tensor->growth_step, ==, 5);
  g_assert_cmpint (tensor->growth_bytes, ==, 6 * 4 * MiB);
  g_assert_cmpint (cache->growth_step, ==, 4);
  g_test_message ("leak_feature_cache: %.0f bytes/step estimated, %.0f true",
                  cache->bytes_per_step, cache_per_step);
  g_assert_cmpfloat (fabs (cache->bytes_per_step - cache_per_step), <=, 0.10 * cache_per_step);

  live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, NULL);
  estimate = find_group (live, "leak_feature_cache")->bytes;
  g_assert_cmpfloat (fabs (estimate - 7 * cache_per_step), <=, 0.10 * 7 * cache_per_step);
}

static void
test_control (Fixture       *f,
              gconstpointer  data)
{
  const char *mode = data;
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) suspects = NULL;

  record (f, mode, "churn-control", NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "churn-control done\n");
  trace = tide_test_open_trace (f->trace);
  g_assert_cmpuint (tide_report_steps (trace, NULL)->len, ==, 10);
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  g_assert_cmpuint (suspects->len, ==, 0);
}

/* The row of the nth block of @size, in allocation order: "alloc_ns free_ns". */
static char *
block_times (TideTrace *trace,
             guint64    size,
             guint      nth)
{
  g_autofree char *sql = g_strdup_printf ("SELECT alloc_ns || ' ' || ifnull (free_ns, 'live')"
                                          " FROM allocations WHERE size = %" G_GUINT64_FORMAT
                                          " ORDER BY alloc_ns LIMIT 1 OFFSET %u", size, nth);

  return tide_test_query_text (trace, sql);
}

/* Blocks whose frees were folded into their records (tide-preload-buffer.h)
 * get the same rows as those freed by a FREE record: each freed once, after
 * it was made, and a reused address two rows.  preload-target's fold mode
 * frees one of each kind. */
static void
test_folded_frees (Fixture       *f,
                   gconstpointer  data)
{
  static const guint64 sizes[] = { FOLD_SAME, FOLD_CROSS, FOLD_STEP, FOLD_REUSE, FOLD_REUSE };
  g_autofree char *sample_bytes = g_strdup_printf ("--sample-bytes=%d", FAMILY_SAMPLE_BYTES);
  g_autofree char *count_reused = g_strdup_printf ("SELECT count (*) FROM allocations"
                                                   " WHERE size = %d", FOLD_REUSE);
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  gint64 previous_free = 0;

  record (f, sample_bytes, TIDE_PRELOAD_TARGET, "fold", NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  trace = tide_test_open_trace (f->trace);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autofree char *times = block_times (trace, sizes[i], i == 4 ? 1 : 0);
      gint64 alloc_ns, free_ns;

      g_assert_cmpint (sscanf (times, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT,
                               &alloc_ns, &free_ns), ==, 2);
      /* Made after the last one was freed, freed after it was made. */
      g_assert_cmpint (alloc_ns, >=, previous_free);
      g_assert_cmpint (free_ns, >, alloc_ns);
      previous_free = free_ns;
    }
  g_assert_cmpint (tide_test_query_int (trace, count_reused), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, 5);
}

/* `tidemark record` of @target without -q, so that @run holds its summary. */
static void
record_with_summary (Fixture    *f,
                     const char *target,
                     Run        *run)
{
  g_autofree char *path = target_path (target);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-o", f->trace, "--", path,
                         NULL };

  run_argv (argv, run);
}

/* The timeline's "Live heap" lane of heap-spikes: each of the 10
 * temporary blocks, allocated and freed within microseconds between two of
 * the recorder's polls, reaches the lane at its own time, 70 ms from the
 * next, and the lane falls back to the steady block after it; the lane's
 * peak (its label) is the largest of them, 8 + 73 MiB.  A polled heap
 * drew 8 MiB flat. */
static void
test_heap_lane_spikes (Fixture       *f,
                       gconstpointer  data)
{
  const gint64 steady = 8 * MiB, spike_floor = steady + 64 * MiB, peak = steady + 73 * MiB;
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(TideTimelineData) timeline = NULL;
  g_autoptr(GError) error = NULL;
  TideTimeWindow window = { 0, 0, 400 };
  TideLaneData *heap = NULL;
  gint64 highest = 0, last = -1;
  guint spikes = 0;

  record_with_summary (f, "heap-spikes", &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "heap-spikes done\n");
  /* One process, counted as one. */
  g_assert_nonnull (strstr (run.err, ": 1 process, 0 steps, "));
  trace = tide_test_open_trace (f->trace);
  window.end_ns = tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace);
  timeline = tide_timeline_data_query (trace,
                                       tide_test_query_int (trace,
                                                            "SELECT min (id) FROM processes"),
                                       &window, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < timeline->lanes->len; i++)
    {
      TideLaneData *lane = g_ptr_array_index (timeline->lanes, i);

      if (lane->counter == TIDE_COUNTER_HEAP_LIVE && lane->device < 0)
        heap = lane;
    }
  g_assert_nonnull (heap);
  for (guint c = 0; c < heap->n_columns; c++)
    {
      if (!heap->has[c])
        continue;
      /* A spike is a run of columns that reach it, the heap back at the
       * steady block after each. */
      if (heap->max[c] >= spike_floor &&
          (c == 0 || !heap->has[c - 1] || heap->max[c - 1] < spike_floor))
        spikes++;
      highest = MAX (highest, heap->max[c]);
      last = heap->last[c];
    }
  g_assert_cmpint (highest, >=, peak);
  g_assert_cmpint (highest, <=, peak + 256 * 1024);
  g_assert_cmpint (last, >=, steady);
  g_assert_cmpint (last, <=, steady + 256 * 1024);
  g_assert_cmpuint (spikes, ==, 10);
}

/* A process's peak RSS (report --processes) is the most it held at once,
 * the kernel's high-water mark, not the most that a poll of its RSS met:
 * rss-spike holds 48 MiB more for a few milliseconds, between two polls.
 * Where the readings missed it (nearly always: a reading must fall in the
 * microseconds between the mapping's last page and its unmapping), the
 * summary says so, as the job's peak is summed from the readings. */
static void
test_rss_peak (Fixture       *f,
               gconstpointer  data)
{
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) processes = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *peak = NULL, *read = NULL, *line = NULL;
  TideProcessSummary *s;

  record_with_summary (f, "rss-spike", &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "rss-spike done\n");
  trace = tide_test_open_trace (f->trace);
  processes = tide_report_processes (trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (processes->len, ==, 1);
  s = g_ptr_array_index (processes, 0);
  g_assert_true (s->has_rss);
  g_assert_cmpint (s->peak_rss, >=, 48 * MiB);
  g_assert_cmpint (s->peak_rss, <, 64 * MiB);
  g_assert_cmpint (s->peak_rss_read, <=, s->peak_rss);
  if (s->peak_rss_read >= 40 * MiB)
    {
      g_test_message ("a reading of its RSS met the spike: %" G_GINT64_FORMAT, s->peak_rss_read);
      return;
    }
  peak = tide_format_bytes (s->peak_rss);
  read = tide_format_bytes (s->peak_rss_read);
  line = g_strdup_printf ("tidemark: rss-spike (pid %" G_GINT64_FORMAT ") held %s resident at its"
                          " peak, between two readings of its RSS (the highest read %s)\n",
                          s->process->pid, peak, read);
  g_assert_nonnull (strstr (run.err, line));
}

/* Every native frame of a trace, one line each, in a stable order. */
static char *
frames_as_text (const char *trace_path)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (trace_path);

  return tide_test_query_text (trace,
    "SELECT group_concat (frame, char (10)) FROM ("
    "  SELECT module || '+' || module_offset || ' ' || ifnull (function, '?') || ' '"
    "         || ifnull (file, '?') || ':' || line AS frame"
    "  FROM frames WHERE module IS NOT NULL ORDER BY frame)");
}

static guint
count_files (const char *dir)
{
  g_autoptr(GDir) handle = g_dir_open (dir, 0, NULL);
  guint n = 0;

  while (handle != NULL && g_dir_read_name (handle) != NULL)
    n++;
  return n;
}

/* Points the recordings that follow at @dir's symbol cache; returns the
 * suite's own, for restore_symbol_cache(). */
static char *
use_symbol_cache (const char *dir)
{
  char *suite_cache = g_strdup (g_getenv ("TIDEMARK_SYMBOL_CACHE"));

  g_setenv ("TIDEMARK_SYMBOL_CACHE", dir, TRUE);
  return suite_cache;
}

static void
restore_symbol_cache (const char *suite_cache)
{
  if (suite_cache != NULL)
    g_setenv ("TIDEMARK_SYMBOL_CACHE", suite_cache, TRUE);
  else
    g_unsetenv ("TIDEMARK_SYMBOL_CACHE");
}

/* The second recording takes its frames from the symbol cache that the
 * first one left, and they are the frames the first one resolved. */
static void
test_symbol_cache (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *cache_dir = tide_test_make_dir ("tide-symbols");
  g_autofree char *unused_dir = tide_test_make_dir ("tide-symbols-unused");
  g_autofree char *cold = NULL;
  g_autofree char *warm = NULL;
  g_autofree char *suite_cache = use_symbol_cache (cache_dir);

  for (guint i = 0; i < 2; i++)
    {
      g_auto(Run) run = { 0 };

      record (f, "--all", "leaky-steps", NULL, NULL, &run);
      g_assert_cmpint (run.status, ==, 0);
      if (i == 0)
        cold = frames_as_text (f->trace);
      else
        warm = frames_as_text (f->trace);
      g_assert_cmpint (g_unlink (f->trace), ==, 0);
    }
  g_assert_nonnull (strstr (cold, " leak_feature_cache "));
  g_assert_nonnull (strstr (cold, "/leaky-steps.c:"));
  g_assert_cmpstr (warm, ==, cold);
  /* One file per ELF file with a build-id: the target and libc at least. */
  g_assert_cmpuint (count_files (cache_dir), >=, 2);

  {
    g_auto(Run) run = { 0 };

    g_setenv ("TIDEMARK_SYMBOL_CACHE", unused_dir, TRUE);
    record (f, "--no-symbol-cache", "leaky-steps", NULL, NULL, &run);
    g_assert_cmpint (run.status, ==, 0);
    g_assert_cmpuint (count_files (unused_dir), ==, 0);
  }
  restore_symbol_cache (suite_cache);
  tide_test_remove_dir (cache_dir);
  tide_test_remove_dir (unused_dir);
}

/* ---- a leak in an inlined static function (inline-leak.c) ------------------ */

/* The compiler inlined keep_copy(): no code of its own in the target. */
static void
assert_keep_copy_inlined (void)
{
  g_autofree char *target = target_path ("inline-leak");
  g_autofree char *nm = g_find_program_in_path ("nm");  /* binutils, as objcopy */
  const char *argv[] = { nm, target, NULL };
  g_auto(Run) run = { 0 };

  g_assert_nonnull (nm);
  run_argv (argv, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, " T main\n"));
  g_assert_null (strstr (run.out, "keep_copy"));
}

/* The top suspect's frames: __strdup (glibc: plumbing), then keep_copy as
 * an inline frame at its strdup line, then main at the call site. */
static void
assert_inline_suspect (Fixture *f)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (f->trace);
  g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, NULL);
  const TideFrame *headline, *caller;
  TideGroup *top;
  gint h;

  g_assert_cmpuint (suspects->len, ==, 1);
  top = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (top->growth_bytes, ==, 7 * 65536);  /* steps 2..8, over step 1 */
  h = tide_frames_find_headline (top->frames);
  g_assert_cmpint (h, ==, 1);
  g_assert_true (((TideFrame *) g_ptr_array_index (top->frames, 0))->plumbing);
  headline = tide_group_get_headline (top);
  g_assert_cmpint (headline->kind, ==, TIDE_FRAME_INLINE);
  g_assert_cmpstr (headline->function, ==, "keep_copy");
  g_assert_true (g_str_has_suffix (headline->file, "/tests/targets/inline-leak.c"));
  g_assert_cmpint (headline->line, ==, tide_test_target_line ("inline-leak.c", "/* KEEP-LINE */"));
  caller = g_ptr_array_index (top->frames, h + 1);
  g_assert_cmpint (caller->kind, ==, TIDE_FRAME_NATIVE);
  g_assert_cmpstr (caller->function, ==, "main");
  g_assert_cmpint (caller->line, ==, tide_test_target_line ("inline-leak.c", "/* CALL-LINE */"));
}

static void
test_inline_leak (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *cache_dir = tide_test_make_dir ("tide-symbols-inline");
  g_autofree char *cold = NULL;
  g_autofree char *expected = g_strdup_printf ("  1. inline-leak.c:%d keep_copy\n",
                                               tide_test_target_line ("inline-leak.c", "/* KEEP-LINE */"));

  assert_keep_copy_inlined ();
  /* Twice: the second recording takes the inline levels from the cache. */
  g_autofree char *suite_cache = use_symbol_cache (cache_dir);

  for (guint i = 0; i < 2; i++)
    {
      g_auto(Run) run = { 0 };
      g_auto(Run) report = { 0 };
      const char *argv[] = { TIDE_TIDEMARK_EXE, "report", "--suspects", f->trace, NULL };
      g_autofree char *frames = NULL;

      record (f, "--all", "inline-leak", NULL, NULL, &run);
      g_assert_cmpint (run.status, ==, 0);
      assert_inline_suspect (f);
      run_argv (argv, &report);
      g_assert_cmpint (report.status, ==, 0);
      g_assert_nonnull (strstr (report.out, expected));
      frames = frames_as_text (f->trace);
      if (i == 0)
        cold = g_steal_pointer (&frames);
      else
        g_assert_cmpstr (frames, ==, cold);
      g_assert_cmpint (g_unlink (f->trace), ==, 0);
    }
  restore_symbol_cache (suite_cache);
  tide_test_remove_dir (cache_dir);
}

void
add_record_leak_tests (void)
{
  RECORD_TEST_ADD ("/record/leaky/all", NULL, test_leaky_all);
  RECORD_TEST_ADD ("/record/leaky/sampled", NULL, test_leaky_sampled);
  RECORD_TEST_ADD ("/record/control/all", "--all", test_control);
  RECORD_TEST_ADD ("/record/control/sampled", NULL, test_control);
  RECORD_TEST_ADD ("/record/folded-frees", NULL, test_folded_frees);
  RECORD_TEST_ADD ("/record/heap-lane-spikes", NULL, test_heap_lane_spikes);
  RECORD_TEST_ADD ("/record/rss-peak", NULL, test_rss_peak);
  RECORD_TEST_ADD ("/record/leaky/sampled-repeatable", NULL, test_sampled_repeatable);
  RECORD_TEST_ADD ("/record/symbol-cache", NULL, test_symbol_cache);
  RECORD_TEST_ADD ("/record/inline-leak", NULL, test_inline_leak);
}
