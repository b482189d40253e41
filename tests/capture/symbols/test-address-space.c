/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-address-space.h"

#include <string.h>

static void
assert_resolves (TideAddressSpace *space,
                 guint64           pc,
                 const char       *path,
                 guint64           bias)
{
  const char *got_path = NULL;
  guint64 got_bias = 0;

  g_assert_true (tide_address_space_resolve (space, pc, &got_path, &got_bias));
  g_assert_cmpstr (got_path, ==, path);
  g_assert_cmphex (got_bias, ==, bias);
}

static void
assert_unmapped (TideAddressSpace *space,
                 guint64           pc)
{
  const char *path = "untouched";

  g_assert_false (tide_address_space_resolve (space, pc, &path, NULL));
  g_assert_cmpstr (path, ==, "untouched");
}

static void
test_basic (void)
{
  g_autoptr (TideAddressSpace) space = tide_address_space_new ();

  assert_unmapped (space, 0x1000);
  /* Added out of order; segments of one library share its bias. */
  tide_address_space_add (space, 0x7000, 0x8000, 0x6000, "/lib/libb.so");
  tide_address_space_add (space, 0x1000, 0x2000, 0x0, "/bin/app");
  tide_address_space_add (space, 0x5000, 0x6000, 0x4000, "/lib/liba.so");
  tide_address_space_add (space, 0x6000, 0x7000, 0x4000, "/lib/liba.so");
  g_assert_cmpuint (tide_address_space_get_n_entries (space), ==, 4);

  assert_unmapped (space, 0xfff);
  assert_resolves (space, 0x1000, "/bin/app", 0x0);
  assert_resolves (space, 0x1fff, "/bin/app", 0x0);
  assert_unmapped (space, 0x2000);
  assert_unmapped (space, 0x4fff);
  assert_resolves (space, 0x5000, "/lib/liba.so", 0x4000);
  assert_resolves (space, 0x6fff, "/lib/liba.so", 0x4000);
  assert_resolves (space, 0x7000, "/lib/libb.so", 0x6000);
  assert_unmapped (space, 0x8000);
  assert_unmapped (space, G_MAXUINT64);
}

static void
test_remove (void)
{
  g_autoptr (TideAddressSpace) space = tide_address_space_new ();
  const char *kept = NULL;

  tide_address_space_add (space, 0x1000, 0x9000, 0x1000, "/lib/big.so");
  g_assert_true (tide_address_space_resolve (space, 0x1000, &kept, NULL));

  /* A hole in the middle splits the entry; both halves keep the bias. */
  tide_address_space_remove (space, 0x4000, 0x5000);
  g_assert_cmpuint (tide_address_space_get_n_entries (space), ==, 2);
  assert_resolves (space, 0x3fff, "/lib/big.so", 0x1000);
  assert_unmapped (space, 0x4000);
  assert_unmapped (space, 0x4fff);
  assert_resolves (space, 0x5000, "/lib/big.so", 0x1000);

  /* Trimming across both halves' edges. */
  tide_address_space_remove (space, 0x3000, 0x6000);
  assert_resolves (space, 0x2fff, "/lib/big.so", 0x1000);
  assert_unmapped (space, 0x3000);
  assert_unmapped (space, 0x5fff);
  assert_resolves (space, 0x6000, "/lib/big.so", 0x1000);

  /* Removing everything, and removing nothing. */
  tide_address_space_remove (space, 0x0, 0x10000);
  g_assert_cmpuint (tide_address_space_get_n_entries (space), ==, 0);
  tide_address_space_remove (space, 0x0, 0x10000);
  assert_unmapped (space, 0x1000);

  /* Interned paths outlive their entries. */
  g_assert_cmpstr (kept, ==, "/lib/big.so");
}

/* The stack cache relies on it: any change moves the generation, and a
 * remove that touches nothing does not. */
static void
test_generation (void)
{
  g_autoptr (TideAddressSpace) space = tide_address_space_new ();
  guint64 g0 = tide_address_space_get_generation (space), g1, g2;

  tide_address_space_add (space, 0x1000, 0x9000, 0x1000, "/lib/big.so");
  g1 = tide_address_space_get_generation (space);
  g_assert_cmpuint (g1, !=, g0);
  tide_address_space_remove (space, 0x20000, 0x30000);
  g_assert_cmpuint (tide_address_space_get_generation (space), ==, g1);
  tide_address_space_remove (space, 0x8000, 0x10000);
  g2 = tide_address_space_get_generation (space);
  g_assert_cmpuint (g2, !=, g1);
  tide_address_space_remove (space, 0x2000, 0x3000);
  g_assert_cmpuint (tide_address_space_get_generation (space), !=, g2);
}

static void
test_replace (void)
{
  g_autoptr (TideAddressSpace) space = tide_address_space_new ();

  tide_address_space_add (space, 0x1000, 0x3000, 0x0, "/lib/a.so");
  tide_address_space_add (space, 0x3000, 0x5000, 0x0, "/lib/b.so");
  /* MAP_FIXED over the boundary replaces parts of both. */
  tide_address_space_add (space, 0x2000, 0x4000, 0x2000, "/lib/c.so");
  g_assert_cmpuint (tide_address_space_get_n_entries (space), ==, 3);
  assert_resolves (space, 0x1fff, "/lib/a.so", 0x0);
  assert_resolves (space, 0x2000, "/lib/c.so", 0x2000);
  assert_resolves (space, 0x3fff, "/lib/c.so", 0x2000);
  assert_resolves (space, 0x4000, "/lib/b.so", 0x0);

  /* Empty ranges are ignored. */
  tide_address_space_add (space, 0x9000, 0x9000, 0x0, "/lib/empty.so");
  g_assert_cmpuint (tide_address_space_get_n_entries (space), ==, 3);
}

/* Many entries against a linear scan of the same model. */
static void
test_many (void)
{
  g_autoptr (TideAddressSpace) space = tide_address_space_new ();
  GRand *rand = g_rand_new_with_seed (42);
  char model[4096] = { 0 };  /* page index → 1 + library number, or 0 */

  for (guint i = 0; i < 2000; i++)
    {
      guint start = g_rand_int_range (rand, 0, 4000);
      guint len = g_rand_int_range (rand, 1, 64);
      guint end = MIN (start + len, 4096);
      guint lib = g_rand_int_range (rand, 0, 8);
      g_autofree char *path = g_strdup_printf ("/lib/l%u.so", lib);

      if (g_rand_boolean (rand))
        {
          tide_address_space_add (space, start * 0x1000, end * 0x1000, lib, path);
          memset (model + start, lib + 1, end - start);
        }
      else
        {
          tide_address_space_remove (space, start * 0x1000, end * 0x1000);
          memset (model + start, 0, end - start);
        }
    }
  for (guint page = 0; page < 4096; page++)
    {
      if (model[page] == 0)
        {
          assert_unmapped (space, page * 0x1000 + 0x800);
        }
      else
        {
          g_autofree char *path = g_strdup_printf ("/lib/l%d.so", model[page] - 1);

          assert_resolves (space, page * 0x1000 + 0x800, path, model[page] - 1);
        }
    }
  g_rand_free (rand);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/address-space/basic", test_basic);
  g_test_add_func ("/address-space/remove", test_remove);
  g_test_add_func ("/address-space/generation", test_generation);
  g_test_add_func ("/address-space/replace", test_replace);
  g_test_add_func ("/address-space/many", test_many);

  return g_test_run ();
}
