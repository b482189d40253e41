/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * An allocator's free memory is in RSS only on the pages it has touched:
 * `report --rss` counts its change on present pages, end to end through
 * `tidemark record --sync-steps` on tests/targets/untouched-free; and a
 * fork's child that frees what it inherited adds to its allocator's free
 * memory what no heap record of its own held (tests/targets/inherited-free);
 * and a child that marks no steps gives its allocator's figure as of the
 * readings at its parent's step ends (tests/targets/toggled-free).
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

/* Records tests/targets/@name with --sync-steps, which must print
 * "done", and returns `report --rss` of its trace in CSV. */
static char *
record_rss_csv (const char *name)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-free");
  g_autofree char *path = g_build_filename (dir, "free.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, name, NULL);
  const char *record[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o",
                           path, "--", target, NULL };
  const char *report[] = { TIDE_TIDEMARK_EXE, "report", path, "--rss", "--format", "csv", NULL };
  g_autofree char *out = tide_test_spawn_ok (record);
  char *csv = tide_test_spawn_ok (report);

  g_assert_cmpstr (out, ==, "done\n");
  tide_test_remove_dir (dir);
  return csv;
}

/* The anonymous part of row @row's private change: code run for the first
 * time reads its file's pages, private where no other process maps the
 * file (the preload), as many as the page cache and the layout make. */
static gint64
anon_private_delta (const char *csv,
                    guint       row)
{
  return csv_bytes (csv, row, "base_delta_bytes") - csv_bytes (csv, row, "file_bytes") -
         csv_bytes (csv, row, "sharing_bytes");
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
  g_autofree char *csv = record_rss_csv ("untouched-free");
  g_autofree char *label = tide_test_csv_cell (csv, 3, "label");

  g_assert_cmpstr (label, ==, "write");
  /* The pages that libc and the preload touch on the way: a few dozen KiB. */
  tide_test_assert_within (csv_bytes (csv, 2, "alloc_free_bytes"), 512 * KIB, 256 * KIB);
  tide_test_assert_within (anon_private_delta (csv, 2), 512 * KIB, 256 * KIB);
  tide_test_assert_within (csv_bytes (csv, 2, "unexplained_bytes"), 0, 128 * KIB);
  tide_test_assert_within (csv_bytes (csv, 3, "alloc_free_bytes"), 15 * MIB / 2, 256 * KIB);
  tide_test_assert_within (anon_private_delta (csv, 3), 15 * MIB / 2, 256 * KIB);
  tide_test_assert_within (csv_bytes (csv, 3, "unexplained_bytes"), 0, 128 * KIB);
}

/* The CSV's row for the step labelled @label of the process that marked
 * it (@stepper), or of the other one: there must be one. */
static guint
csv_row_of (const char *csv,
            const char *label,
            gboolean    stepper)
{
  g_auto(GStrv) lines = g_strsplit (csv, "\n", -1);

  for (guint row = 1; lines[row] != NULL && lines[row][0] != '\0'; row++)
    {
      g_autofree char *cell = tide_test_csv_cell (csv, row, "label");
      g_autofree char *pid = tide_test_csv_cell (csv, row, "pid");
      g_autofree char *steps_pid = tide_test_csv_cell (csv, row, "steps_pid");

      if (g_str_equal (cell, label) && g_str_equal (pid, steps_pid) == stepper)
        return row;
    }
  g_error ("no row labelled %s in:\n%s", label, csv);
}

/* The child frees 96 inherited blocks of 96 KiB: its allocator holds 9 MiB
 * more free, on pages it still shares but for those the frees wrote, and
 * no block of its own was freed.  Each block was recorded by its parent
 * (at least the sampling mean: weight 1), so the term is exact.  Before
 * it, the step read "allocator free +9 MiB, unexplained -9 MiB". */
