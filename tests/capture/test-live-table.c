/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideLiveTable: allocations and frees matched whatever order their records
 * arrive in, as they do when threads flush their buffers independently.
 */
#include "config.h"

#include "tide-live-table.h"

static TideLiveAlloc
block (guint64 addr,
       gint64  alloc_ns,
       gint64  stack_id)
{
  return (TideLiveAlloc) { .addr = addr, .size = 64, .weight = 1, .alloc_ns = alloc_ns,
                           .stack_id = stack_id, .device = -1, .kind = 1 };
}

static void
test_in_order (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc a = block (0x1000, 10, 1), out;
  gint64 free_ns;

  g_assert_false (tide_live_table_alloc (table, &a, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 1);
  g_assert_true (tide_live_table_release (table, 0x1000, 20, &out));
  g_assert_cmpint (out.alloc_ns, ==, 10);
  g_assert_cmpint (out.stack_id, ==, 1);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
}

/* Thread B frees a block before the recorder hears thread A allocate it. */
static void
test_free_arrives_first (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc a = block (0x2000, 10, 7), out;
  gint64 free_ns = 0;

  g_assert_false (tide_live_table_release (table, 0x2000, 30, &out));
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 1);
  g_assert_true (tide_live_table_alloc (table, &a, &free_ns));
  g_assert_cmpint (free_ns, ==, 30);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 0);
}

/* A allocates X, B frees X, A allocates X again; the records arrive as
 * alloc(10), alloc(40), free(20): the free ends the first block. */
static void
test_address_reused_before_free_arrives (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc first = block (0x3000, 10, 1), second = block (0x3000, 40, 2), out;
  gint64 free_ns;

  g_assert_false (tide_live_table_alloc (table, &first, &free_ns));
  g_assert_false (tide_live_table_alloc (table, &second, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 2);
  g_assert_true (tide_live_table_release (table, 0x3000, 20, &out));
  g_assert_cmpint (out.stack_id, ==, 1);
  g_assert_true (tide_live_table_release (table, 0x3000, 50, &out));
  g_assert_cmpint (out.stack_id, ==, 2);
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 0);
}

/* A free that never finds its allocation (unrecorded block) expires. */
static void
test_orphans_expire (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc late = block (0x4000, 5, 1), out;
  gint64 free_ns;

  tide_live_table_release (table, 0x4000, 100, &out);
  tide_live_table_release (table, 0x5000, 300, &out);
  tide_live_table_expire_orphans (table, 200);
  g_assert_cmpuint (tide_live_table_get_n_orphans (table), ==, 1);
  /* The expired free no longer ends a block of that address. */
  g_assert_false (tide_live_table_alloc (table, &late, &free_ns));
  g_assert_cmpuint (tide_live_table_get_size (table), ==, 1);
}

static void
count_live (const TideLiveAlloc *alloc,
            gint64               free_ns,
            gpointer             user_data)
{
  gint64 *bounds = user_data;

  bounds[0]++;
  bounds[1] += free_ns;
}

/* At the end, an older block whose free never came is bounded by the newer
 * block that took its address. */
static void
test_foreach_bounds (void)
{
  g_autoptr(TideLiveTable) table = tide_live_table_new ();
  TideLiveAlloc first = block (0x6000, 10, 1), second = block (0x6000, 40, 2);
  gint64 free_ns, seen[2] = { 0, 0 };

  tide_live_table_alloc (table, &first, &free_ns);
  tide_live_table_alloc (table, &second, &free_ns);
  tide_live_table_foreach (table, count_live, seen);
  g_assert_cmpint (seen[0], ==, 2);
  g_assert_cmpint (seen[1], ==, 40);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/live-table/in-order", test_in_order);
  g_test_add_func ("/live-table/free-arrives-first", test_free_arrives_first);
  g_test_add_func ("/live-table/address-reused", test_address_reused_before_free_arrives);
  g_test_add_func ("/live-table/orphans-expire", test_orphans_expire);
  g_test_add_func ("/live-table/foreach-bounds", test_foreach_bounds);
  return g_test_run ();
}
