/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The report queries on a trace written here with exactly known contents:
 * a process that leaks 96 x 16 KiB per step from step 4 on, churns, has a
 * one-step 8 MiB spike and a 1 MiB block from initialisation; and a control
 * process with the same churn and spike but no leak.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "tide-report-format.h"
#include "tide-report-rss.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-trace-writer.h"
#include "tide-trace.h"
#include "tide-test-util.h"

#define STEP_NS        1000000
#define N_STEPS        10
#define LEAK_BLOCK     16384
#define LEAK_BLOCKS    96
#define LEAK_PER_STEP  (LEAK_BLOCK * LEAK_BLOCKS)
#define SPIKE_BYTES    (8 * 1024 * 1024)
#define INIT_BYTES     (1024 * 1024)

enum { STACK_MAIN = 1, STACK_RUN_STEP, STACK_LEAK, STACK_CHURN, STACK_SPIKE, STACK_INIT };
enum { SCOPE_ENCODER = 1, SCOPE_DATA = 2 };

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
} Fixture;

static gint64 next_alloc_id = 1;

/* How the fixture keeps its stacks: as a recording does since schema 4,
 * a row each, or as a tree of nodes, as older traces do. */
typedef enum { STACKS_AS_ROWS, STACKS_AS_NODES } StackForm;

static void
add_stack_rows (TideTraceWriter *w)
{
  static const struct { gint64 id; gint64 frames[3]; guint n; } stacks[] = {
    { STACK_MAIN, { 1 }, 1 }, { STACK_RUN_STEP, { 1, 2 }, 2 }, { STACK_LEAK, { 1, 2, 3 }, 3 },
    { STACK_CHURN, { 1, 2, 4 }, 3 }, { STACK_SPIKE, { 1, 2, 5 }, 3 }, { STACK_INIT, { 1, 6 }, 2 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (stacks); i++)
    tide_trace_writer_add_stack (w, stacks[i].id, stacks[i].frames, stacks[i].n);
}

static void
add_frames (TideTraceWriter *w,
            StackForm        form)
{
  static const struct { const char *fn; int line; } frames[] = {
    { "main", 30 }, { "run_step", 20 }, { "leak_feature_cache", 10 },
    { "churn_scratch_buffers", 40 }, { "spike_temporary_batch", 50 }, { "init_weights", 60 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (frames); i++)
    {
      TideFrameRow row = { .id = i + 1, .kind = TIDE_FRAME_NATIVE, .function = frames[i].fn,
                           .file = "/src/trainer.c", .line = frames[i].line,
                           .module = "/usr/bin/trainer", .module_offset = 0x1000 + i };
      tide_trace_writer_add_frame (w, &row);
    }
  /* main <- run_step <- {leak, churn, spike}, main <- init */
  if (form == STACKS_AS_ROWS)
    {
      add_stack_rows (w);
      return;
    }
  tide_trace_writer_add_stack_node (w, STACK_MAIN, 0, 1, 1);
  tide_trace_writer_add_stack_node (w, STACK_RUN_STEP, STACK_MAIN, 2, 2);
  tide_trace_writer_add_stack_node (w, STACK_LEAK, STACK_RUN_STEP, 3, 3);
  tide_trace_writer_add_stack_node (w, STACK_CHURN, STACK_RUN_STEP, 4, 3);
  tide_trace_writer_add_stack_node (w, STACK_SPIKE, STACK_RUN_STEP, 5, 3);
  tide_trace_writer_add_stack_node (w, STACK_INIT, STACK_MAIN, 6, 2);
}

static void
add_alloc (TideTraceWriter *w,
           gint64           process_id,
           gint64           stack_id,
           gint64           scope_id,
           guint64          size,
           double           weight,
           gint64           alloc_ns,
           gint64           free_ns)
{
  TideAllocRow row = { .process_id = process_id, .alloc_ns = alloc_ns,
                       .free_ns = free_ns, .address = 0x10000 * next_alloc_id, .size = size,
                       .weight = weight, .stack_id = stack_id, .scope_id = scope_id,
                       .device = -1, .kind = 1 };
  next_alloc_id++;
  tide_trace_writer_add_allocation (w, &row);
}

static void
add_process (TideTraceWriter *w,
             gint64           id,
             gint64           pid,
             gboolean         leaks)
{
  TideProcessRow proc = { .id = id, .pid = pid, .start_ns = 0, .sample_bytes = 0,
                          .all_mode = TRUE, .exe = "/usr/bin/trainer" };

  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_add_scope (w, SCOPE_ENCODER + (id - 1) * 10, id, 0, "model.encoder",
                               "model.encoder");
  add_alloc (w, id, STACK_INIT, 0, INIT_BYTES, 1, 10, 0);

  for (gint k = 1; k <= N_STEPS; k++)
    {
      gint64 start = (k - 1) * (gint64) STEP_NS;

      tide_trace_writer_add_step (w, (id - 1) * 100 + k, id, k, k == N_STEPS ? "last" : "",
                                  start, start + STEP_NS);
      /* RSS at the step end: 10 MiB plus 1 MiB per step. */
      tide_trace_writer_add_counter (w, id, TIDE_COUNTER_RSS, -1, start + STEP_NS - 1,
                                     (10 + k) * 1048576LL);
      for (gint i = 0; i < 10; i++)
        add_alloc (w, id, STACK_CHURN, 0, 1000, 1, start + 100 + i, start + 500 + i);
      if (k == 6)
        add_alloc (w, id, STACK_SPIKE, 0, SPIKE_BYTES, 1, start + 200, start + STEP_NS + 50);
      if (leaks && k >= 4)
        for (gint i = 0; i < LEAK_BLOCKS; i++)
          add_alloc (w, id, STACK_LEAK, SCOPE_ENCODER, LEAK_BLOCK, 1, start + 1000 + i, 0);
    }
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = NULL;

  f->dir = tide_test_make_dir ("tide-report");
  f->path = g_build_filename (f->dir, "synthetic.tide", NULL);
  w = tide_trace_writer_new (f->path, &error);
  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  add_frames (w, GPOINTER_TO_INT (data));
  add_process (w, 1, 100, TRUE);
  add_process (w, 2, 200, FALSE);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);

  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_object (&f->trace);
  g_unlink (f->path);
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

static void
test_steps (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) rows = tide_report_steps (f->trace, &error);
  TideStepRow *s1, *s4, *s6, *s7, *c6;

  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 2 * N_STEPS);
  s1 = g_ptr_array_index (rows, 0);
  s4 = g_ptr_array_index (rows, 3);
  s6 = g_ptr_array_index (rows, 5);
  s7 = g_ptr_array_index (rows, 6);
  c6 = g_ptr_array_index (rows, N_STEPS + 5);

  g_assert_cmpint (s1->process.pid, ==, 100);
  g_assert_cmpint (s1->number, ==, 1);
  g_assert_cmpint (s1->duration_ns, ==, STEP_NS);
  g_assert_cmpint (s1->heap_end, ==, INIT_BYTES);
  g_assert_cmpint (s1->retained_bytes, ==, INIT_BYTES);
  g_assert_cmpint (s1->retained_count, ==, 1);
  g_assert_true (s1->has_rss);
  g_assert_cmpint (s1->rss_end, ==, 11 * 1048576LL);

  g_assert_cmpint (s4->retained_bytes, ==, LEAK_PER_STEP);
  g_assert_cmpint (s4->retained_count, ==, LEAK_BLOCKS);
  g_assert_cmpint (s4->heap_delta, ==, LEAK_PER_STEP);
  g_assert_cmpint (s4->rss_delta, ==, 1048576);

  g_assert_cmpint (s6->retained_bytes, ==, LEAK_PER_STEP + SPIKE_BYTES);
  g_assert_cmpint (s6->heap_end, ==, INIT_BYTES + 3 * LEAK_PER_STEP + SPIKE_BYTES);
  g_assert_cmpint (s7->heap_delta, ==, LEAK_PER_STEP - SPIKE_BYTES);
  g_assert_cmpint (s7->retained_bytes, ==, LEAK_PER_STEP);

  g_assert_cmpint (c6->process.pid, ==, 200);
  g_assert_cmpint (c6->retained_bytes, ==, SPIKE_BYTES);
  g_assert_cmpint (c6->heap_end, ==, INIT_BYTES + SPIKE_BYTES);
}

