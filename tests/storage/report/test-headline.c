/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Headline frames, plumbing flags and inline frames, read back from a
 * trace written here with known stacks:
 *
 *   native: malloc (libc) <- operator new (libstdc++) <- c10::alloc_cpu
 *           <- [push_entry <- fill_slot, inlined] grow_cache <- main
 *   mixed:  [c10::memset_junk, inlined] c10::alloc_cpu <- at::empty_cpu <- at::_ops::mul_Tensor::call
 *           <- PyNumber_Multiply <- Block.forward (train.py:25)
 *           <- python3.11+0x584b24 <- main (train.py:40)
 *   plumbing only: malloc <- operator new
 *
 * and what the text, CSV and JSON reports print for them.
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tide-file-names.h"
#include "tide-plumbing.h"
#include "tide-report-format.h"
#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-trace-writer.h"
#include "tide-trace.h"

enum { STACK_NATIVE = 5, STACK_MIXED = 12, STACK_PLUMBING = 14 };

#define NATIVE_BYTES   3000
#define MIXED_BYTES    2000
#define PLUMBING_BYTES 1000

typedef struct
{
  char      *dir;
  char      *path;
  TideTrace *trace;
} Fixture;

typedef struct
{
  gint        kind;
  const char *function;
  const char *file;
  int         line;
  const char *module;
} FrameSpec;

/* Frame i + 1 of the trace, and the stack node of the same id whose caller
 * is node @parent[i]. */
static const FrameSpec frames[] = {
  /* 1..5: the native stack, outermost first */
  { TIDE_FRAME_NATIVE, "main", "/src/cache.c", 50, "/usr/bin/trainer" },
  { TIDE_FRAME_NATIVE, "grow_cache", "/src/cache.c", 30, "/usr/bin/trainer" },
  { TIDE_FRAME_NATIVE, "c10::alloc_cpu(unsigned long)", NULL, 0, "/usr/lib/libc10.so" },
  { TIDE_FRAME_NATIVE, "operator new(unsigned long)", NULL, 0, "/usr/lib/libstdc++.so.6" },
  { TIDE_FRAME_NATIVE, "malloc", NULL, 0, "/usr/lib/x86_64-linux-gnu/libc.so.6" },
  /* 6..12: the mixed stack, outermost first */
  { TIDE_FRAME_PYTHON, "main", "/work/train.py", 40, NULL },
  { TIDE_FRAME_NATIVE, NULL, NULL, 0, "/usr/bin/python3.11" },
  { TIDE_FRAME_PYTHON, "Block.forward", "/work/train.py", 25, NULL },
  { TIDE_FRAME_NATIVE, "PyNumber_Multiply", NULL, 0, "/usr/bin/python3.11" },
  { TIDE_FRAME_NATIVE, "at::_ops::mul_Tensor::call(at::Tensor const&, at::Tensor const&)", NULL,
    0, "/usr/lib/libtorch_cpu.so" },
  { TIDE_FRAME_NATIVE, "at::empty_cpu(c10::ArrayRef<long>)", NULL, 0, "/usr/lib/libtorch_cpu.so" },
  { TIDE_FRAME_NATIVE, "c10::alloc_cpu(unsigned long)", NULL, 0, "/usr/lib/libc10.so" },
  /* 13..14: plumbing only */
  { TIDE_FRAME_NATIVE, "operator new(unsigned long)", NULL, 0, "/usr/lib/libstdc++.so.6" },
  { TIDE_FRAME_NATIVE, "malloc", NULL, 0, "/usr/lib/x86_64-linux-gnu/libc.so.6" },
};
static const gint64 parents[] = { 0, 1, 2, 3, 4, 0, 6, 7, 8, 9, 10, 11, 0, 13 };

#define GROW_CACHE_OFFSET 0x1001

static void
add_stacks (TideTraceWriter *w)
{
  gint depth = 0;

  for (guint i = 0; i < G_N_ELEMENTS (frames); i++)
    {
      TideFrameRow row = { .id = i + 1, .kind = frames[i].kind, .function = frames[i].function,
                           .file = frames[i].file, .line = frames[i].line,
                           .module = frames[i].module,
                           .module_offset = frames[i].module ? 0x1000 + i : 0 };

      tide_trace_writer_add_frame (w, &row);
      depth = parents[i] == 0 ? 1 : depth + 1;
      tide_trace_writer_add_stack_node (w, i + 1, parents[i], i + 1, depth);
    }
  /* grow_cache (frame 2, offset 0x1001) inlined fill_slot, which inlined
   * push_entry: innermost first by id. */
  {
    TideFrameRow push = { .id = TIDE_INLINE_FRAME_ID_BASE, .kind = TIDE_FRAME_INLINE,
                          .function = "push_entry", .file = "/src/cache.c", .line = 12,
                          .module = "/usr/bin/trainer", .module_offset = GROW_CACHE_OFFSET };
    TideFrameRow fill = { .id = TIDE_INLINE_FRAME_ID_BASE + 1, .kind = TIDE_FRAME_INLINE,
                          .function = "fill_slot", .file = "/src/cache.c", .line = 20,
                          .module = "/usr/bin/trainer", .module_offset = GROW_CACHE_OFFSET };
    /* Same offset, another file: not grow_cache's. */
    TideFrameRow other = { .id = TIDE_INLINE_FRAME_ID_BASE + 2, .kind = TIDE_FRAME_INLINE,
                           .function = "elsewhere", .file = "/src/other.c", .line = 1,
                           .module = "/usr/lib/libother.so", .module_offset = GROW_CACHE_OFFSET };

    /* Inlined into c10::alloc_cpu (frame 12): plumbing by its holder. */
    TideFrameRow junk = { .id = TIDE_INLINE_FRAME_ID_BASE + 3, .kind = TIDE_FRAME_INLINE,
                          .function = "c10::memset_junk(void*, unsigned long)",
                          .module = "/usr/lib/libc10.so", .module_offset = 0x1000 + 11 };

    tide_trace_writer_add_frame (w, &push);
    tide_trace_writer_add_frame (w, &fill);
    tide_trace_writer_add_frame (w, &other);
    tide_trace_writer_add_frame (w, &junk);
  }
}

