/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideTraceDiff on small written traces: steps paired by label when every
 * step has one, suspects paired by headline and scope when another build
 * moved the stack's lines, and the sampling-noise bound.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-trace-diff.h"
#include "tide-trace-writer.h"

#define MiB G_GINT64_CONSTANT (1048576)

static char *dir;

typedef struct
{
  const char * const *labels;   /* one per step */
  gint                line;     /* of the leaking frame */
  const char         *module;
  gint64              offset;
  gint                leak_from;  /* 0: no leak */
  gint64              sample_bytes; /* 0: --all */
  gint64              leak_bytes;   /* per step; 0: 1 MiB */
} TraceShape;

/* A one-process trace whose steps carry @shape's labels; from step
 * leak_from on each step keeps 1 MiB from one stack in scope "model.cache". */
static char *
write_trace (const char       *name,
             const TraceShape *shape)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideFrameRow leak = { .id = 1, .kind = TIDE_FRAME_NATIVE, .function = "cache_outputs",
                        .file = "/src/train.c", .line = shape->line, .module = shape->module,
                        .module_offset = shape->offset };
  TideFrameRow caller = { .id = 2, .kind = TIDE_FRAME_NATIVE, .function = "main",
                          .file = "/src/train.c", .line = 90, .module = shape->module,
                          .module_offset = 0x40 };
  TideProcessRow proc = { .id = 1, .pid = 700, .ppid = 1, .start_ns = 0,
                          .sample_bytes = shape->sample_bytes,
                          .all_mode = shape->sample_bytes == 0, .exe = "/usr/bin/train",
                          .cmdline = "/usr/bin/train" };
  guint n = g_strv_length ((GStrv) shape->labels);

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_set_meta_int (w, "all_mode", shape->sample_bytes == 0);
  tide_trace_writer_set_meta_int (w, "sample_bytes", shape->sample_bytes);
  tide_trace_writer_add_frame (w, &caller);
  tide_trace_writer_add_frame (w, &leak);
  tide_trace_writer_add_stack_node (w, 1, 0, 2, 1);
  tide_trace_writer_add_stack_node (w, 2, 1, 1, 2);
  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_add_scope (w, 1, 1, 0, "cache", "model.cache");
  for (guint k = 1; k <= n; k++)
    {
      gint64 end = k * G_GINT64_CONSTANT (1000000);
      TideAllocRow a = { .process_id = 1, .alloc_ns = end - 1000, .address = 0x100000 * k,
                         .size = shape->leak_bytes ? shape->leak_bytes : MiB,
                         .weight = 1, .stack_id = 2, .scope_id = 1,
                         .device = -1, .kind = 1 };

      tide_trace_writer_add_step (w, k, 1, k, shape->labels[k - 1], end - 1000000, end);
      if (shape->leak_from > 0 && (gint) k >= shape->leak_from)
        tide_trace_writer_add_allocation (w, &a);
    }
  tide_trace_writer_end_process (w, 1, n * G_GINT64_CONSTANT (1000000), &tide_test_exited_0, 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return path;
}

static TideTraceDiff *
diff_paths (const char *before_path,
            const char *after_path)
{
  g_autoptr(TideTrace) before = tide_test_open_trace (before_path);
  g_autoptr(TideTrace) after = tide_test_open_trace (after_path);
  g_autoptr(GError) error = NULL;
  TideTraceDiff *diff = tide_trace_diff_new (before, after, NULL, NULL, TIDE_GROUP_BY_STACK,
                                             &error);

  g_assert_no_error (error);
  g_assert_nonnull (diff);
  return diff;
}

static const char * const warmup_labels[] = { "warmup", "epoch 1", "epoch 2", "epoch 3",
                                              "epoch 4", "epoch 5", NULL };
static const char * const epoch_labels[] = { "epoch 1", "epoch 2", "epoch 3", "epoch 4",
                                             "epoch 5", NULL };
static const char * const unlabelled[] = { "", "", "", "", "", NULL };

/* BEFORE had a warm-up step that AFTER dropped: epoch k is step k+1 of
 * BEFORE and step k of AFTER. */
