/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideStackCache: raw stacks to stack ids, valid for one generation.
 */
#include "config.h"

#include "tide-stack-cache.h"
#include "tide-stack-table.h"
#include "tide-test-util.h"
#include "tide-wire.h"

#include <glib/gstdio.h>

static void
test_hit_and_miss (void)
{
  g_autoptr(TideStackCache) cache = tide_stack_cache_new ();
  const guint64 stack[] = { 0x401010, 0x402020, 0x7f0000001000 };
  const guint64 swapped[] = { 0x402020, 0x401010, 0x7f0000001000 };

  g_assert_cmpint (tide_stack_cache_lookup (cache, 1, stack, 3), ==, 0);
  tide_stack_cache_insert (cache, 1, stack, 3, 42);
  g_assert_cmpint (tide_stack_cache_lookup (cache, 1, stack, 3), ==, 42);
  g_assert_cmpint (tide_stack_cache_lookup (cache, 1, stack, 2), ==, 0);
  g_assert_cmpint (tide_stack_cache_lookup (cache, 1, stack + 1, 2), ==, 0);
  g_assert_cmpint (tide_stack_cache_lookup (cache, 1, swapped, 3), ==, 0);
  g_assert_cmpuint (tide_stack_cache_get_size (cache), ==, 1);
}

/* A dlopen (or a new Python code object) moves the generation on: ids
 * interned before may mean something else now. */
static void
test_new_generation_forgets (void)
{
  g_autoptr(TideStackCache) cache = tide_stack_cache_new ();
  const guint64 stack[] = { 0x401010, 0x402020 };

  tide_stack_cache_insert (cache, 1, stack, 2, 7);
  g_assert_cmpint (tide_stack_cache_lookup (cache, 2, stack, 2), ==, 0);
  g_assert_cmpuint (tide_stack_cache_get_size (cache), ==, 0);
  tide_stack_cache_insert (cache, 2, stack, 2, 9);
  g_assert_cmpint (tide_stack_cache_lookup (cache, 2, stack, 2), ==, 9);
  /* An insert in a newer generation also forgets the older entries. */
  tide_stack_cache_insert (cache, 3, stack, 1, 11);
  g_assert_cmpint (tide_stack_cache_lookup (cache, 3, stack, 2), ==, 0);
  g_assert_cmpint (tide_stack_cache_lookup (cache, 3, stack, 1), ==, 11);
}

/* Past its bound the cache starts over: it may forget, never answer wrong. */
static void
test_bounded (void)
{
  g_autoptr(TideStackCache) cache = tide_stack_cache_new ();
  const guint n = 300000;
  guint hits = 0;

  for (guint i = 0; i < n; i++)
    {
      guint64 stack[] = { 0x400000 + i * 16, 0x500000 };
      tide_stack_cache_insert (cache, 1, stack, 2, i + 1);
    }
  g_assert_cmpuint (tide_stack_cache_get_size (cache), <, 1u << 17);
  g_assert_cmpuint (tide_stack_cache_get_size (cache), >, 0);
  for (guint i = 0; i < n; i++)
    {
      guint64 stack[] = { 0x400000 + i * 16, 0x500000 };
      gint64 id = tide_stack_cache_lookup (cache, 1, stack, 2);

      if (id != 0)
        {
          g_assert_cmpint (id, ==, i + 1);
          hits++;
        }
    }
  g_assert_cmpuint (hits, ==, tide_stack_cache_get_size (cache));
  /* The latest are the ones kept. */
  {
    guint64 last[] = { 0x400000 + (guint64) (n - 1) * 16, 0x500000 };
    g_assert_cmpint (tide_stack_cache_lookup (cache, 1, last, 2), ==, n);
  }
}

/* Stacks interned along the last one's path get the ids that interning
 * them whole gives them, and the path holds their frame ids: consecutive
 * stacks of a process share their callers, which are then not looked up
 * again.  The same stack again is the same id. */
static void
test_path_reuses_callers (void)
{
  const guint64 main_pc = 0x401010, run = 0x402020, step = 0x403030, leaf = 0x404040;
  const guint64 py = TIDE_WIRE_PYFRAME_BIT | 7;
  const guint64 first[] = { leaf, step, run, main_pc };
  const guint64 sibling[] = { leaf + 8, step, run, main_pc };
  const guint64 deeper[] = { leaf, py, step, run, main_pc };
  const guint64 *stacks[] = { first, sibling, deeper, first };
  const guint n_frames[] = { 4, 4, 5, 4 }, shared[] = { 0, 3, 2, 2 };
  g_autofree char *dir = tide_test_make_dir ("tide-path");
  g_autofree char *walked_path = g_build_filename (dir, "walked.trace", NULL);
  g_autofree char *along_path = g_build_filename (dir, "along.trace", NULL);
  TideTraceWriter *walked_writer = tide_trace_writer_new (walked_path, NULL);
  TideTraceWriter *along_writer = tide_trace_writer_new (along_path, NULL);
  TideStackTable *walked = tide_stack_table_new (walked_writer, NULL);
  TideStackTable *along = tide_stack_table_new (along_writer, NULL);
  TideAddressSpace *space = tide_address_space_new ();
  g_autoptr(GArray) path = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 ids[G_N_ELEMENTS (stacks)];

  tide_address_space_add (space, 0x400000, 0x410000, 0x400000, "/usr/bin/trainer");
  for (guint i = 0; i < G_N_ELEMENTS (stacks); i++)
    {
      gint64 expected = tide_stack_table_intern_mixed (walked, space, NULL, stacks[i], n_frames[i]);
      gint64 id = tide_stack_table_intern_path (along, space, NULL, stacks[i], n_frames[i],
                                                shared[i], path);

      g_assert_cmpint (id, ==, expected);
      g_assert_cmpuint (path->len, ==, n_frames[i]);
      ids[i] = id;
    }
  g_assert_cmpint (ids[0], ==, 1);
  g_assert_cmpint (ids[1], ==, 2);
  g_assert_cmpint (ids[2], ==, 3);
  g_assert_cmpint (ids[3], ==, ids[0]);
  /* The frames main, run, step and leaf, outermost first. */
  for (guint k = 0; k < 4; k++)
    g_assert_cmpint (g_array_index (path, gint64, k), ==, k + 1);
  g_assert_cmpuint (tide_stack_table_get_n_frames (along), ==, 5);

  tide_stack_table_free (walked);
  tide_stack_table_free (along);
  tide_address_space_free (space);
  g_assert_true (tide_trace_writer_finish (walked_writer, NULL));
  g_assert_true (tide_trace_writer_finish (along_writer, NULL));
  tide_trace_writer_free (walked_writer);
  tide_trace_writer_free (along_writer);
  g_unlink (walked_path);
  g_unlink (along_path);
  g_rmdir (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stack-cache/hit-and-miss", test_hit_and_miss);
  g_test_add_func ("/stack-cache/new-generation-forgets", test_new_generation_forgets);
  g_test_add_func ("/stack-cache/bounded", test_bounded);
  g_test_add_func ("/stack-cache/path-reuses-callers", test_path_reuses_callers);
  return g_test_run ();
}
