/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * An allocator's free memory is in RSS only on the pages it has touched:
 * `report --rss` counts its change on present pages, end to end through
 * `tidemark record --sync-steps` on tests/targets/untouched-free.
 */
#include "config.h"

#include "tide-test-util.h"

#define KIB G_GINT64_CONSTANT (1024)
#define MIB G_GINT64_CONSTANT (1048576)

/* Column @column of the CSV's row @row, as a number. */
static gint64
csv_bytes (const char *csv,
           guint       row,
           const char *column)
{
  g_autofree char *cell = tide_test_csv_cell (csv, row, column);

  return g_ascii_strtoll (cell, NULL, 10);
}

/* Step 2 takes 8 MiB from the system in 64 KiB blocks and frees them
 * untouched but for their headers' pages (one in 16: 512 KiB), step 3
 * writes them whole and frees them again.  glibc counts 8 MiB more free
 * in step 2 and none in step 3; what is resident of it grows by 512 KiB,
 * then by the other 7.5 MiB, and that is the allocator's term, with
 * nothing unexplained.  Counting the free bytes alone made step 2
 * "allocator free +8 MiB, unexplained -7.5 MiB" and step 3 "unexplained
 * +7.5 MiB". */
static void
test_untouched_free (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-free");
  g_autofree char *path = g_build_filename (dir, "free.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "untouched-free", NULL);
  const char *record[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o",
                           path, "--", target, NULL };
  const char *report[] = { TIDE_TIDEMARK_EXE, "report", path, "--rss", "--format", "csv", NULL };
  g_autofree char *out = tide_test_spawn_ok (record);
  g_autofree char *csv = tide_test_spawn_ok (report);
  g_autofree char *label = tide_test_csv_cell (csv, 3, "label");

  g_assert_cmpstr (out, ==, "done\n");
  g_assert_cmpstr (label, ==, "write");
  /* The pages that libc and the preload touch on the way: a few dozen KiB. */
  tide_test_assert_within (csv_bytes (csv, 2, "alloc_free_bytes"), 512 * KIB, 256 * KIB);
  tide_test_assert_within (csv_bytes (csv, 2, "base_delta_bytes"), 512 * KIB, 256 * KIB);
  tide_test_assert_within (csv_bytes (csv, 2, "unexplained_bytes"), 0, 128 * KIB);
  tide_test_assert_within (csv_bytes (csv, 3, "alloc_free_bytes"), 15 * MIB / 2, 256 * KIB);
  tide_test_assert_within (csv_bytes (csv, 3, "base_delta_bytes"), 15 * MIB / 2, 256 * KIB);
  tide_test_assert_within (csv_bytes (csv, 3, "unexplained_bytes"), 0, 128 * KIB);
  tide_test_remove_dir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* meson test sets MALLOC_PERTURB_, with which glibc fills each block it
   * hands out and each it takes back: every page touched. */
  g_unsetenv ("MALLOC_PERTURB_");
  g_test_add_func ("/rss-free/untouched", test_untouched_free);
  return g_test_run ();
}