static void
add_alloc (TideTraceWriter *w,
           gint64           stack_id,
           guint64          size)
{
  TideAllocRow row = { .process_id = 1, .alloc_ns = 10, .address = 0x10000 * stack_id,
                       .size = size, .weight = 1, .stack_id = stack_id, .device = -1,
                       .kind = 1 };

  tide_trace_writer_add_allocation (w, &row);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = NULL;
  TideProcessRow proc = { .id = 1, .pid = 100, .sample_bytes = 0, .all_mode = TRUE,
                          .exe = "/usr/bin/trainer" };

  f->dir = tide_test_make_dir ("tide-headline");
  f->path = g_build_filename (f->dir, "headline.tide", NULL);
  w = tide_trace_writer_new (f->path, &error);
  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_process (w, &proc);
  add_stacks (w);
  add_alloc (w, STACK_NATIVE, NATIVE_BYTES);
  add_alloc (w, STACK_MIXED, MIXED_BYTES);
  add_alloc (w, STACK_PLUMBING, PLUMBING_BYTES);
  g_assert_true (tide_trace_writer_finish (w, &error));
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
}

/* ---- one stack growing in several scopes ---------------------------------- */

enum { SCOPE_A = 1, SCOPE_B, SCOPE_C };
#define SPLIT_STEPS 6
#define STEP_NS     1000000

/* Process 1, with steps: STACK_NATIVE keeps 4096 bytes a step in scope a
 * and 8192 in scope b from step 2 on, and 100000 in scope c once. */
static void
split_fixture_setup (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = NULL;
  TideProcessRow proc = { .id = 1, .pid = 100, .sample_bytes = 0, .all_mode = TRUE,
                          .exe = "/usr/bin/trainer" };
  gint64 address = 0x100000;

  f->dir = tide_test_make_dir ("tide-headline");
  f->path = g_build_filename (f->dir, "split.tide", NULL);
  w = tide_trace_writer_new (f->path, &error);
  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_process (w, &proc);
  add_stacks (w);
  tide_trace_writer_add_scope (w, SCOPE_A, 1, 0, "a", "model.a");
  tide_trace_writer_add_scope (w, SCOPE_B, 1, 0, "b", "model.b");
  tide_trace_writer_add_scope (w, SCOPE_C, 1, 0, "c", "model.c");
  for (gint k = 1; k <= SPLIT_STEPS; k++)
    {
      gint64 start = (k - 1) * (gint64) STEP_NS;
      TideAllocRow row = { .process_id = 1, .weight = 1, .stack_id = STACK_NATIVE,
                           .device = -1, .kind = 1, .alloc_ns = start + 10 };

      tide_trace_writer_add_step (w, k, 1, k, "", start, start + STEP_NS);
      if (k == 1)
        {
          row.address = address++, row.size = 100000, row.scope_id = SCOPE_C;
          tide_trace_writer_add_allocation (w, &row);
          continue;
        }
      row.address = address++, row.size = 4096, row.scope_id = SCOPE_A;
      tide_trace_writer_add_allocation (w, &row);
      row.address = address++, row.size = 8192, row.scope_id = SCOPE_B;
      tide_trace_writer_add_allocation (w, &row);
    }
  g_assert_true (tide_trace_writer_finish (w, &error));
  f->trace = tide_trace_open (f->path, &error);
  g_assert_no_error (error);
}

static void
assert_share (const TideGroup *g,
              guint            i,
              const char      *path,
              gint64           bytes,
              gint64           growth_bytes)
{
  const TideScopeShare *share = &g_array_index (g->scopes, TideScopeShare, i);

  g_assert_cmpstr (share->path, ==, path);
  g_assert_cmpint (share->bytes, ==, bytes);
  g_assert_cmpint (share->growth_bytes, ==, growth_bytes);
}