static void
test_suspects_by_stack (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, &error);
  TideGroup *g;
  TideFrame *top;

  g_assert_no_error (error);
  /* Only the leak: not the spike, not the churn, not the initialisation,
   * and nothing from the control process. */
  g_assert_cmpuint (suspects->len, ==, 1);
  g = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (g->process.pid, ==, 100);
  g_assert_cmpint (g->stack_id, ==, STACK_LEAK);
  g_assert_cmpint (g->growth_step, ==, 4);
  g_assert_cmpint (g->growth_bytes, ==, 7 * LEAK_PER_STEP);
  g_assert_cmpfloat (g->bytes_per_step, ==, LEAK_PER_STEP);
  g_assert_cmpint (g->bytes, ==, 7 * LEAK_PER_STEP);
  g_assert_cmpuint (g->frames->len, ==, 3);
  top = g_ptr_array_index (g->frames, 0);
  g_assert_cmpstr (top->function, ==, "leak_feature_cache");
  g_assert_cmpint (top->line, ==, 10);
  g_assert_cmpstr (((TideFrame *) g_ptr_array_index (g->frames, 2))->function, ==, "main");
}

static void
test_suspects_by_scope (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = tide_report_suspects (f->trace, TIDE_GROUP_BY_SCOPE, &error);
  TideGroup *g;

  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 1);
  g = g_ptr_array_index (suspects, 0);
  g_assert_cmpstr (g->scope_path, ==, "model.encoder");
  g_assert_cmpint (g->growth_step, ==, 4);
}

