/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-test-trace.h"

#include <glib/gstdio.h>

#include "tide-schema.h"
#include "tide-trace-writer.h"

enum { STACK_MAIN = 1, STACK_LEAK, STACK_CHURN };

static void
add_stacks (TideTraceWriter *w)
{
  const char *names[] = { "main", "leak_feature_cache", "churn_scratch_buffers" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      TideFrameRow row = { .id = i + 1, .kind = TIDE_FRAME_NATIVE, .function = names[i],
                           .file = "/src/trainer.c", .line = 10 * (i + 1),
                           .module = "/usr/bin/trainer" };
      tide_trace_writer_add_frame (w, &row);
    }
  tide_trace_writer_add_stack_node (w, STACK_MAIN, 0, 1, 1);
  tide_trace_writer_add_stack_node (w, STACK_LEAK, STACK_MAIN, 2, 2);
  tide_trace_writer_add_stack_node (w, STACK_CHURN, STACK_MAIN, 3, 2);
}

/* What differs between the trace shown and the one compared with it. */
typedef struct
{
  const char *name;
  gint64      step_ns;
  gint        leak_blocks;    /* of 16 KiB, kept by each step from TEST_LEAK_FROM */
  gint64    (*rss) (gint k);
  gint64    (*heap) (gint k);
} TraceShape;

static gint64 shown_rss (gint k) { return test_rss (k); }
static gint64 shown_heap (gint k) { return test_heap (k); }
static gint64 fixed_rss (gint k) { return test_fixed_rss (k); }
static gint64 fixed_heap (gint k) { return test_fixed_heap (k); }

static const TraceShape shown_shape = { "timeline.tide", TEST_STEP_NS, 96, shown_rss,
                                        shown_heap };
static const TraceShape fixed_shape = { "fixed.tide", TEST_FIXED_STEP_NS, TEST_FIXED_LEAK_BLOCKS,
                                        fixed_rss, fixed_heap };

static void
add_step (TideTraceWriter  *w,
          const TraceShape *shape,
          gint              k,
          gint64           *alloc_id)
{
  gint64 start = (k - 1) * shape->step_ns;

  tide_trace_writer_add_step (w, k, 1, k, "", start, start + shape->step_ns);
  for (gint64 t = start; t < start + shape->step_ns; t += TEST_SAMPLE_NS)
    {
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, t, shape->rss (k));
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_HEAP_LIVE, -1, t, shape->heap (k));
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_DEVICE_USED, 0, t, test_device (k));
    }
  for (gint i = 0; i < 10; i++, (*alloc_id)++)
    {
      TideAllocRow row = { .process_id = 1, .alloc_ns = start + 100 + i,
                           .free_ns = start + 1000 + i, .address = 0x10000 * *alloc_id,
                           .size = 1000, .weight = 1, .stack_id = STACK_CHURN, .device = -1,
                           .kind = 1 };
      tide_trace_writer_add_allocation (w, &row);
    }
  for (gint i = 0; k >= TEST_LEAK_FROM && i < shape->leak_blocks; i++, (*alloc_id)++)
    {
      TideAllocRow row = { .process_id = 1, .alloc_ns = start + 2000 + i,
                           .address = 0x10000 * *alloc_id, .size = 16384, .weight = 1,
                           .stack_id = STACK_LEAK, .device = -1, .kind = 1 };
      tide_trace_writer_add_allocation (w, &row);
    }
}

static char *
write_shape (const char        *dir,
             const TraceShape  *shape,
             gboolean           finish,
             gpointer          *writer)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (dir, finish ? shape->name : "live.tide", NULL);
  TideProcessRow proc = { .id = 1, .pid = 4242, .start_ns = 0, .all_mode = TRUE,
                          .exe = "/usr/bin/trainer" };
  TideTraceWriter *w = tide_trace_writer_new (path, &error);
  gint64 alloc_id = 1;

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_process (w, &proc);
  add_stacks (w);
  for (gint k = 1; k <= TEST_N_STEPS; k++)
    add_step (w, shape, k, &alloc_id);
  tide_trace_writer_add_transfer (w, &(TideTransferRow) {
      .process_id = 1, .direction = 1, .device = 0, .bytes = 64 * TEST_MIB,
      .start_ns = 4 * TEST_STEP_NS + TEST_STEP_NS / 2, .duration_ns = 1000 });
  if (!finish)
    {
      tide_trace_writer_flush (w);
      *writer = w;
      return path;
    }
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  tide_trace_writer_free (w);
  return path;
}