/* Each scope gets the growth it holds; the shares add up to the stack's. */
static void
test_split_suspects (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(GPtrArray) by_stack = tide_report_suspects (f->trace, TIDE_GROUP_BY_STACK, NULL);
  g_autoptr(GPtrArray) by_scope = tide_report_suspects (f->trace, TIDE_GROUP_BY_SCOPE, NULL);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) csv = g_string_new (NULL);
  g_autoptr(GString) json = g_string_new (NULL);
  TideGroup *g;

  g_assert_cmpuint (by_stack->len, ==, 1);
  g = g_ptr_array_index (by_stack, 0);
  g_assert_cmpint (g->growth_step, ==, 2);
  g_assert_cmpint (g->growth_bytes, ==, 5 * 12288);
  g_assert_cmpuint (g->scopes->len, ==, 3);
  assert_share (g, 0, "model.b", 5 * 8192, 5 * 8192);
  assert_share (g, 1, "model.a", 5 * 4096, 5 * 4096);
  assert_share (g, 2, "model.c", 100000, 0);
  g_assert_cmpfloat (g_array_index (g->scopes, TideScopeShare, 0).bytes_per_step, ==, 8192);

  /* --by scope: the same split, scope by scope (c never grew). */
  g_assert_cmpuint (by_scope->len, ==, 2);
  g = g_ptr_array_index (by_scope, 0);
  g_assert_cmpstr (g->scope_path, ==, "model.b");
  g_assert_cmpfloat (g->bytes_per_step, ==, 8192);
  g = g_ptr_array_index (by_scope, 1);
  g_assert_cmpstr (g->scope_path, ==, "model.a");
  g_assert_cmpfloat (g->bytes_per_step, ==, 4096);
  g_assert_null (g->scopes);

  tide_format_groups (text, by_stack, TIDE_GROUPS_SUSPECTS, TIDE_GROUP_BY_STACK, 0,
                      TIDE_FORMAT_TEXT);
  g_assert_nonnull (strstr (text->str, "\n       in 3 scopes:\n"
                                       "         +8.00 KiB/step model.b\n"
                                       "         +4.00 KiB/step model.a\n"
                                       "         0 B/step model.c\n"));
  tide_format_groups (csv, by_stack, TIDE_GROUPS_SUSPECTS, TIDE_GROUP_BY_STACK, 0,
                      TIDE_FORMAT_CSV);
  g_assert_true (g_str_has_suffix (csv->str, ",model.b=40960;model.a=20480;model.c=0,stack,,,\n"));
  tide_format_groups (json, by_stack, TIDE_GROUPS_SUSPECTS, TIDE_GROUP_BY_STACK, 0,
                      TIDE_FORMAT_JSON);
  g_assert_nonnull (strstr (json->str, ",\"scopes\":[{\"scope\":\"model.b\",\"bytes\":40960,"
                                       "\"growth_bytes\":40960,\"bytes_per_step\":8192},"
                                       "{\"scope\":\"model.a\",\"bytes\":20480,"
                                       "\"growth_bytes\":20480,\"bytes_per_step\":4096},"
                                       "{\"scope\":\"model.c\",\"bytes\":100000,"
                                       "\"growth_bytes\":0,\"bytes_per_step\":0}],"
                                       "\"kind\":\"stack\",\"class\":null,\"name\":null,"
                                       "\"hint\":null}"));
}

static void
test_split_retained (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(GPtrArray) end = tide_report_retained (f->trace, 0, TIDE_GROUP_BY_STACK, NULL);
  g_autoptr(GPtrArray) step3 = tide_report_retained (f->trace, 3, TIDE_GROUP_BY_STACK, NULL);
  TideGroup *g;

  g_assert_cmpuint (end->len, ==, 1);
  g = g_ptr_array_index (end, 0);
  g_assert_cmpint (g->bytes, ==, 100000 + 5 * 12288);
  g_assert_cmpuint (g->scopes->len, ==, 3);
  assert_share (g, 0, "model.c", 100000, 0);
  assert_share (g, 1, "model.b", 5 * 8192, 0);
  assert_share (g, 2, "model.a", 5 * 4096, 0);

  /* What step 3 kept: one block in each growing scope. */
  g_assert_cmpuint (step3->len, ==, 1);
  g = g_ptr_array_index (step3, 0);
  g_assert_cmpint (g->bytes, ==, 12288);
  g_assert_cmpuint (g->scopes->len, ==, 2);
  assert_share (g, 0, "model.b", 8192, 0);
  assert_share (g, 1, "model.a", 4096, 0);
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

static GPtrArray *
stack_frames (Fixture *f,
              gint64   stack_id)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *out = tide_report_frames (f->trace, stack_id, &error);

  g_assert_no_error (error);
  return out;
}

static const TideFrame *
frame_at (GPtrArray *frames_,
          guint      i)
{
  g_assert_cmpuint (i, <, frames_->len);
  return g_ptr_array_index (frames_, i);
}

/* The native stack: inline levels just before their native frame, and a
 * headline that skips malloc, operator new and the c10 allocator. */
static void
test_native_inline (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GPtrArray) s = stack_frames (f, STACK_NATIVE);
  static const char *functions[] = { "malloc", "operator new(unsigned long)",
                                     "c10::alloc_cpu(unsigned long)", "push_entry", "fill_slot",
                                     "grow_cache", "main" };
  static const int kinds[] = { TIDE_FRAME_NATIVE, TIDE_FRAME_NATIVE, TIDE_FRAME_NATIVE,
                               TIDE_FRAME_INLINE, TIDE_FRAME_INLINE, TIDE_FRAME_NATIVE,
                               TIDE_FRAME_NATIVE };
  static const gboolean plumbing[] = { TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE };

  g_assert_cmpuint (s->len, ==, G_N_ELEMENTS (functions));
  for (guint i = 0; i < s->len; i++)
    {
      g_assert_cmpstr (frame_at (s, i)->function, ==, functions[i]);
      g_assert_cmpint (frame_at (s, i)->kind, ==, kinds[i]);
      g_assert_cmpint (frame_at (s, i)->plumbing, ==, plumbing[i]);
    }
  g_assert_cmpint (frame_at (s, 3)->line, ==, 12);
  g_assert_cmpint (frame_at (s, 4)->line, ==, 20);
  g_assert_cmpint (frame_at (s, 5)->line, ==, 30);
  g_assert_cmpint (tide_frames_find_headline (s), ==, 3);
}