static void
test_retained_step (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = tide_report_retained (f->trace, 7, TIDE_GROUP_BY_STACK, &error);
  TideGroup *g;

  g_assert_no_error (error);
  /* Step 7 of the leaking process kept the leak; the control's step 7
   * kept nothing (the spike was born in step 6). */
  g_assert_cmpuint (groups->len, ==, 1);
  g = g_ptr_array_index (groups, 0);
  g_assert_cmpint (g->stack_id, ==, STACK_LEAK);
  g_assert_cmpint (g->bytes, ==, LEAK_PER_STEP);
  g_assert_cmpint (g->count, ==, LEAK_BLOCKS);
  g_assert_cmpint (g->growth_step, ==, 4);
}

static void
test_retained_end (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = tide_report_retained (f->trace, 0, TIDE_GROUP_BY_STACK, &error);
  TideGroup *leak, *init;

  g_assert_no_error (error);
  /* Leak and init of process 1, init of process 2: largest first. */
  g_assert_cmpuint (groups->len, ==, 3);
  leak = g_ptr_array_index (groups, 0);
  init = g_ptr_array_index (groups, 1);
  g_assert_cmpint (leak->bytes, ==, 7 * LEAK_PER_STEP);
  g_assert_cmpint (leak->count, ==, 7 * LEAK_BLOCKS);
  g_assert_cmpint (init->bytes, ==, INIT_BYTES);
  g_assert_cmpint (init->growth_step, ==, 0);
}

static void
test_retained_missing_step (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = tide_report_retained (f->trace, 99, TIDE_GROUP_BY_STACK, &error);

  g_assert_null (groups);
  g_assert_nonnull (strstr (error->message, "has no step 99"));
}

static void
test_steps_csv (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GPtrArray) rows = tide_report_steps (f->trace, NULL);
  g_autoptr(GString) out = g_string_new (NULL);
  g_auto(GStrv) lines = NULL;

  tide_format_steps (out, rows, TIDE_FORMAT_CSV);
  lines = g_strsplit (out->str, "\n", -1);
  g_assert_cmpstr (lines[0], ==, "pid,role,dist_rank,steps_pid,step,label,start_ns,"
                                 "duration_ns,rss_end_bytes,"
                                 "rss_delta_bytes,heap_live_end_bytes,heap_delta_bytes,"
                                 "mapped_end_bytes,device_end_bytes,device_delta_bytes,"
                                 "retained_bytes,retained_count,resident_explained_bytes,"
                                 "unattributed_bytes,h2d_bytes,d2h_bytes,pss_end_bytes,uss_end_bytes,"
                                 "rss_anon_end_bytes,rss_file_end_bytes,rss_shmem_end_bytes,"
                                 "alloc_free_end_bytes,cow_bytes,cow_left_bytes");
  g_assert_cmpstr (lines[4], ==, "100,trainer,,100,4,,3000000,1000000,14680064,1048576,2621440,1572864,"
                                 "0,0,0,1572864,96,,,0,0,,,,,,,,");
  g_assert_cmpstr (lines[10], ==, "100,trainer,,100,10,last,9000000,1000000,20971520,1048576,12058624,"
                                  "1572864,0,0,0,1572864,96,,,0,0,,,,,,,,");
  g_assert_cmpuint (g_strv_length (lines), ==, 2 * N_STEPS + 2);
}

static void
test_suspects_json (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GPtrArray) suspects = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, NULL);
  g_autoptr(GString) out = g_string_new (NULL);

  tide_format_groups (out, suspects, TIDE_GROUPS_SUSPECTS, TIDE_GROUP_BY_STACK, 0,
                      TIDE_FORMAT_JSON);
  /* A stack suspect names the scope that holds most of its bytes. */
  const char *expected =
    "{\"suspects\":[{\"position\":1,\"pid\":100,\"role\":\"trainer\",\"dist_rank\":null,"
    "\"device\":\"host\",\"bytes\":11010048,"
    "\"count\":null,\"resident_bytes\":null,\"growth_start_step\":4,"
    "\"growth_bytes\":11010048,\"bytes_per_step\":1572864,\"scope\":\"model.encoder\","
    "\"frames\":[{\"function\":\"leak_feature_cache\",\"file\":\"/src/trainer.c\","
    "\"line\":10,";
  g_autofree char *head = g_strndup (out->str, strlen (expected));

  g_assert_cmpstr (head, ==, expected);
}

#define MIB G_GINT64_CONSTANT (1048576)

/* A step row of process 1 whose private memory (USS) was last read, by
 * its end, at @uss_end; @read: at its end itself.  @start: the reading
 * by its start, -1 for none. */
static TideStepRow *
span_test_row (gint     number,
               gint64   uss_start,
               gint64   uss_end,
               gboolean read,
               gint64   resident)
{
  TideStepRow *r = g_new0 (TideStepRow, 1);

  r->process.id = 1;
  r->number = number;
  r->has_classes = TRUE;
  r->has_resident = TRUE;
  r->resident_explained = resident;
  for (gint c = 0; c < TIDE_STEP_N_CLASSES; c++)
    r->class_start[c] = r->class_end[c] = r->class_exit[c] = -1;
  r->class_start[TIDE_STEP_USS] = uss_start;
  r->class_end[TIDE_STEP_USS] = uss_end;
  r->class_start[TIDE_STEP_SHARED] = uss_start >= 0 ? 0 : -1;
  r->class_end[TIDE_STEP_SHARED] = 0;
  r->class_read_at_end = read ? 1u << TIDE_STEP_USS : 0;
  r->heap_exit = -1;
  return r;
}