char *
tide_test_trace_write (const char  *dir,
                       gboolean     finish,
                       gpointer    *writer)
{
  return write_shape (dir, &shown_shape, finish, writer);
}

char *
tide_test_fixed_trace_write (const char *dir)
{
  return write_shape (dir, &fixed_shape, TRUE, NULL);
}

static void
add_rank1_classes (TideTraceWriter *w,
                   gint64           t,
                   gint             k)
{
  tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_RSS_FILE, -1, t, JOB_RANK1_FILE);
  tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_RSS_SHMEM, -1, t, JOB_RANK1_SHMEM);
  tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_RSS_ANON, -1, t,
                                 job_rank1_rss (k) - JOB_RANK1_FILE - JOB_RANK1_SHMEM);
  tide_trace_writer_add_counter (w, 2, TIDE_COUNTER_ALLOC_FREE, -1, t, JOB_RANK1_FREE);
}

static void
add_rank (TideTraceWriter *w,
          gint64           id,
          gint64          *step_id,
          gint64          *alloc_id)
{
  gint64 offset = id == 2 ? JOB_STEP_NS / 2 : 0;
  TideProcessRow proc = { .id = id, .pid = 99 + id, .ppid = 1, .start_ns = 0, .all_mode = TRUE,
                          .exe = "/usr/bin/python3", .cmdline = "python3 train.py" };

  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_set_process_rank (w, id, (gint) id - 1);
  for (gint k = 1; k <= JOB_N_STEPS; k++)
    {
      gint64 start = offset + (k - 1) * JOB_STEP_NS;

      tide_trace_writer_add_step (w, (*step_id)++, id, k, "", start, start + JOB_STEP_NS);
      for (gint64 t = start; t < start + JOB_STEP_NS; t += JOB_SAMPLE_NS)
        {
          tide_trace_writer_add_counter (w, id, TIDE_COUNTER_RSS, -1, t,
                                         id == 1 ? job_rank0_rss (k) : job_rank1_rss (k));
          tide_trace_writer_add_counter (w, id, TIDE_COUNTER_PSS, -1, t,
                                         id == 1 ? job_rank0_pss (k) : job_rank1_pss (k));
          if (id == 2)
            add_rank1_classes (w, t, k);
        }
      for (gint i = 0; id == 2 && k >= JOB_LEAK_FROM && i < 64; i++, (*alloc_id)++)
        {
          TideAllocRow row = { .process_id = id, .alloc_ns = start + 1000 + i,
                               .address = 0x10000 * *alloc_id, .size = 16384, .weight = 1,
                               .stack_id = 1, .device = -1, .kind = 1 };
          tide_trace_writer_add_allocation (w, &row);
        }
    }
}

char *
tide_test_job_trace_write (const char *dir)
{
  g_autoptr(GError) error = NULL;
  TideFrameRow frame = { .id = 1, .kind = TIDE_FRAME_NATIVE, .function = "keep_outputs",
                         .file = "/src/train.c", .line = 25, .module = "/usr/bin/train" };
  char *path = g_build_filename (dir, "job.tide", NULL);
  TideTraceWriter *w = tide_trace_writer_new (path, &error);
  gint64 step_id = 1, alloc_id = 1;

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_frame (w, &frame);
  tide_trace_writer_add_stack_node (w, 1, 0, 1, 1);
  add_rank (w, 1, &step_id, &alloc_id);
  add_rank (w, 2, &step_id, &alloc_id);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  tide_trace_writer_free (w);
  return path;
}

void
tide_test_trace_remove (const char *dir,
                        const char *path)
{
  const char *suffixes[] = { "", "-wal", "-shm", "-journal" };

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *p = g_strconcat (path, suffixes[i], NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}