static void
test_mixed (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(GPtrArray) s = stack_frames (f, STACK_MIXED);

  g_assert_cmpuint (s->len, ==, 8);
  g_assert_cmpstr (frame_at (s, 5)->function, ==, "Block.forward");
  g_assert_cmpint (tide_frames_find_headline (s), ==, 5);
  /* c10::memset_junk: no pattern names it, its holder c10::alloc_cpu is. */
  g_assert_cmpint (frame_at (s, 0)->kind, ==, TIDE_FRAME_INLINE);
  g_assert_true (frame_at (s, 0)->plumbing);
  g_assert_true (frame_at (s, 1)->plumbing);   /* c10::alloc_cpu */
  g_assert_true (frame_at (s, 2)->plumbing);   /* at::empty_cpu */
  g_assert_false (frame_at (s, 3)->plumbing);  /* at::_ops::mul_Tensor::call */
}

/* Nothing but plumbing: the innermost frame names it, as before. */
static void
test_plumbing_only (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GPtrArray) s = stack_frames (f, STACK_PLUMBING);

  g_assert_cmpuint (s->len, ==, 2);
  g_assert_cmpint (tide_frames_find_headline (s), ==, 0);
}

/* A user pattern: with train.py's frames plumbing too, the mixed stack is
 * named by its innermost named native frame that is not. */