static TideGroup *
group_of_stack (GPtrArray *groups,
                gint64     stack_id)
{
  for (guint i = 0; i < groups->len; i++)
    if (((TideGroup *) g_ptr_array_index (groups, i))->stack_id == stack_id)
      return g_ptr_array_index (groups, i);
  g_assert_not_reached ();
}

/* Residency written as a recording writes it (schema 4): a group's row
 * where its resident bytes changed, and a total for every measured step.
 * The leak's 1 MiB is resident from step 1 and half of it is swapped out
 * in step 3; the initialisation's 4 KiB stay from step 1 on; the scratch
 * block, born and gone in step 1, leaves a row of 0 at step 2.  Step 2,
 * where nothing changed, is measured all the same, and the end reads each
 * group's latest row. */
static void
test_residency_changes (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-report");
  g_autofree char *path = g_build_filename (dir, "changes.tide", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  g_autoptr(GPtrArray) live = NULL;
  TideProcessRow proc = { .id = 1, .pid = 100, .all_mode = TRUE, .exe = "/usr/bin/trainer" };
  static const TideResidencyRow rows[] = {
    { .step_id = 1, .stack_id = STACK_LEAK, .device = -1, .resident_bytes = MIB,
      .resident_born_bytes = MIB },
    { .step_id = 1, .stack_id = STACK_INIT, .device = -1, .resident_bytes = 4096,
      .resident_born_bytes = 4096 },
    { .step_id = 1, .stack_id = STACK_SPIKE, .device = -1, .resident_bytes = 8192,
      .resident_born_bytes = 8192 },
    { .step_id = 2, .stack_id = STACK_SPIKE, .device = -1 },
    { .step_id = 3, .stack_id = STACK_LEAK, .device = -1, .resident_bytes = MIB / 2 },
  };
  static const gint64 totals[] = { MIB + 4096 + 8192, MIB + 4096, MIB / 2 + 4096 };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  add_frames (w, STACKS_AS_ROWS);
  tide_trace_writer_add_process (w, &proc);
  add_alloc (w, 1, STACK_INIT, 0, 4096, 1, 10, 0);
  add_alloc (w, 1, STACK_LEAK, 0, MIB, 1, 20, 0);
  for (gint k = 1; k <= 3; k++)
    tide_trace_writer_add_step (w, k, 1, k, "", (k - 1) * STEP_NS, k * STEP_NS);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    tide_trace_writer_add_residency (w, &rows[i]);
  for (gint k = 1; k <= 3; k++)
    tide_trace_writer_add_residency_total (w, k, totals[k - 1], k == 1 ? totals[0] : 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);

  trace = tide_test_open_trace (path);
  steps = tide_report_steps (trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (steps->len, ==, 3);
  for (guint k = 0; k < 3; k++)
    {
      TideStepRow *row = g_ptr_array_index (steps, k);

      g_assert_true (row->has_resident);
      g_assert_cmpint (row->resident_explained, ==, totals[k]);
    }
  live = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (live->len, ==, 2);
  g_assert_cmpint (group_of_stack (live, STACK_LEAK)->resident_bytes, ==, MIB / 2);
  g_assert_cmpint (group_of_stack (live, STACK_INIT)->resident_bytes, ==, 4096);
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

/* A job that steps 20 MiB of heap a step, whose first two step ends the
 * recorder read late (a loaded machine): the last reading by then was one
 * the poll took early in step 1, at 3 MiB.  Step 3's reading explains
 * steps 1-3 from the process's start, with the heap's whole change; it
 * explained steps 2-3 from that early reading, against the heap's change
 * since step 1's end, and left 20 MiB of heap unexplained. */
static void
test_span_from_start (void)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_step_row_free);
  g_autoptr(GArray) explanations = NULL;
  const TideRssExplanation *e;

  g_ptr_array_add (rows, span_test_row (1, -1, 3 * MIB, FALSE, 20 * MIB));
  g_ptr_array_add (rows, span_test_row (2, 3 * MIB, 3 * MIB, FALSE, 40 * MIB));
  g_ptr_array_add (rows, span_test_row (3, 3 * MIB, 63 * MIB, TRUE, 60 * MIB));
  explanations = tide_rss_explain_steps (rows);
  g_assert_true (g_array_index (explanations, TideRssExplanation, 0).pending);
  g_assert_true (g_array_index (explanations, TideRssExplanation, 1).pending);
  e = &g_array_index (explanations, TideRssExplanation, 2);
  g_assert_false (e->pending);
  g_assert_cmpint (e->first_step, ==, 1);
  g_assert_cmpint (e->base_delta, ==, 63 * MIB);
  g_assert_cmpint (e->terms[TIDE_RSS_HEAP], ==, 60 * MIB);
  g_assert_cmpint (e->terms[TIDE_RSS_UNEXPLAINED], ==, 3 * MIB);
  /* A span from a process's first step holds its start: no headline. */
  g_assert_cmpint (tide_rss_find_largest_unexplained (rows, explanations, MIB), ==, -1);
}

/* A first step end whose reading the recorder wrote at its own time (the
 * step fence, or the deadline): nothing was read by step 1's end, and the
 * first reading, at step 2's end, explains steps 1-2 from the process's
 * start.  Step 1 was explained alone, by its RSS, all of it unexplained. */
static void
test_span_before_first_read (void)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_step_row_free);
  g_autoptr(GArray) explanations = NULL;
  TideStepRow *unread = span_test_row (1, -1, -1, FALSE, 20 * MIB);
  TideStepRow *read = span_test_row (2, -1, 42 * MIB, TRUE, 40 * MIB);
  const TideRssExplanation *e;

  unread->class_end[TIDE_STEP_SHARED] = -1;
  unread->private_later = TRUE;
  unread->has_rss = TRUE;
  unread->rss_delta = 21 * MIB;
  read->has_rss = TRUE;
  read->rss_delta = MIB;
  g_ptr_array_add (rows, unread);
  g_ptr_array_add (rows, read);
  explanations = tide_rss_explain_steps (rows);
  g_assert_true (g_array_index (explanations, TideRssExplanation, 0).pending);
  g_assert_cmpint (g_array_index (explanations, TideRssExplanation, 0).spanned_by, ==, 2);
  e = &g_array_index (explanations, TideRssExplanation, 1);
  g_assert_false (e->pending);
  g_assert_cmpint (e->first_step, ==, 1);
  g_assert_cmpint (e->base_delta, ==, 42 * MIB);
  g_assert_cmpint (e->terms[TIDE_RSS_HEAP], ==, 40 * MIB);
  g_assert_cmpint (e->terms[TIDE_RSS_UNEXPLAINED], ==, 2 * MIB);
  g_assert_cmpint (e->rss_delta, ==, 22 * MIB);
}