static void
test_align_by_label (void)
{
  TraceShape b = { warmup_labels, 25, "/usr/bin/train", 0x100, 2, 0 };
  TraceShape a = { epoch_labels, 25, "/usr/bin/train", 0x100, 1, 0 };
  g_autofree char *bp = write_trace ("label-before.tide", &b);
  g_autofree char *ap = write_trace ("label-after.tide", &a);
  g_autoptr(TideTraceDiff) diff = diff_paths (bp, ap);

  g_assert_cmpint (diff->align, ==, TIDE_DIFF_ALIGN_LABEL);
  g_assert_cmpuint (diff->steps->len, ==, 6);
  for (guint i = 0; i < 6; i++)
    {
      TideDiffStep *s = g_ptr_array_index (diff->steps, i);

      g_assert_nonnull (s->before);
      g_assert_cmpint (s->before->number, ==, i + 1);
      if (i == 0)
        {
          g_assert_null (s->after);
          continue;
        }
      g_assert_nonnull (s->after);
      g_assert_cmpint (s->after->number, ==, i);
      g_assert_cmpstr (s->after->label, ==, s->before->label);
      /* Both keep 1 MiB in every epoch. */
      g_assert_cmpint (s->before->retained_bytes, ==, MiB);
      g_assert_cmpint (s->after->retained_bytes, ==, MiB);
    }
  g_assert_cmpuint (diff->suspects->len, ==, 1);
  g_assert_cmpint (((TideDiffSuspect *) g_ptr_array_index (diff->suspects, 0))->change, ==,
                   TIDE_SUSPECT_UNCHANGED);
}

/* Without labels on every step, by number; the extra step of BEFORE has
 * no partner. */
static void
test_align_by_number (void)
{
  TraceShape b = { warmup_labels, 25, "/usr/bin/train", 0x100, 0, 0 };
  TraceShape a = { unlabelled, 25, "/usr/bin/train", 0x100, 0, 0 };
  g_autofree char *bp = write_trace ("number-before.tide", &b);
  g_autofree char *ap = write_trace ("number-after.tide", &a);
  g_autoptr(TideTraceDiff) diff = diff_paths (bp, ap);
  TideDiffStep *last;

  g_assert_cmpint (diff->align, ==, TIDE_DIFF_ALIGN_NUMBER);
  g_assert_cmpuint (diff->steps->len, ==, 6);
  for (guint i = 0; i < 5; i++)
    {
      TideDiffStep *s = g_ptr_array_index (diff->steps, i);
      g_assert_cmpint (s->before->number, ==, i + 1);
      g_assert_cmpint (s->after->number, ==, i + 1);
    }
  last = g_ptr_array_index (diff->steps, 5);
  g_assert_cmpint (last->before->number, ==, 6);
  g_assert_null (last->after);
  g_assert_cmpuint (diff->suspects->len, ==, 0);
}

/* Another build: the leaking line moved from 25 to 31 and the code to
 * another offset of another path.  The stacks differ; the headline
 * function and the scope still pair them. */
static void
test_match_by_headline (void)
{
  TraceShape b = { epoch_labels, 25, "/opt/v1/train", 0x100, 1, 0 };
  TraceShape a = { epoch_labels, 31, "/opt/v2/train", 0x180, 1, 0 };
  TraceShape gone = { epoch_labels, 31, "/opt/v2/train", 0x180, 0, 0 };
  g_autofree char *bp = write_trace ("build-before.tide", &b);
  g_autofree char *ap = write_trace ("build-after.tide", &a);
  g_autofree char *gp = write_trace ("build-fixed.tide", &gone);
  g_autoptr(TideTraceDiff) diff = diff_paths (bp, ap);
  g_autoptr(TideTraceDiff) fixed = diff_paths (bp, gp);
  TideDiffSuspect *s;

  g_assert_cmpuint (diff->suspects->len, ==, 1);
  s = g_ptr_array_index (diff->suspects, 0);
  g_assert_cmpint (s->match, ==, TIDE_MATCH_HEADLINE);
  g_assert_cmpint (s->change, ==, TIDE_SUSPECT_UNCHANGED);
  g_assert_cmpint (s->before->growth_bytes, ==, 4 * MiB);
  g_assert_cmpint (s->after->growth_bytes, ==, 4 * MiB);
  g_assert_cmpuint (tide_trace_diff_count (fixed, TIDE_SUSPECT_GONE), ==, 1);
  g_assert_cmpuint (tide_trace_diff_count (fixed, TIDE_SUSPECT_NEW), ==, 0);
  /* Live at the end: 5 MiB under the old line, 5 MiB under the new. */
  g_assert_cmpuint (diff->retained->len, ==, 2);
}

