/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * How much growth makes a suspect, on traces written here.
 *
 * A class of RSS: three processes of twelve 100 ms steps each, whose RSS
 * and glibc free memory are sampled at every step end.
 *
 *   WARM   a PyTorch rank of 254 MiB whose free lists climb by 2,548 KiB in
 *          steps 2 to 7 and then stay, as a rank of a gloo DDP job does
 *          while it warms up;
 *   SMALL  the same climb in a process of 40 MiB;
 *   GROWS  the 254 MiB rank whose free memory grows by 1 MiB in every step
 *          from step 2;
 *   LATER  SMALL's climb, and then 512 KiB more in each of steps 8 to 12.
 *
 * A climb of under 1/32 of the process's RSS is not a suspect: WARM has
 * none.  Nor is one that stays flat over the last third of the steps: a
 * class that fills up while the job warms up has found its size.  SMALL has
 * none; GROWS and LATER, still growing at the end, have one each.
 *
 * A sampled stack: a process sampled every 4 KiB, where each recorded
 * block stands for one sample (64 bytes of weight 64).
 *
 *   NOISE  holds one sample at each step end, then two, three and four in
 *          the last three steps, as a loss's scope did in test-python's
 *          scope-split: which few of its blocks are sampled is chance;
 *   LEAK   keeps one more sample in each step from step 2.
 *
 * Growth of fewer than four samples is not a suspect: LEAK is the only one.
 */
#include "config.h"

#include "tide-report-rss.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-trace-writer.h"

#define MS        G_GINT64_CONSTANT (1000000)
#define KIB       G_GINT64_CONSTANT (1024)
#define MIB       G_GINT64_CONSTANT (1048576)
#define N_STEPS   12

enum { WARM = 1, SMALL, GROWS, LATER };

/* KiB, at each step end: a dump of rank 0 of test-merge-ddp's job. */
static const gint64 warm_up_kib[N_STEPS] = {
  1872, 2636, 3146, 3401, 3657, 4168, 4424, 4423, 4422, 4421, 4420, 4420,
};

static void
add_process (TideTraceWriter *w,
             gint64           id,
             gint64           rss,
             const gint64    *alloc_free)
{
  TideProcessRow row = { .id = id, .pid = 100 + id, .ppid = 1, .start_ns = 0,
                         .all_mode = TRUE, .exe = "/usr/bin/python3.11",
                         .cmdline = "/usr/bin/python3 train.py" };

  tide_trace_writer_add_process (w, &row);
  for (gint k = 1; k <= N_STEPS; k++)
    {
      gint64 end = k * 100 * MS;

      tide_trace_writer_add_step (w, id * 100 + k, id, k, "", end - 100 * MS, end);
      tide_trace_writer_add_counter (w, id, TIDE_COUNTER_RSS, -1, end - 1, rss);
      tide_trace_writer_add_counter (w, id, TIDE_COUNTER_ALLOC_FREE, -1, end - 1,
                                     alloc_free[k - 1]);
    }
  tide_trace_writer_end_process (w, id, (N_STEPS + 1) * 100 * MS, &tide_test_exited_0, 0);
}

static TideTrace *
write_job (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  gint64 warm_up[N_STEPS], grows[N_STEPS], later[N_STEPS];

  g_assert_no_error (error);
  for (gint k = 0; k < N_STEPS; k++)
    {
      warm_up[k] = warm_up_kib[k] * KIB;
      grows[k] = (2 + k) * MIB;
      /* steps 1-7 as warm_up, then 512 KiB a step above step 7's */
      later[k] = k < 7 ? warm_up[k] : warm_up[6] + (k - 6) * 512 * KIB;
    }
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  add_process (w, WARM, 254 * MIB, warm_up);
  add_process (w, SMALL, 40 * MIB, warm_up);
  add_process (w, GROWS, 254 * MIB, grows);
  add_process (w, LATER, 40 * MIB, later);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return tide_test_open_trace (path);
}