/* Runs of steps whose private memory was not read at their ends are one
 * line each in text, per process: process 1's steps 2-4, which step 5's
 * reading explains, and process 2's steps 2-3, which no reading came to
 * explain; a run of one step keeps its own line. */
static void
test_pending_runs_text (void)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_step_row_free);
  g_autoptr(GString) out = g_string_new (NULL);
  static const gboolean read_1[] = { TRUE, FALSE, FALSE, FALSE, TRUE, FALSE, TRUE };
  static const gboolean read_2[] = { TRUE, FALSE, FALSE };

  for (guint k = 0; k < G_N_ELEMENTS (read_1); k++)
    {
      TideStepRow *r = span_test_row ((gint) k + 1, k == 0 ? -1 : 10 * MIB, 10 * MIB, read_1[k], 0);

      r->process.pid = 100;
      r->process.role = g_strdup ("main");
      g_ptr_array_add (rows, r);
      if (k < G_N_ELEMENTS (read_2))
        {
          r = span_test_row ((gint) k + 1, k == 0 ? -1 : 4 * MIB, 4 * MIB, read_2[k], 0);
          r->process.id = 2;
          r->process.pid = 101;
          r->process.role = g_strdup ("worker");
          g_ptr_array_add (rows, r);
        }
    }
  tide_format_rss (out, rows, TIDE_FORMAT_TEXT);
  g_assert_cmpstr (out->str, ==,
                   "Memory by step: the change of each process's private memory (USS), or of its"
                   " RSS where only that was read, and what moved it\n"
                   "step 1, main (pid 100): +10.00 MiB private: unexplained +10.00 MiB; RSS 0 B\n"
                   "step 1, worker (pid 101): +4.00 MiB private: unexplained +4.00 MiB; RSS 0 B\n"
                   "steps 2-4, main (pid 100): private memory not read at their ends:"
                   " step 5 gives steps 2-5\n"
                   "steps 2-3, worker (pid 101): private memory not read at their ends\n"
                   "step 5, main (pid 100): 0 B private over steps 2-5; RSS 0 B\n"
                   "step 6, main (pid 100): private memory not read at this step's end:"
                   " step 7 gives steps 6-7\n"
                   "step 7, main (pid 100): 0 B private over steps 6-7; RSS 0 B\n");
}

/* A class that was not read at a step's end is "-" in that step's row,
 * empty in CSV and null in JSON, not the last reading carried over:
 * step 2 of process 100 had its kernel's split read, not its private
 * memory; its worker had nothing read.  What the allocator holds free is
 * sent ten times a second, and its last value stands. */