static void
test_inherited_free (void)
{
  g_autofree char *csv = record_rss_csv ("inherited-free");
  guint row = csv_row_of (csv, "free", TRUE);
  g_autofree char *base = tide_test_csv_cell (csv, row, "base");

  g_assert_cmpstr (base, ==, "uss");
  g_assert_cmpint (csv_bytes (csv, row, "inherited_freed_bytes"), ==, -96 * 96 * KIB);
  tide_test_assert_within (csv_bytes (csv, row, "alloc_free_bytes"), 96 * 96 * KIB, 256 * KIB);
  tide_test_assert_within (csv_bytes (csv, row, "heap_bytes"), 0, 64 * KIB);
  tide_test_assert_within (csv_bytes (csv, row, "unexplained_bytes"), 0, 128 * KIB);
  /* The pages the frees wrote, about one a block, and nothing more. */
  tide_test_assert_within (csv_bytes (csv, row, "cow_bytes"), 96 * 4 * KIB, 256 * KIB);

  /* The parent marks no steps: its rows are its child's steps.  Its 9 MiB
   * were allocated before the fork and freed after the child exited, and
   * its flusher sent them only then, alloc and free together: the heap
   * that the recorder polls never held them, and its first row read
   * "unexplained +9.11 MiB".  Its heap at each step end comes from the
   * blocks' own times: 9 MiB at the first, no change at the second.
   * On a loaded machine 1 run in 3 read "allocator free +129.78 KiB,
   * tidemark's own +88 KiB, unexplained -221.78 KiB" at the second, terms
   * that do not involve the heap; the bound leaves room for them. */
  row = csv_row_of (csv, "baseline", FALSE);
  if (csv_bytes (csv, row, "pending") == 0)
    {
      tide_test_assert_within (csv_bytes (csv, row, "heap_bytes"), 96 * 96 * KIB, 64 * KIB);
      tide_test_assert_within (csv_bytes (csv, row, "unexplained_bytes"), 0, 512 * KIB);
      row = csv_row_of (csv, "free", FALSE);
      tide_test_assert_within (csv_bytes (csv, row, "heap_bytes"), 0, 64 * KIB);
    }
  else
    {
      /* Its private memory was not read at the first step's end (the
       * recorder's budget, on a loaded machine): the second explains both. */
      row = csv_row_of (csv, "free", FALSE);
      g_assert_cmpint (csv_bytes (csv, row, "first_step"), ==, 1);
      tide_test_assert_within (csv_bytes (csv, row, "heap_bytes"), 96 * 96 * KIB, 64 * KIB);
    }
  tide_test_assert_within (csv_bytes (csv, row, "unexplained_bytes"), 0, 512 * KIB);
}

/* A fork's child that marks no steps moves 4 MiB between its heap and its
 * allocator's free memory between each two of its parent's step ends
 * (tests/targets/toggled-free).  Its allocator's figure, which only it can
 * give, was the one its flusher sent last, up to 100 ms before the
 * reading: "heap -132 KiB" for -3.75 MiB, no allocator term.  The recorder
 * asks it for the figure as of each reading now. */
static void
test_toggled_free (void)
{
  g_autofree char *csv = record_rss_csv ("toggled-free");
  g_auto(GStrv) lines = g_strsplit (csv, "\n", -1);
  guint read = 0;

  for (guint row = 1; lines[row] != NULL && lines[row][0] != '\0'; row++)
    {
      g_autofree char *label = tide_test_csv_cell (csv, row, "label");
      g_autofree char *pid = tide_test_csv_cell (csv, row, "pid");
      g_autofree char *steps_pid = tide_test_csv_cell (csv, row, "steps_pid");
      gint64 step = csv_bytes (csv, row, "step");
      gboolean taken = g_str_equal (label, "taken");

      /* The child's rows from step 3, each a step of its own. */
      if (g_str_equal (pid, steps_pid) || step < 3 || csv_bytes (csv, row, "pending") != 0 ||
          csv_bytes (csv, row, "first_step") != step)
        continue;
      read++;
      tide_test_assert_within (csv_bytes (csv, row, "heap_bytes"),
                               (taken ? 4 * MIB : -4 * MIB) + 256 * KIB, 64 * KIB);
      if (taken)
        g_assert_cmpint (csv_bytes (csv, row, "alloc_free_bytes"), <=, -3 * MIB);
      else
        g_assert_cmpint (csv_bytes (csv, row, "alloc_free_bytes"), >=, 3 * MIB);
      tide_test_assert_within (csv_bytes (csv, row, "unexplained_bytes"), 0, 64 * KIB);
    }
  g_assert_cmpuint (read, >=, 4);
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
  g_test_add_func ("/rss-free/inherited", test_inherited_free);
  g_test_add_func ("/rss-free/toggled", test_toggled_free);
  return g_test_run ();
}