static void
test_user_pattern (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) s = NULL;

  g_assert_false (tide_trace_add_plumbing (f->trace, "file:", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_true (tide_trace_add_plumbing (f->trace, "file:*/train.py", NULL));
  s = stack_frames (f, STACK_MIXED);
  g_assert_cmpint (tide_frames_find_headline (s), ==, 3);
  g_assert_true (tide_trace_add_plumbing (f->trace, "module:libtorch_cpu.so", NULL));
  g_clear_pointer (&s, g_ptr_array_unref);
  s = stack_frames (f, STACK_MIXED);
  g_assert_cmpint (tide_frames_find_headline (s), ==, 4);  /* PyNumber_Multiply */
}

static char *
format_retained (Fixture         *f,
                 TideFormat       format,
                 TideFrameDetail  detail)
{
  g_autoptr(GPtrArray) groups = tide_report_retained (f->trace, 0, TIDE_GROUP_BY_STACK, NULL);
  GString *out = g_string_new (NULL);

  g_assert_nonnull (groups);
  g_assert_cmpuint (groups->len, ==, 3);
  tide_format_groups_detailed (out, groups, TIDE_GROUPS_RETAINED, TIDE_GROUP_BY_STACK, 0,
                               format, detail);
  return g_string_free (out, FALSE);
}

static void
test_text (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *text = format_retained (f, TIDE_FORMAT_TEXT, TIDE_FRAMES_AROUND_HEADLINE);
  g_autofree char *all = format_retained (f, TIDE_FORMAT_TEXT, TIDE_FRAMES_ALL);
  g_autofree char *pad = g_strnfill (52, ' ');
  g_autofree char *expected = g_strdup_printf (
    "Retained by stack, still live when the trace ended: 5.86 KiB in 3 groups\n"
    "            BYTES     COUNT     RESIDENT    SINCE  STACK (named by its headline)\n"
    "  1.     2.93 KiB         1            -        -  cache.c:12 push_entry\n"
    "%1$snative frames around it, innermost first:\n"
    "%1$s  malloc (libc.so.6)\n"
    "%1$s  operator new(unsigned long) (libstdc++.so.6)\n"
    "%1$s  c10::alloc_cpu(unsigned long) (libc10.so)\n"
    "%1$s  (the headline)\n"
    "%1$s  fill_slot (cache.c:20)\n"
    "%1$s  grow_cache (cache.c:30)\n"
    "%1$s(7 frames; --native shows every one)\n"
    "  2.     1.95 KiB         1            -        -  train.py:25 Block.forward\n"
    "%1$sPython, innermost first:\n"
    "%1$s  train.py:25 Block.forward\n"
    "%1$s  train.py:40 main\n"
    "%1$snative frames around it, innermost first:\n"
    "%1$s  at::empty_cpu(c10::ArrayRef<long>) (libtorch_cpu.so)\n"
    "%1$s  at::_ops::mul_Tensor::call(at::Tensor const&, at::Tensor const&) (libtorch_cpu.so)\n"
    "%1$s  PyNumber_Multiply (python3.11)\n"
    "%1$s  (the headline)\n"
    "%1$s(8 frames; --native shows every one)\n"
    "  3.       1000 B         1            -        -  malloc (libc.so.6)\n"
    "%1$snative frames around it, innermost first:\n"
    "%1$s  (the headline)\n"
    "%1$s  operator new(unsigned long) (libstdc++.so.6)\n"
    "%1$s(2 frames; --native shows every one)\n", pad);

  g_assert_cmpstr (text, ==, expected);
  /* --native: every frame, with its kind, plumbing marked. */
  g_assert_nonnull (strstr (all, "\n  1.     2.93 KiB         1            -        -  "
                                 "cache.c:12 push_entry\n"));
  g_assert_nonnull (strstr (all, "inline push_entry (cache.c:12)\n"));
  g_assert_nonnull (strstr (all, "native malloc (libc.so.6)  (plumbing)\n"));
  g_assert_nonnull (strstr (all, "python train.py:25 Block.forward\n"));
  g_assert_nonnull (strstr (all, "native python3.11+0x1006\n"));
}

static void
test_csv (Fixture       *f,
          gconstpointer  data)
{
  g_autofree char *csv = format_retained (f, TIDE_FORMAT_CSV, TIDE_FRAMES_AROUND_HEADLINE);
  g_auto(GStrv) lines = g_strsplit (csv, "\n", -1);

  g_assert_true (g_str_has_suffix (lines[0], ",stack,headline,headline_file,headline_line,scopes"));
  g_assert_true (g_str_has_suffix (lines[1], ",cache.c:12 push_entry,/src/cache.c,12,"
                                             "(no scope)=3000"));
  g_assert_true (g_str_has_suffix (lines[2], ",train.py:25 Block.forward,/work/train.py,25,"
                                             "(no scope)=2000"));
  g_assert_true (g_str_has_suffix (lines[3], ",malloc (libc.so.6),,,(no scope)=1000"));
}

static void
test_json (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *json = format_retained (f, TIDE_FORMAT_JSON, TIDE_FRAMES_AROUND_HEADLINE);

  g_assert_nonnull (strstr (json, "{\"function\":\"push_entry\",\"file\":\"/src/cache.c\","
                                  "\"line\":12,\"module\":\"/usr/bin/trainer\",\"offset\":4097,"
                                  "\"kind\":\"inline\",\"plumbing\":false,\"library\":false}"));
  g_assert_nonnull (strstr (json, "{\"function\":\"malloc\",\"file\":null,\"line\":0,"
                                  "\"module\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\","
                                  "\"offset\":4100,\"kind\":\"native\",\"plumbing\":true,"
                                  "\"library\":false}"));
  g_assert_nonnull (strstr (json, "{\"function\":\"Block.forward\",\"file\":\"/work/train.py\","
                                  "\"line\":25,\"module\":null,\"offset\":0,\"kind\":\"python\","
                                  "\"plumbing\":false,\"library\":false}"));
  g_assert_nonnull (strstr (json, "],\"headline\":{\"text\":\"cache.c:12 push_entry\","
                                  "\"frame\":3,\"kind\":\"inline\",\"function\":\"push_entry\","
                                  "\"file\":\"/src/cache.c\",\"line\":12,\"via_frame\":null},"
                                  "\"scopes\":"));
  g_assert_nonnull (strstr (json, "],\"headline\":{\"text\":\"train.py:25 Block.forward\","
                                  "\"frame\":5,\"kind\":\"python\",\"function\":\"Block.forward\","
                                  "\"file\":\"/work/train.py\",\"line\":25,\"via_frame\":null},"
                                  "\"scopes\":"));
}

/* A package's __init__.py is named with its package: several packages
 * have an __init__.py:277. */
static void
test_package_file (void)
{
  TideFrame init = { .kind = TIDE_FRAME_PYTHON, .function = "backward", .line = 197,
                     .file = "/usr/lib/python3/dist-packages/torch/autograd/__init__.py" };
  TideFrame main_py = { .kind = TIDE_FRAME_PYTHON, .function = "<module>", .line = 3,
                        .file = "/src/tool/__main__.py" };
  TideFrame plain = { .kind = TIDE_FRAME_PYTHON, .function = "Linear.forward", .line = 114,
                      .file = "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py" };
  TideFrame bare = { .kind = TIDE_FRAME_PYTHON, .function = "f", .line = 1,
                     .file = "__init__.py" };
  g_autofree char *a = tide_frame_describe_source_first (&init);
  g_autofree char *b = tide_frame_describe (&init);
  g_autofree char *c = tide_frame_describe_source_first (&main_py);
  g_autofree char *d = tide_frame_describe_source_first (&plain);
  g_autofree char *e = tide_frame_describe_source_first (&bare);

  g_assert_cmpstr (a, ==, "torch/autograd/__init__.py:197 backward");
  g_assert_cmpstr (b, ==, "backward (torch/autograd/__init__.py:197)");
  g_assert_cmpstr (c, ==, "tool/__main__.py:3 <module>");
  g_assert_cmpstr (d, ==, "torch/nn/modules/linear.py:114 Linear.forward");
  g_assert_cmpstr (e, ==, "__init__.py:1 f");
}

static TideFrame *
python_frame (const char *function,
              const char *file,
              int         line)
{
  TideFrame *frame = g_new0 (TideFrame, 1);

  frame->kind = TIDE_FRAME_PYTHON;
  frame->function = g_strdup (function);
  frame->file = g_strdup (file);
  frame->line = line;
  return frame;
}

/* A stack from the interpreter's start-up through Tidemark's sitecustomize
 * is the profiler's; one from the user's script is the user's, though
 * its `import torch` runs through the package's import hook. */
static void
test_tidemark_start (void)
{
  g_autoptr(GPtrArray) ours = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);
  g_autoptr(GPtrArray) users = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);
  g_autoptr(GPtrArray) none = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);

  g_ptr_array_add (ours, python_frame ("<module>", "/usr/lib/python3.11/importlib/abc.py", 19));
  g_ptr_array_add (ours, python_frame ("<module>",
                                       "/opt/tm/capture/python/tidemark/torch_hooks.py", 22));
  g_ptr_array_add (ours, python_frame ("start", "/opt/tm/capture/python/tidemark/_boot.py", 81));
  g_ptr_array_add (ours, python_frame ("<module>", "/opt/tm/capture/python/sitecustomize.py",
                                       40));
  g_ptr_array_add (ours, python_frame ("execsitecustomize", "<frozen site>", 567));
  g_ptr_array_add (users, python_frame ("<module>",
                                        "/usr/lib/python3/dist-packages/torch/__init__.py", 990));
  g_ptr_array_add (users, python_frame ("exec_module",
                                        "/opt/tm/capture/python/tidemark/torch_hooks.py", 285));
  g_ptr_array_add (users, python_frame ("<module>", "/src/train.py", 25));
  g_ptr_array_add (users, python_frame ("_call_with_frames_removed",
                                        "<frozen importlib._bootstrap>", 241));
  g_ptr_array_add (none, python_frame ("execsitecustomize", "<frozen site>", 567));

  g_assert_true (tide_frames_from_tidemark_start (ours));
  g_assert_false (tide_frames_from_tidemark_start (users));
  g_assert_false (tide_frames_from_tidemark_start (none));
  g_assert_false (tide_frames_from_tidemark_start (NULL));
}