static void
test_steps_unread_classes (void)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_step_row_free);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) csv = g_string_new (NULL);
  g_autoptr(GString) json = g_string_new (NULL);
  g_auto(GStrv) text_lines = NULL;
  g_auto(GStrv) csv_lines = NULL;

  for (gint step = 1; step <= 2; step++)
    for (gint worker = 0; worker <= 1; worker++)
      {
        TideStepRow *r = span_test_row (step, step == 1 ? -1 : 10 * MIB, 10 * MIB, step == 1, 0);

        r->process.pid = 100 + worker;
        r->process.id = 1 + worker;
        r->process.role = g_strdup (worker ? "worker" : "main");
        r->steps_pid = 100;
        r->borrowed = worker;
        r->class_end[TIDE_STEP_PSS] = 12 * MIB;
        r->class_end[TIDE_STEP_ANON] = (20 + step) * MIB;
        r->class_end[TIDE_STEP_ALLOC_FREE] = MIB;
        r->class_read_at_end = 1u << TIDE_STEP_ALLOC_FREE;
        if (step == 1 || !worker)
          r->class_read_at_end |= 1u << TIDE_STEP_ANON;
        if (step == 1)
          r->class_read_at_end |= 1u << TIDE_STEP_PSS | 1u << TIDE_STEP_USS;
        g_ptr_array_add (rows, r);
      }
  tide_format_steps (text, rows, TIDE_FORMAT_TEXT);
  tide_format_steps (csv, rows, TIDE_FORMAT_CSV);
  tide_format_steps (json, rows, TIDE_FORMAT_JSON);
  text_lines = g_strsplit (text->str, "\n", -1);
  csv_lines = g_strsplit (csv->str, "\n", -1);
  g_assert_true (g_str_has_suffix (text_lines[2], "    12.00 MiB    10.00 MiB    21.00 MiB"
                                                  "            -            -     1.00 MiB"
                                                  "            -            -"));
  g_assert_true (g_str_has_suffix (text_lines[4], "            -            -    22.00 MiB"
                                                  "            -            -     1.00 MiB"
                                                  "            -            -"));
  g_assert_true (g_str_has_suffix (text_lines[5], "            -            -            -"
                                                  "            -            -     1.00 MiB"
                                                  "            -            -"));
  g_assert_nonnull (strstr (text->str, "\nIn the classes \"-\" is a value not read at the "
                                       "step's end"));
  g_assert_true (g_str_has_suffix (csv_lines[3], ",,,23068672,,,1048576,,"));
  g_assert_true (g_str_has_suffix (csv_lines[4], ",,,,,,1048576,,"));
  g_assert_nonnull (strstr (json->str, "\"step\":2,\"label\":null,"));
  g_assert_nonnull (strstr (json->str, "\"pss_end_bytes\":null,\"uss_end_bytes\":null,"
                                       "\"rss_anon_end_bytes\":23068672,"));
}

/* Pages newly shared as two workers started, named in their numbers'
 * order whichever said hello first, and no longer shared as they and a
 * helper exited. */
static void
test_sharing_cause (void)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_step_row_free);
  g_autoptr(GArray) explanations = NULL;
  TideStepRow *forked = span_test_row (1, -1, 10 * MIB, TRUE, 0);
  TideStepRow *exited = span_test_row (2, 10 * MIB, 50 * MIB, TRUE, 0);
  g_autofree char *text = NULL;

  forked->class_end[TIDE_STEP_SHARED] = 40 * MIB;
  forked->kin_started = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (forked->kin_started, g_strdup ("DataLoader worker 1"));
  g_ptr_array_add (forked->kin_started, g_strdup ("DataLoader worker 0"));
  exited->class_start[TIDE_STEP_SHARED] = 40 * MIB;
  exited->class_end[TIDE_STEP_SHARED] = 0;
  exited->kin_ended = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (exited->kin_ended, g_strdup ("DataLoader worker 0"));
  g_ptr_array_add (exited->kin_ended, g_strdup ("python3 helper.py (pid 42)"));
  g_ptr_array_add (rows, forked);
  g_ptr_array_add (rows, exited);
  explanations = tide_rss_explain_steps (rows);
  g_assert_cmpstr (g_array_index (explanations, TideRssExplanation, 0).sharing_cause, ==,
                   "DataLoader workers 0 and 1 started");
  g_assert_cmpint (g_array_index (explanations, TideRssExplanation, 0).terms[TIDE_RSS_SHARING],
                   ==, -40 * MIB);
  g_assert_cmpstr (g_array_index (explanations, TideRssExplanation, 1).sharing_cause, ==,
                   "DataLoader worker 0 and python3 helper.py (pid 42) exited");
  text = tide_rss_explanation_describe (&g_array_index (explanations, TideRssExplanation, 1));
  g_assert_cmpstr (text, ==, "+40.00 MiB private: no longer shared +40.00 MiB (DataLoader worker 0 "
                             "and python3 helper.py (pid 42) exited); RSS 0 B");
}

/* A fork's child whose parent wrote or freed 6 MiB of the pages it
 * inherited while 512 KiB of others became shared: the term is the net
 * change, and its cause says both, never a part larger than the whole. */