static void
assert_suspect (const TideClassSuspect *s,
                gint64                  pid,
                gint64                  growth_bytes,
                const char             *name)
{
  g_assert_cmpint (s->kind, ==, TIDE_CLASS_SUSPECT_ALLOC_FREE);
  g_assert_cmpint (s->process.pid, ==, pid);
  g_assert_cmpint (s->growth_step, ==, 2);
  g_assert_cmpint (s->growth_bytes, ==, growth_bytes);
  g_assert_cmpfloat (s->bytes_per_step, ==, growth_bytes / (double) (N_STEPS - 1));
  g_assert_cmpstr (s->name, ==, name);
}

static void
test_share_of_rss (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-suspect-floor");
  g_autofree char *path = g_build_filename (dir, "job.tide", NULL);
  g_autoptr(TideTrace) trace = write_job (path);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = tide_report_class_suspects (trace, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 2);
  assert_suspect (g_ptr_array_index (suspects, 0), 100 + GROWS, 11 * MIB,
                  "glibc arenas keep 13.00 MiB free");
  assert_suspect (g_ptr_array_index (suspects, 1), 100 + LATER,
                  (4424 - 1872 + 5 * 512) * KIB, "glibc arenas keep 6.82 MiB free");
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

enum { STACK_NOISE = 1, STACK_LEAK };

#define SAMPLE          4096
#define SAMPLED_SIZE    64

/* A sampled block of @stack made in step @step, never freed. */
static void
add_sample (TideTraceWriter *w,
            gint64           stack,
            gint             step)
{
  TideAllocRow a = { .process_id = 1, .alloc_ns = (step - 1) * 100 * MS + MS,
                     .address = (stack << 20) | (step << 12), .size = SAMPLED_SIZE,
                     .weight = SAMPLE / SAMPLED_SIZE, .stack_id = stack, .device = -1,
                     .kind = 1 };

  tide_trace_writer_add_allocation (w, &a);
}

static TideTrace *
write_sampled (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideProcessRow row = { .id = 1, .pid = 101, .ppid = 1, .start_ns = 0,
                         .sample_bytes = SAMPLE, .all_mode = FALSE,
                         .exe = "/usr/bin/python3.11", .cmdline = "/usr/bin/python3 train.py" };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  for (gint64 stack = STACK_NOISE; stack <= STACK_LEAK; stack++)
    {
      TideFrameRow frame = { .id = stack, .kind = TIDE_FRAME_PYTHON,
                             .function = stack == STACK_LEAK ? "leak" : "loss",
                             .file = "/src/train.py", .line = 10 * (gint) stack };

      tide_trace_writer_add_frame (w, &frame);
      tide_trace_writer_add_stack_node (w, stack, 0, stack, 1);
    }
  tide_trace_writer_add_process (w, &row);
  for (gint k = 1; k <= N_STEPS; k++)
    {
      tide_trace_writer_add_step (w, 100 + k, 1, k, "", (k - 1) * 100 * MS, k * 100 * MS);
      if (k == 1 || k >= N_STEPS - 2)
        add_sample (w, STACK_NOISE, k);
      if (k >= 2)
        add_sample (w, STACK_LEAK, k);
    }
  tide_trace_writer_end_process (w, 1, (N_STEPS + 1) * 100 * MS, &tide_test_exited_0, 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return tide_test_open_trace (path);
}

static void
test_four_samples (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-suspect-floor");
  g_autofree char *path = g_build_filename (dir, "sampled.tide", NULL);
  g_autoptr(TideTrace) trace = write_sampled (path);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, &error);
  TideGroup *leak;

  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 1);
  leak = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (leak->stack_id, ==, STACK_LEAK);
  g_assert_cmpint (leak->growth_step, ==, 2);
  g_assert_cmpint (leak->growth_bytes, ==, (N_STEPS - 1) * SAMPLE);
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/storage/suspect-floor/class-share-of-rss", test_share_of_rss);
  g_test_add_func ("/storage/suspect-floor/four-samples", test_four_samples);
  return g_test_run ();
}