/* @g as stack 1, each frame's flags set by @plumbing. */
static TideGroup *
group_with_flags (TideGroup          *g,
                  const TidePlumbing *plumbing)
{
  for (guint i = 0; i < g->frames->len; i++)
    {
      TideFrame *frame = g_ptr_array_index (g->frames, i);

      frame->plumbing = tide_plumbing_matches (plumbing, frame);
      frame->library = tide_plumbing_is_library (plumbing, frame);
    }
  g->stack_id = 1;
  return g;
}

/* The stack of logits that a stock nn.Linear made for a model, innermost
 * first, its flags set by @plumbing. */
static TideGroup *
linear_group (const TidePlumbing *plumbing)
{
  TideGroup *g = g_new0 (TideGroup, 1);
  TideFrame *alloc = g_new0 (TideFrame, 1);

  alloc->kind = TIDE_FRAME_NATIVE;
  alloc->function = g_strdup ("c10::alloc_cpu(unsigned long)");
  alloc->module = g_strdup ("/usr/lib/libc10.so");
  g->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);
  g_ptr_array_add (g->frames, alloc);
  g_ptr_array_add (g->frames, python_frame ("Linear.forward", "/usr/lib/python3/dist-packages/"
                                            "torch/nn/modules/linear.py", 114));
  g_ptr_array_add (g->frames, python_frame ("Module._call_impl", "/usr/lib/python3/dist-packages/"
                                            "torch/nn/modules/module.py", 1194));
  g_ptr_array_add (g->frames, python_frame ("LM.forward", "/home/me/xfmr.py", 19));
  g_ptr_array_add (g->frames, python_frame ("<module>", "/home/me/xfmr.py", 26));
  return group_with_flags (g, plumbing);
}

/* The stack of a module that a user's import ran under Tidemark's own
 * import hook, innermost first, the hook's file at @hook_file. */
static TideGroup *
hooked_import_group (const TidePlumbing *plumbing,
                     const char         *hook_file)
{
  TideGroup *g = g_new0 (TideGroup, 1);

  g->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);
  g_ptr_array_add (g->frames, python_frame ("<module>", "/usr/lib/python3/dist-packages/"
                                            "torch/_meta_registrations.py", 660));
  g_ptr_array_add (g->frames, python_frame ("_LoaderBasics.exec_module",
                                            "<frozen importlib._bootstrap_external>", 940));
  g_ptr_array_add (g->frames, python_frame ("_Loader.exec_module", hook_file, 285));
  g_ptr_array_add (g->frames, python_frame ("<module>", "/home/me/train.py", 3));
  return group_with_flags (g, plumbing);
}

/* Tidemark's own Python frames (its package and the bootstrap that
 * starts it) never name a stack, from the build tree or installed: the
 * user's import does, via the module it ran. */
static void
test_own_package (void)
{
  static const char *const hook_files[] = {
    "/work/tidemark/_build/capture/python/tidemark/torch_hooks.py",
    "/usr/local/share/tidemark/python/tidemark/torch_hooks.py",
    "/work/tidemark/_build/capture/python/sitecustomize.py",
    "/usr/local/share/tidemark/python/sitecustomize.py",
  };
  g_autoptr(TidePlumbing) plumbing = tide_plumbing_new_default ();

  for (guint i = 0; i < G_N_ELEMENTS (hook_files); i++)
    {
      TideGroup *g = hooked_import_group (plumbing, hook_files[i]);
      g_autofree char *via = tide_group_describe_headline_via (g);

      g_assert_true (((TideFrame *) g_ptr_array_index (g->frames, 2))->plumbing);
      g_assert_cmpint (tide_frames_find_headline (g->frames), ==, 3);
      g_assert_cmpstr (via, ==, "train.py:3 <module> (via torch/_meta_registrations.py:660 "
                                "<module>)");
      tide_group_free (g);
    }
}