/* The same stack keeps twice as much per step: changed. */
static void
test_changed (void)
{
  TraceShape b = { epoch_labels, 25, "/usr/bin/train", 0x100, 1, 0, MiB };
  TraceShape a = { epoch_labels, 25, "/usr/bin/train", 0x100, 1, 0, 2 * MiB };
  g_autofree char *bp = write_trace ("changed-before.tide", &b);
  g_autofree char *ap = write_trace ("changed-after.tide", &a);
  g_autoptr(TideTraceDiff) diff = diff_paths (bp, ap);
  TideDiffSuspect *s;

  g_assert_cmpuint (diff->suspects->len, ==, 1);
  s = g_ptr_array_index (diff->suspects, 0);
  g_assert_cmpint (s->match, ==, TIDE_MATCH_STACK);
  g_assert_cmpint (s->change, ==, TIDE_SUSPECT_CHANGED);
  g_assert_cmpint ((gint64) s->before->bytes_per_step, ==, MiB);
  g_assert_cmpint ((gint64) s->after->bytes_per_step, ==, 2 * MiB);
  g_assert_cmpuint (diff->retained->len, ==, 1);
  g_assert_cmpint (((TideDiffRetained *) g_ptr_array_index (diff->retained, 0))->after_bytes, ==,
                   10 * MiB);
}

/* Four standard deviations of the difference of two sampled estimates. */
static void
test_noise (void)
{
  TraceShape s = { epoch_labels, 25, "/usr/bin/train", 0x100, 1, 65536 };
  TraceShape all = { epoch_labels, 25, "/usr/bin/train", 0x100, 1, 0 };
  g_autofree char *sp = write_trace ("noise-sampled.tide", &s);
  g_autofree char *ap = write_trace ("noise-all.tide", &all);
  g_autoptr(TideTraceDiff) sampled = diff_paths (sp, sp);
  g_autoptr(TideTraceDiff) exact = diff_paths (ap, ap);
  g_autoptr(TideTraceDiff) mixed = diff_paths (sp, ap);

  g_assert_cmpint (sampled->before_sample_bytes, ==, 65536);
  /* 4 * sqrt (65536 * 1e6 + 65536 * 0) = 4 * 256000 */
  g_assert_cmpint (tide_trace_diff_noise (sampled, 1000000, 0), ==, 1024000);
  g_assert_false (tide_trace_diff_beyond_noise (sampled, 1000000, 0));
  g_assert_true (tide_trace_diff_beyond_noise (sampled, 2000000, 0));
  g_assert_cmpint (tide_trace_diff_noise (exact, 1000000, 0), ==, 0);
  g_assert_true (tide_trace_diff_beyond_noise (exact, 1000000, 999999));
  g_assert_false (tide_trace_diff_beyond_noise (exact, 1000000, 1000000));
  /* Only BEFORE is sampled: only its value has noise. */
  g_assert_cmpint (tide_trace_diff_noise (mixed, 0, 1000000), ==, 0);
  g_assert_cmpint (tide_trace_diff_noise (mixed, 1000000, 0), ==, 1024000);
  g_assert_cmpuint (tide_trace_diff_count_differences (exact), ==, 0);
}

/* A sampled one-process trace of two steps whose blocks live at its end:
 * @wide bytes from one stack, @narrow from another (0: none). */
static char *
write_two_stacks (const char *name,
                  gint64      wide,
                  gint64      narrow)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  TideProcessRow proc = { .id = 1, .pid = 700, .ppid = 1, .start_ns = 0, .sample_bytes = 65536,
                          .exe = "/usr/bin/train", .cmdline = "/usr/bin/train" };
  const char *functions[] = { "keep_wide", "keep_narrow" };
  const gint64 bytes[] = { wide, narrow };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_set_meta_int (w, "all_mode", 0);
  tide_trace_writer_set_meta_int (w, "sample_bytes", 65536);
  tide_trace_writer_add_process (w, &proc);
  for (gint k = 0; k < 2; k++)
    {
      TideFrameRow frame = { .id = k + 1, .kind = TIDE_FRAME_NATIVE, .function = functions[k],
                             .file = "/src/train.c", .line = 10 + k, .module = "/usr/bin/train",
                             .module_offset = 0x100 + k };
      TideAllocRow a = { .process_id = 1, .alloc_ns = 500000, .address = 0x100000 * (k + 1),
                         .size = bytes[k], .weight = 1, .stack_id = k + 1, .device = -1,
                         .kind = 1 };

      tide_trace_writer_add_frame (w, &frame);
      tide_trace_writer_add_stack_node (w, k + 1, 0, k + 1, 1);
      if (bytes[k] > 0)
        tide_trace_writer_add_allocation (w, &a);
    }
  tide_trace_writer_add_step (w, 1, 1, 1, "", 0, 1000000);
  tide_trace_writer_add_step (w, 2, 1, 2, "", 1000000, 2000000);
  tide_trace_writer_end_process (w, 1, 2000000, &tide_test_exited_0, 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  return path;
}