static void
test_sharing_left_by_parent (void)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_step_row_free);
  g_autoptr(GArray) explanations = NULL;
  TideStepRow *first = span_test_row (1, -1, 10 * MIB, TRUE, 0);
  TideStepRow *next = span_test_row (2, 10 * MIB, 10 * MIB + 11 * MIB / 2, TRUE, 0);
  g_autofree char *text = NULL;

  first->class_end[TIDE_STEP_SHARED] = 40 * MIB;
  first->class_end[TIDE_STEP_COW_LEFT] = next->class_start[TIDE_STEP_COW_LEFT] = 0;
  next->class_start[TIDE_STEP_SHARED] = 40 * MIB;
  next->class_end[TIDE_STEP_SHARED] = 40 * MIB - 11 * MIB / 2;
  next->class_end[TIDE_STEP_COW_LEFT] = 6 * MIB;
  g_ptr_array_add (rows, first);
  g_ptr_array_add (rows, next);
  explanations = tide_rss_explain_steps (rows);
  text = tide_rss_explanation_describe (&g_array_index (explanations, TideRssExplanation, 1));
  g_assert_cmpstr (text, ==, "+5.50 MiB private: no longer shared +5.50 MiB (6.00 MiB its parent "
                             "wrote or freed, less 512.00 KiB newly shared); RSS 0 B");
}

#define MS G_GINT64_CONSTANT (1000000)

/* An attach trace of a process that held 100 MiB before attach: three
 * steps of 100 ms, its heap growing 10 MiB a step from attach on; its
 * first reading at 8 ms (as attach begins), or with @late only at step
 * 1's end; then at step 1's and step 3's ends. */
static GPtrArray *
attach_rows (const char *dir,
             gboolean    late)
{
  g_autofree char *path = g_build_filename (dir, late ? "late.tide" : "attach.tide", NULL);
  g_autoptr(TideTraceWriter) w = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  TideProcessRow process = { .id = 1, .pid = 70, .ppid = 1, .start_ns = 0, .all_mode = TRUE,
                             .exe = "/usr/bin/python3.11", .cmdline = "python3 train.py" };
  const gint64 reads[] = { late ? 100 * MS : 8 * MS, 100 * MS, 300 * MS };
  GPtrArray *rows;

  w = tide_trace_writer_new (path, &error);
  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_set_meta (w, "mode", "attach");
  tide_trace_writer_add_process (w, &process);
  for (gint n = 1; n <= 3; n++)
    {
      tide_trace_writer_add_step (w, n, 1, n, NULL, (n - 1) * 100 * MS, n * 100 * MS);
      add_alloc (w, 1, 0, 0, 10 * MIB, 1, (n - 1) * 100 * MS + 50 * MS, 0);
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, n * 100 * MS,
                                     (120 + n * 10) * MIB);
    }
  tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS, -1, 0, 120 * MIB);
  for (guint i = late ? 1 : 0; i < G_N_ELEMENTS (reads); i++)
    {
      gint64 heap = reads[i] / (100 * MS) * 10 * MIB;

      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_USS, -1, reads[i], 100 * MIB + heap);
      tide_trace_writer_add_counter (w, 1, TIDE_COUNTER_RSS_SHARED_PAGES, -1, reads[i], 20 * MIB);
    }
  tide_trace_writer_end_process (w, 1, 400 * MS, &tide_test_exited_0, 0);
  g_assert_true (tide_trace_writer_finish (w, &error));
  g_assert_no_error (error);
  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  rows = tide_report_job_steps (trace, &error);
  g_assert_no_error (error);
  return rows;
}

/* A process that ran before attach starts its account at its first
 * reading, not at nothing: its first step read +110 MiB private, 100 MiB
 * of it unexplained, where it grew by the 10 MiB of heap of its step.  Where
 * attach read it first at that step's end, the step has nothing to
 * explain, and says so. */
static void
test_since_attach (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-report-attach");
  g_autoptr(GPtrArray) rows = attach_rows (dir, FALSE);
  g_autoptr(GPtrArray) late = attach_rows (dir, TRUE);
  g_autoptr(GArray) explanations = tide_rss_explain_steps (rows);
  g_autoptr(GArray) late_explanations = tide_rss_explain_steps (late);
  g_autofree char *first = NULL, *span = NULL, *late_first = NULL, *late_span = NULL;

  g_assert_cmpuint (rows->len, ==, 3);
  first = tide_rss_explanation_describe (&g_array_index (explanations, TideRssExplanation, 0));
  span = tide_rss_explanation_describe (&g_array_index (explanations, TideRssExplanation, 2));
  g_assert_cmpstr (first, ==, "+10.00 MiB private since attach: heap +10.00 MiB; "
                              "RSS +10.00 MiB");
  g_assert_cmpstr (span, ==, "+20.00 MiB private over steps 2-3: heap +20.00 MiB; RSS +20.00 MiB");
  late_first = tide_rss_explanation_describe (&g_array_index (late_explanations,
                                                              TideRssExplanation, 0));
  late_span = tide_rss_explanation_describe (&g_array_index (late_explanations,
                                                             TideRssExplanation, 2));
  g_assert_cmpstr (late_first, ==, "110.00 MiB private at its first reading, after attach: "
                                   "what it held before is not explained");
  g_assert_cmpstr (late_span, ==, "+20.00 MiB private over steps 2-3: heap +20.00 MiB; "
                                  "RSS +20.00 MiB");
  tide_test_remove_dir (dir);
}

