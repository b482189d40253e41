/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-preload-own.c: the preload's own mappings, whose resident pages the
 * recorder names as tidemark's own memory in the process.
 */
#include "config.h"

#include "tide-preload-raw.h"

#include <glib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 64

/* A mapping counts the pages written, and nothing once unmapped. */
static void
test_resident (void)
{
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guint64 before = tide_own_resident_bytes ();
  char *p = tide_raw_mmap (PAGES * page);

  g_assert_nonnull (p);
  g_assert_cmpuint (tide_own_resident_bytes (), ==, before);
  for (guint i = 0; i < 5; i++)
    p[i * 7 * page] = 1;
  g_assert_cmpuint (tide_own_resident_bytes (), ==, before + 5 * page);
  tide_raw_munmap (p, PAGES * page);
  g_assert_cmpuint (tide_own_resident_bytes (), ==, before);
}

/* More mappings than the table holds: the rest are not counted, and the
 * table's slots come back as mappings go. */
static void
test_full_table (void)
{
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guint64 before = tide_own_resident_bytes ();
  char *maps[TIDE_OWN_MAX_MAPPINGS + 44];

  for (guint i = 0; i < G_N_ELEMENTS (maps); i++)
    {
      maps[i] = tide_raw_mmap (page);
      g_assert_nonnull (maps[i]);
      maps[i][0] = 1;
    }
  g_assert_cmpuint (before, ==, 0);
  g_assert_cmpuint (tide_own_resident_bytes (), ==, TIDE_OWN_MAX_MAPPINGS * page);
  for (guint i = 0; i < G_N_ELEMENTS (maps); i++)
    tide_raw_munmap (maps[i], page);
  g_assert_cmpuint (tide_own_resident_bytes (), ==, before);
  maps[0] = tide_raw_mmap (page);
  maps[0][0] = 1;
  g_assert_cmpuint (tide_own_resident_bytes (), ==, before + page);
  tide_raw_munmap (maps[0], page);
}

/* Mappings that touch are counted together; one of them unmapped
 * behind the table's back (a program's munmap of a range it does not
 * own) leaves the others' pages counted, each on its own. */
static void
test_gone_between (void)
{
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guint64 before = tide_own_resident_bytes ();
  char *p = mmap (NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  g_assert_true (p != MAP_FAILED);
  for (guint i = 0; i < 3; i++)
    {
      tide_own_note_mapped (p + i * page, page);
      p[i * page] = 1;
    }
  g_assert_cmpuint (tide_own_resident_bytes (), ==, before + 3 * page);
  g_assert_cmpint (munmap (p + page, page), ==, 0);
  g_assert_cmpuint (tide_own_resident_bytes (), ==, before + 2 * page);
  for (guint i = 0; i < 3; i++)
    tide_own_note_unmapped (p + i * page);
  munmap (p, page);
  munmap (p + 2 * page, page);
  g_assert_cmpuint (tide_own_resident_bytes (), ==, before);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/preload-own/resident", test_resident);
  g_test_add_func ("/preload-own/full-table", test_full_table);
  g_test_add_func ("/preload-own/gone-between", test_gone_between);
  return g_test_run ();
}