/* Live at the end, what differs beyond noise comes first: keep_narrow's
 * 1.5 MiB, new, before keep_wide's 2 MiB more of 40, which sampling
 * explains (4 sigma of 40 and 42 MiB at 64 KiB is some 9 MB). */
static void
test_retained_beyond_noise_first (void)
{
  g_autofree char *bp = write_two_stacks ("retained-before.tide", 40 * MiB, 0);
  g_autofree char *ap = write_two_stacks ("retained-after.tide", 42 * MiB, 3 * MiB / 2);
  g_autoptr(TideTraceDiff) diff = diff_paths (bp, ap);
  TideDiffRetained *first, *second;

  g_assert_cmpuint (diff->retained->len, ==, 2);
  first = g_ptr_array_index (diff->retained, 0);
  second = g_ptr_array_index (diff->retained, 1);
  g_assert_nonnull (strstr (first->name, "keep_narrow"));
  g_assert_true (first->beyond_noise);
  g_assert_nonnull (strstr (second->name, "keep_wide"));
  g_assert_false (second->beyond_noise);
  g_assert_cmpuint (tide_trace_diff_count_differences (diff), ==, 1);
}

/* A time of BEFORE stands at the same fraction of AFTER's aligned step;
 * between and around aligned steps, as far from the nearest edge. */
static void
test_step_pairs_map (void)
{
  const TideStepPair pairs[] = {
    { 100, 200, 1000, 1050 },   /* step 1: 100 ns in BEFORE, 50 in AFTER */
    { 300, 400, 1100, 1300 },   /* step 2, after a gap of 100 in BEFORE */
  };

  g_assert_cmpint (tide_step_pairs_map (pairs, 2, 100), ==, 1000);
  g_assert_cmpint (tide_step_pairs_map (pairs, 2, 150), ==, 1025);
  g_assert_cmpint (tide_step_pairs_map (pairs, 2, 199), ==, 1049);
  g_assert_cmpint (tide_step_pairs_map (pairs, 2, 350), ==, 1200);
  g_assert_cmpint (tide_step_pairs_map (pairs, 2, 40), ==, 940);
  g_assert_cmpint (tide_step_pairs_map (pairs, 2, 250), ==, 1100);
  g_assert_cmpint (tide_step_pairs_map (pairs, 2, 450), ==, 1350);
  g_assert_cmpint (tide_step_pairs_map (pairs, 0, 450), ==, 450);
  /* A damaged trace's spans as wide as gint64 allows: saturated, no overflow. */
  {
    const TideStepPair wide[] = { { G_MININT64 + 1, G_MAXINT64, G_MININT64, G_MAXINT64 } };

    g_assert_cmpint (tide_step_pairs_map (wide, 1, G_MAXINT64), ==, G_MAXINT64);
    g_assert_cmpint (tide_step_pairs_map (wide, 1, G_MININT64), ==, G_MININT64);
    g_assert_cmpint (llabs (tide_step_pairs_map (wide, 1, 0)), <, G_GINT64_CONSTANT (1) << 12);
  }
}

int
main (int    argc,
      char **argv)
{
  int result;

  g_test_init (&argc, &argv, NULL);
  dir = tide_test_make_dir ("tide-trace-diff");
  g_test_add_func ("/trace-diff/align-by-label", test_align_by_label);
  g_test_add_func ("/trace-diff/align-by-number", test_align_by_number);
  g_test_add_func ("/trace-diff/match-by-headline", test_match_by_headline);
  g_test_add_func ("/trace-diff/changed", test_changed);
  g_test_add_func ("/trace-diff/noise", test_noise);
  g_test_add_func ("/trace-diff/retained-beyond-noise-first", test_retained_beyond_noise_first);
  g_test_add_func ("/trace-diff/step-pairs-map", test_step_pairs_map);
  result = g_test_run ();
  tide_test_remove_dir (dir);
  g_free (dir);
  return result;
}