/* A trace whose meta says how its RSS classes were read: NULL values are
 * left out. */
static char *
describe_rss_reads (const char *private_reads,
                    const char *pagemap_reads,
                    const char *missed)
{
  g_autofree char *dir = tide_test_make_dir ("tide-report-rss-reads");
  g_autofree char *path = g_build_filename (dir, "reads.tide", NULL);
  g_autoptr(TideTraceWriter) w = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  char *line;

  w = tide_trace_writer_new (path, &error);
  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  if (private_reads != NULL)
    tide_trace_writer_set_meta (w, "private_reads", private_reads);
  if (pagemap_reads != NULL)
    tide_trace_writer_set_meta (w, "pagemap_reads", pagemap_reads);
  if (missed != NULL)
    tide_trace_writer_set_meta (w, "rss_class_reads_missed", missed);
  g_assert_true (tide_trace_writer_finish (w, &error));
  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  line = tide_report_describe_rss_reads (trace);
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
  return line;
}

/* `report --rss` says how the classes were read, and the readings lost;
 * nothing for a trace that does not say, or says what no recorder
 * writes. */
static void
test_rss_reads (void)
{
  char *line;

  line = describe_rss_reads ("budget", "entries", "3");
  g_assert_cmpstr (line, ==, "Measured by: the kernel's split (/proc/PID/status) at every step "
                             "end; private memory (smaps_rollup) and copy-on-write (pagemap, "
                             "read page by page: this kernel has no PAGEMAP_SCAN) at the step "
                             "ends that 1% of the recorder's CPU allows, the steps between "
                             "explained together; 3 readings lost to processes that ended "
                             "during them");
  g_free (line);
  line = describe_rss_reads ("budget-waits", "scan", "0");
  g_assert_cmpstr (line, ==, "Measured by: the kernel's split (/proc/PID/status) at every step "
                             "end; private memory (smaps_rollup) and copy-on-write (pagemap, "
                             "through PAGEMAP_SCAN) at the step ends that 1% of the recorder's "
                             "CPU allows (each waited for its reading), the steps between "
                             "explained together");
  g_free (line);
  line = describe_rss_reads ("every step end", "scan", "0");
  g_assert_cmpstr (line, ==, "Measured by: the kernel's split (/proc/PID/status) at every step "
                             "end; private memory (smaps_rollup) and copy-on-write (pagemap, "
                             "through PAGEMAP_SCAN) at every step end (--sync-steps)");
  g_free (line);
  line = describe_rss_reads ("budget", "scan", "-1");
  g_assert_nonnull (line);
  g_assert_null (strstr (line, "lost"));
  g_free (line);
  g_assert_null (describe_rss_reads (NULL, NULL, NULL));
  g_assert_null (describe_rss_reads ("budget", NULL, "1"));
  g_assert_null (describe_rss_reads ("sometimes", "scan", NULL));
  g_assert_null (describe_rss_reads ("budget", "soft-dirty", NULL));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/storage/report/rss-reads", test_rss_reads);
  g_test_add_func ("/storage/report/span-before-first-read", test_span_before_first_read);
  g_test_add_func ("/storage/report/span-from-start", test_span_from_start);
  g_test_add_func ("/storage/report/pending-runs-text", test_pending_runs_text);
  g_test_add_func ("/storage/report/steps-unread-classes", test_steps_unread_classes);
  g_test_add_func ("/storage/report/sharing-cause", test_sharing_cause);
  g_test_add_func ("/storage/report/sharing-left-by-parent", test_sharing_left_by_parent);
  g_test_add_func ("/storage/report/since-attach", test_since_attach);
  g_test_add_func ("/storage/report/residency-changes", test_residency_changes);

  /* Every case twice: the stacks as rows, and as nodes (the trees of
   * traces before schema 4), which must read alike. */
#define ADD(path, fn) \
  g_test_add ("/storage/report/" path, Fixture, GINT_TO_POINTER (STACKS_AS_ROWS), fixture_setup, \
              fn, fixture_teardown); \
  g_test_add ("/storage/report/stack-nodes/" path, Fixture, GINT_TO_POINTER (STACKS_AS_NODES), \
              fixture_setup, fn, fixture_teardown)
  ADD ("steps", test_steps);
  ADD ("suspects-by-stack", test_suspects_by_stack);
  ADD ("suspects-by-scope", test_suspects_by_scope);
  ADD ("retained-step", test_retained_step);
  ADD ("retained-end", test_retained_end);
  ADD ("retained-missing-step", test_retained_missing_step);
  ADD ("steps-csv", test_steps_csv);
  ADD ("suspects-json", test_suspects_json);
#undef ADD
  return g_test_run ();
}