/* Python's import machinery, frozen into the interpreter, never names a
 * stack: an import that a library ran names it by that library's import
 * line, where no line of the user's own is in the stack (a worker's
 * copy-on-write of code objects was said to come from
 * `<frozen importlib._bootstrap_external>:729 (_compile_bytecode)`). */
static void
test_import_machinery (void)
{
  g_autoptr(TidePlumbing) plumbing = tide_plumbing_new_default ();
  TideGroup *g = g_new0 (TideGroup, 1);
  g_autofree char *headline = NULL;

  g->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) tide_frame_free);
  g_ptr_array_add (g->frames, python_frame ("_compile_bytecode",
                                            "<frozen importlib._bootstrap_external>", 729));
  g_ptr_array_add (g->frames, python_frame ("SourceLoader.get_code",
                                            "<frozen importlib._bootstrap_external>", 1074));
  g_ptr_array_add (g->frames, python_frame ("_call_with_frames_removed",
                                            "<frozen importlib._bootstrap>", 241));
  g_ptr_array_add (g->frames, python_frame ("<module>", "/usr/lib/python3/dist-packages/"
                                            "torch/nn/__init__.py", 1));
  group_with_flags (g, plumbing);
  g_assert_cmpint (tide_frames_find_headline (g->frames), ==, 3);
  headline = tide_group_describe_headline (g);
  g_assert_cmpstr (headline, ==, "torch/nn/__init__.py:1 <module>");
  tide_group_free (g);
}

/* Library code: the standard library, installed packages, frozen modules;
 * the user's own files are not, wherever they are. */
