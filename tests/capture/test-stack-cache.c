/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideStackCache: raw stacks to stack ids, valid for one generation.
 */
#include "config.h"

#include "tide-stack-cache.h"

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

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stack-cache/hit-and-miss", test_hit_and_miss);
  g_test_add_func ("/stack-cache/new-generation-forgets", test_new_generation_forgets);
  g_test_add_func ("/stack-cache/bounded", test_bounded);
  return g_test_run ();
}
