/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TidePymallocFree: what pymalloc's arenas hold that no live object uses,
 * from the records of objects and arenas.
 */
#include "config.h"

#include "tide-pymalloc-free.h"
#include "tide-wire.h"

#define MIB (G_GINT64_CONSTANT (1048576))

/* An object takes its whole size class: 16-byte steps on 64-bit builds. */
static void
test_size_class (void)
{
  g_assert_cmpuint (tide_pymalloc_size_class (1), ==, 16);
  g_assert_cmpuint (tide_pymalloc_size_class (16), ==, 16);
  g_assert_cmpuint (tide_pymalloc_size_class (33), ==, 48);
  g_assert_cmpuint (tide_pymalloc_size_class (48), ==, 48);
  g_assert_cmpuint (tide_pymalloc_size_class (497), ==, 512);
}

/* One arena of 1 MiB with 1,000 objects of 33 bytes (48 each) and 10
 * objects sampled as 100 each of 100 bytes (112 each). */
static void
test_arena_less_objects (void)
{
  TidePymallocFree f = { 0 };
  gint64 free_bytes = -1;

  tide_pymalloc_free_add_unhooked (&f, 0);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYARENA, MIB, 1);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYOBJECT, 33, 1000);
  for (guint i = 0; i < 10; i++)
    tide_pymalloc_free_account (&f, TIDE_KIND_PYOBJECT, 100, 100);
  g_assert_true (tide_pymalloc_free_get (&f, &free_bytes));
  g_assert_cmpint (free_bytes, ==, MIB - 1000 * 48 - 10 * 100 * 112);

  /* Freeing half the 33-byte objects frees their classes' bytes. */
  tide_pymalloc_free_account (&f, TIDE_KIND_PYOBJECT, 33, -500);
  g_assert_true (tide_pymalloc_free_get (&f, &free_bytes));
  g_assert_cmpint (free_bytes, ==, MIB - 500 * 48 - 10 * 100 * 112);
}

/* Objects of more than 512 bytes, of 0 bytes, and malloc blocks come from
 * malloc; arena allocator blocks under 256 KiB are frame stack chunks. */
static void
test_what_is_not_pymalloc (void)
{
  TidePymallocFree f = { 0 };
  gint64 free_bytes = -1;

  tide_pymalloc_free_add_unhooked (&f, 0);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYARENA, 16 * 1024, 1);
  g_assert_false (tide_pymalloc_free_get (&f, &free_bytes));
  tide_pymalloc_free_account (&f, TIDE_KIND_PYARENA, 256 * 1024, 1);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYOBJECT, 512, 1);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYOBJECT, 513, 1);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYOBJECT, 0, 1);
  tide_pymalloc_free_account (&f, TIDE_KIND_MALLOC, 64, 1);
  tide_pymalloc_free_account (&f, TIDE_KIND_MMAP, MIB, 1);
  g_assert_true (tide_pymalloc_free_get (&f, &free_bytes));
  g_assert_cmpint (free_bytes, ==, 256 * 1024 - 512);
}

/* What was in use before the hooks counts as used; an arena freed leaves
 * nothing, and an estimate above the arenas is no free memory. */
static void
test_unhooked_and_limits (void)
{
  TidePymallocFree f = { 0 };
  gint64 free_bytes = -1;

  tide_pymalloc_free_account (&f, TIDE_KIND_PYARENA, MIB, 2);
  tide_pymalloc_free_add_unhooked (&f, 1701872);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYOBJECT, 64, 100);
  g_assert_true (tide_pymalloc_free_get (&f, &free_bytes));
  g_assert_cmpint (free_bytes, ==, 2 * MIB - 1701872 - 6400);

  tide_pymalloc_free_account (&f, TIDE_KIND_PYARENA, MIB, -1);
  g_assert_true (tide_pymalloc_free_get (&f, &free_bytes));
  g_assert_cmpint (free_bytes, ==, 0);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYARENA, MIB, -1);
  g_assert_false (tide_pymalloc_free_get (&f, &free_bytes));
}

/* Arenas whose objects are not recorded (tracemalloc's interpreter, the
 * debug hooks): the preload sent no bytes in use, and there is no figure. */
static void
test_not_hooked (void)
{
  TidePymallocFree f = { 0 };
  gint64 free_bytes = -1;

  tide_pymalloc_free_account (&f, TIDE_KIND_PYARENA, MIB, 4);
  tide_pymalloc_free_account (&f, TIDE_KIND_PYOBJECT, 64, 100);
  g_assert_false (tide_pymalloc_free_get (&f, &free_bytes));
  g_assert_cmpint (free_bytes, ==, -1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pymalloc-free/size-class", test_size_class);
  g_test_add_func ("/pymalloc-free/arena-less-objects", test_arena_less_objects);
  g_test_add_func ("/pymalloc-free/not-pymalloc", test_what_is_not_pymalloc);
  g_test_add_func ("/pymalloc-free/unhooked-and-limits", test_unhooked_and_limits);
  g_test_add_func ("/pymalloc-free/not-hooked", test_not_hooked);
  return g_test_run ();
}