static void
test_library_paths (void)
{
  g_autoptr(TidePlumbing) plumbing = tide_plumbing_new_default ();
  static const struct { const char *file; gboolean library; const char *name; } cases[] = {
    { "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", TRUE,
      "torch/nn/modules/linear.py" },
    { "/home/me/venv/lib/python3.11/site-packages/transformers/modeling_utils.py", TRUE,
      "transformers/modeling_utils.py" },
    { "/usr/lib/python3.11/threading.py", TRUE, "threading.py" },
    { "/usr/lib/python3.11/json/decoder.py", TRUE, "json/decoder.py" },
    { "<frozen importlib._bootstrap>", TRUE, "<frozen importlib._bootstrap>" },
    { "/home/me/xfmr.py", FALSE, "xfmr.py" },
    { "/home/me/libpython/model.py", FALSE, "model.py" },
    { "/home/me/lib/python-tools/model.py", FALSE, "model.py" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      TideFrame frame = { .kind = TIDE_FRAME_PYTHON, .function = "f",
                          .file = (char *) cases[i].file, .line = 1 };
      TideFrame native = { .kind = TIDE_FRAME_NATIVE, .function = "f",
                           .file = (char *) cases[i].file, .line = 1 };
      g_autofree char *name = tide_frame_file_name (cases[i].file);

      g_assert_cmpint (tide_plumbing_is_library (plumbing, &frame), ==, cases[i].library);
      g_assert_false (tide_plumbing_is_library (plumbing, &native));
      g_assert_cmpstr (name, ==, cases[i].name);
    }
}

/* A stack through a stock layer is named by the user's line, via the
 * layer's; claimed as one's own, the layer's line names it again. */
static void
test_library_headline (void)
{
  g_autoptr(TidePlumbing) plumbing = tide_plumbing_new_default ();
  g_autoptr(TidePlumbing) torch_dev = tide_plumbing_new_default ();
  g_autoptr(TidePlumbing) vendored = tide_plumbing_new_default ();
  TideGroup *g = linear_group (plumbing);
  TideGroup *own = NULL;
  TideGroup *more = NULL;
  g_autofree char *headline = NULL;
  g_autofree char *via = NULL;
  g_autofree char *own_via = NULL;
  g_autofree char *more_via = NULL;

  g_assert_cmpint (tide_frames_find_headline (g->frames), ==, 3);
  g_assert_cmpint (tide_frames_find_via (g->frames, 3), ==, 1);
  headline = tide_group_describe_headline (g);
  via = tide_group_describe_headline_via (g);
  g_assert_cmpstr (headline, ==, "xfmr.py:19 LM.forward");
  g_assert_cmpstr (via, ==, "xfmr.py:19 LM.forward (via torch/nn/modules/linear.py:114 "
                            "Linear.forward)");

  tide_plumbing_add_own (torch_dev, "*/torch/nn/*");
  own = linear_group (torch_dev);
  g_assert_cmpint (tide_frames_find_headline (own->frames), ==, 1);
  g_assert_cmpint (tide_frames_find_via (own->frames, 1), ==, -1);
  own_via = tide_group_describe_headline_via (own);
  g_assert_cmpstr (own_via, ==, "torch/nn/modules/linear.py:114 Linear.forward");

  /* Only library frames: the innermost one, named with its package. */
  g_ptr_array_set_size (g->frames, 3);
  g_assert_cmpint (tide_frames_find_headline (g->frames), ==, 1);
  g_assert_cmpint (tide_frames_find_via (g->frames, 1), ==, -1);

  /* A vendored copy of a library, marked as one. */
  tide_plumbing_add_library (vendored, "/home/me/*");
  more = linear_group (vendored);
  g_assert_cmpint (tide_frames_find_headline (more->frames), ==, 1);
  more_via = tide_group_describe_headline_via (more);
  g_assert_cmpstr (more_via, ==, "torch/nn/modules/linear.py:114 Linear.forward");

  tide_group_free (g);
  tide_group_free (own);
  tide_group_free (more);
}

/* Two folders' model.py, a package's module.py installed twice, and a
 * name no other file shares. */
static void
test_file_names_unique (void)
{
  g_autoptr(GPtrArray) paths = g_ptr_array_new ();
  g_autoptr(GHashTable) names = NULL;

  g_ptr_array_add (paths, "/a/x/model.py");
  g_ptr_array_add (paths, "/b/y/model.py");
  g_ptr_array_add (paths, "/c/train.py");
  g_ptr_array_add (paths, "/usr/lib/python3/dist-packages/torch/nn/modules/module.py");
  g_ptr_array_add (paths, "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py");
  g_ptr_array_add (paths, "/a/p/__init__.py");
  g_ptr_array_add (paths, "/b/p/__init__.py");
  g_ptr_array_add (paths, "/x/model.py");
  names = tide_file_names_new (paths);
  g_assert_cmpstr (g_hash_table_lookup (names, "/a/x/model.py"), ==, "a/x/model.py");
  g_assert_cmpstr (g_hash_table_lookup (names, "/x/model.py"), ==, "/x/model.py");
  g_assert_cmpstr (g_hash_table_lookup (names, "/b/y/model.py"), ==, "y/model.py");
  g_assert_null (g_hash_table_lookup (names, "/c/train.py"));
  g_assert_cmpstr (g_hash_table_lookup (names, "/usr/lib/python3/dist-packages/torch/nn/modules/"
                                               "module.py"),
                   ==, "dist-packages/torch/nn/modules/module.py");
  g_assert_cmpstr (g_hash_table_lookup (names, "/venv/lib/python3.11/site-packages/torch/nn/"
                                               "modules/module.py"),
                   ==, "site-packages/torch/nn/modules/module.py");
  g_assert_cmpstr (g_hash_table_lookup (names, "/a/p/__init__.py"), ==, "a/p/__init__.py");
  g_assert_cmpstr (g_hash_table_lookup (names, "/b/p/__init__.py"), ==, "b/p/__init__.py");
}

/* A trace whose two model.py files are told apart wherever a frame is
 * named. */
static void
test_file_names_in_trace (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-headline");
  g_autofree char *path = g_build_filename (dir, "two-models.tide", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTraceWriter) w = tide_trace_writer_new (path, &error);
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GPtrArray) first = NULL;
  g_autoptr(GPtrArray) second = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  TideProcessRow proc = { .id = 1, .pid = 100, .all_mode = TRUE, .exe = "/usr/bin/python3" };
  TideFrameRow fa = { .id = 1, .kind = TIDE_FRAME_PYTHON, .function = "A.forward",
                      .file = "/work/vision/model.py", .line = 3 };
  TideFrameRow fb = { .id = 2, .kind = TIDE_FRAME_PYTHON, .function = "B.forward",
                      .file = "/work/text/model.py", .line = 4 };

  g_assert_no_error (error);
  tide_trace_writer_set_meta_int (w, "start_ns", 0);
  tide_trace_writer_add_process (w, &proc);
  tide_trace_writer_add_frame (w, &fa);
  tide_trace_writer_add_frame (w, &fb);
  tide_trace_writer_add_stack_node (w, 1, 0, 1, 1);
  tide_trace_writer_add_stack_node (w, 2, 0, 2, 1);
  g_assert_true (tide_trace_writer_finish (w, &error));
  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  first = tide_report_frames (trace, 1, &error);
  g_assert_no_error (error);
  second = tide_report_frames (trace, 2, &error);
  g_assert_no_error (error);
  a = tide_frame_describe_source_first (g_ptr_array_index (first, 0));
  b = tide_frame_describe (g_ptr_array_index (second, 0));
  g_assert_cmpstr (a, ==, "vision/model.py:3 A.forward");
  g_assert_cmpstr (b, ==, "B.forward (text/model.py:4)");
  g_clear_object (&trace);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/storage/headline/package-file", test_package_file);
  g_test_add_func ("/storage/headline/library-paths", test_library_paths);
  g_test_add_func ("/storage/headline/library", test_library_headline);
  g_test_add_func ("/storage/headline/own-package", test_own_package);
  g_test_add_func ("/storage/headline/import-machinery", test_import_machinery);
  g_test_add_func ("/storage/headline/file-names-unique", test_file_names_unique);
  g_test_add_func ("/storage/headline/tidemark-start", test_tidemark_start);
  g_test_add_func ("/storage/headline/file-names-in-trace", test_file_names_in_trace);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/storage/headline/native-inline", test_native_inline);
  ADD ("/storage/headline/mixed", test_mixed);
  ADD ("/storage/headline/plumbing-only", test_plumbing_only);
  ADD ("/storage/headline/user-pattern", test_user_pattern);
  ADD ("/storage/headline/text", test_text);
  ADD ("/storage/headline/csv", test_csv);
  ADD ("/storage/headline/json", test_json);
  g_test_add ("/storage/scope-split/suspects", Fixture, NULL, split_fixture_setup,
              test_split_suspects, fixture_teardown);
  g_test_add ("/storage/scope-split/retained", Fixture, NULL, split_fixture_setup,
              test_split_retained, fixture_teardown);
  return g_test_run ();
}
