/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark diff` from the command line, on recordings of
 * tests/targets/leaky-steps, whose values are known exactly with --all:
 *
 *   leaky     leak_feature_cache keeps 1,572,864 bytes in each step from 4,
 *             leak_big_tensor 4,194,304 from 5; step 6 adds an 8 MiB spike
 *             that step 7 frees; stdout's buffer (4,096 bytes) at the end;
 *   fixed     (--fixed) frees both leaks' blocks at the end of each step:
 *             from step 2 on the heap changes only by the spike.
 *
 * Two sampled recordings of leaky show no difference beyond noise; an
 * unrelated program (churn-control) is compared all the same, with a note.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

#include "tide-test-util.h"

#define FEATURE_STEP   1572864
#define LEAKY_STEPS_C  "tests/targets/leaky-steps.c"
#define BIG_TENSOR     4194304
#define SPIKE          8388608

static char *dir;
static char *leaky;           /* --all */
static char *fixed;           /* --all --fixed */
static char *sampled[2];      /* leaky, sampled, twice */
static char *unrelated;       /* churn-control */
static char *two_ranks;       /* a synthetic 2-rank job */

typedef struct
{
  char *out;
  char *err;
  int   status;
} Run;

static void
run_clear (Run *run)
{
  g_free (run->out);
  g_free (run->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

/* `tidemark diff ARGS...` */
static void
diff (Run                *run,
      const char * const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (argv, (char *) TIDE_TIDEMARK_EXE);
  g_ptr_array_add (argv, (char *) "diff");
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &run->out,
                &run->err, &run->status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (run->status));
  run->status = WEXITSTATUS (run->status);
}

/* A diff that must succeed quietly; returns stdout. */
static char *
diff_ok (const char * const *args)
{
  g_auto(Run) run = { 0 };

  diff (&run, args);
  g_assert_cmpstr (run.err, ==, "");
  g_assert_cmpint (run.status, ==, 0);
  return g_steal_pointer (&run.out);
}

static void
assert_contains (const char *haystack,
                 const char *needle)
{
  if (strstr (haystack, needle) == NULL)
    g_error ("expected «%s» in:\n%s", needle, haystack);
}

static void
assert_cell_int (const char *csv,
                 guint       row,
                 const char *column,
                 gint64      expected)
{
  g_autofree char *cell = tide_test_csv_cell (csv, row, column);
  g_autofree char *want = g_strdup_printf ("%" G_GINT64_FORMAT, expected);

  if (!g_str_equal (cell, want))
    g_error ("row %u, %s: %s, expected %s", row, column, cell, want);
}

/* ---- the fix: leaky, then fixed --------------------------------------------------- */

/* The heap's change in step @k of leaky-steps, leaky or fixed. */
static gint64
heap_change (gint     k,
             gboolean is_fixed)
{
  gint64 change = 0;

  if (!is_fixed)
    change += (k >= 4 ? FEATURE_STEP : 0) + (k >= 5 ? BIG_TENSOR : 0);
  return change + (k == 6 ? SPIKE : 0) - (k == 7 ? SPIKE : 0);
}

static void
test_fixed_steps (void)
{
  g_autofree char *csv = diff_ok ((const char *[]) { leaky, fixed, "--format", "csv", NULL });
  g_autofree char *json = diff_ok ((const char *[]) { leaky, fixed, "--format", "json",
                                                      "--steps", NULL });

  for (gint k = 1; k <= 10; k++)
    {
      gint64 before = heap_change (k, FALSE), after = heap_change (k, TRUE);
      gint64 kept = k == 6 ? SPIKE : 0;

      assert_cell_int (csv, k, "step_before", k);
      assert_cell_int (csv, k, "step_after", k);
      assert_cell_int (csv, k, "heap_change_before", before);
      assert_cell_int (csv, k, "heap_change_after", after);
      assert_cell_int (csv, k, "heap_change_diff", after - before);
      assert_cell_int (csv, k, "retained_before", heap_change (k, FALSE) + (k == 7 ? SPIKE : 0));
      assert_cell_int (csv, k, "retained_after", kept);
      assert_cell_int (csv, k, "device_change_diff", 0);
    }
  assert_contains (json, "{\"step_before\":7,\"step_after\":7,\"label\":\"\",");
  assert_contains (json, ",\"heap_change\":{\"before\":-2621440,\"after\":-8388608,"
                         "\"diff\":-5767168},");
  assert_contains (json, ",\"retained\":{\"before\":5767168,\"after\":0,\"diff\":-5767168}}");
  assert_contains (json, "\"aligned_by\":\"number\",");
}

static void
test_fixed_suspects (void)
{
  int big_line = tide_test_source_line (LEAKY_STEPS_C, "malloc (BIG_TENSOR_SIZE)");
  int feature_line = tide_test_source_line (LEAKY_STEPS_C, "malloc (FEATURE_BLOCK_SIZE)");
  g_autofree char *text = diff_ok ((const char *[]) { leaky, fixed, NULL });
  g_autofree char *csv = diff_ok ((const char *[]) { leaky, fixed, "--suspects", "--format", "csv",
                                                     NULL });
  g_autofree char *big = g_strdup_printf ("\n  gone      +4.00 MiB/step from step 5 -> none  "
                                          "leaky-steps.c:%d leak_big_tensor\n", big_line);
  g_autofree char *feature = g_strdup_printf ("\n  gone      +1.50 MiB/step from step 4 -> none  "
                                              "leaky-steps.c:%d leak_feature_cache\n",
                                              feature_line);
  g_autofree char *big_csv = g_strdup_printf ("gone,none,leaky-steps.c:%d leak_big_tensor,,-1,"
                                              "5,,4194304,,25165824,\n", big_line);
  g_autofree char *feature_csv = g_strdup_printf ("gone,none,leaky-steps.c:%d leak_feature_cache"
                                                  ",,-1,4,,1572864,,11010048,\n", feature_line);

  assert_contains (text, "\nSuspects: 2 gone, 0 new, 0 changed, 0 unchanged\n");
  assert_contains (text, big);
  assert_contains (text, feature);
  /* Steps 4 to 10: 7 heap changes and 7 retained; the two leaks live at
   * the end; the two suspects gone. */
  assert_contains (text, "\n18 differences beyond sampling noise.\n");
  g_assert_true (g_str_has_prefix (text, "BEFORE "));
  assert_contains (text, ": leaky-steps (pid ");
  assert_contains (text, "), 10 steps, every allocation\nAFTER  ");
  assert_contains (text, ": leaky-steps --fixed (pid ");

  g_assert_true (g_str_has_prefix (csv, "change,matched_by,headline,scope,device,"));
  assert_contains (csv, big_csv);
  assert_contains (csv, feature_csv);
}

static void
test_fixed_retained (void)
{
  int big_line = tide_test_source_line (LEAKY_STEPS_C, "malloc (BIG_TENSOR_SIZE)");
  g_autofree char *csv = diff_ok ((const char *[]) { leaky, fixed, "--retained", "--format", "csv",
                                                     NULL });
  g_autofree char *json = diff_ok ((const char *[]) { leaky, fixed, "--retained", "--format",
                                                      "json", NULL });
  g_autofree char *text = diff_ok ((const char *[]) { leaky, fixed, "--retained", NULL });
  g_autofree char *big = g_strdup_printf ("{\"name\":\"leaky-steps.c:%d leak_big_tensor\","
                                          "\"bytes_before\":25165824,\"bytes_after\":0,"
                                          "\"bytes_diff\":-25165824,\"count_before\":6,"
                                          "\"count_after\":0,\"beyond_noise\":true}", big_line);

  g_assert_true (g_str_has_prefix (csv, "stack,bytes_before,bytes_after,bytes_diff,count_before,"
                                        "count_after,beyond_noise\n"));
  assert_contains (csv, ",25165824,0,-25165824,6,0,1\n");
  assert_contains (csv, ",11010048,0,-11010048,672,0,1\n");
  /* Every allocation recorded: no noise, and what did not change is
   * marked as within it. */
  assert_contains (csv, ",4096,4096,0,1,1,0\n");
  assert_contains (json, big);
  assert_contains (text, "\n     24.00 MiB            0 B     -24.00 MiB  leaky-steps.c:");
  assert_contains (text, "\n      4.00 KiB       4.00 KiB            0 B  ");
  assert_contains (text, "  (within noise)\n");
}

/* leaky-steps opens no scope: by scope, one row holds all. */
static void
test_fixed_retained_by_scope (void)
{
  g_autofree char *csv = diff_ok ((const char *[]) { leaky, fixed, "--retained", "--by", "scope",
                                                     "--format", "csv", NULL });

  g_assert_cmpstr (csv, ==, "scope,bytes_before,bytes_after,bytes_diff,count_before,count_after,"
                            "beyond_noise\n"
                            "(no scope),36179968,4096,-36175872,679,1,1\n");
}

/* ---- CI gates on new suspects ------------------------------------------------------ */

static void
test_fail_on_new_suspects (void)
{
  g_auto(Run) reverse = { 0 };
  g_auto(Run) reverse_plain = { 0 };
  g_auto(Run) forward = { 0 };

  diff (&reverse, (const char *[]) { fixed, leaky, "--fail-on-new-suspects", "--suspects", NULL });
  g_assert_cmpint (reverse.status, ==, 3);
  assert_contains (reverse.out, "\nSuspects: 0 gone, 2 new, 0 changed, 0 unchanged\n");
  g_assert_cmpstr (reverse.err, ==, "");

  diff (&reverse_plain, (const char *[]) { fixed, leaky, "--suspects", NULL });
  g_assert_cmpint (reverse_plain.status, ==, 0);

  diff (&forward, (const char *[]) { leaky, fixed, "--fail-on-new-suspects", NULL });
  g_assert_cmpint (forward.status, ==, 0);
}

/* ---- the same program twice, sampled -------------------------------------------------- */

static void
test_same_program_twice (void)
{
  g_autofree char *text = diff_ok ((const char *[]) { sampled[0], sampled[1], NULL });
  g_autofree char *json = diff_ok ((const char *[]) { sampled[0], sampled[1], "--format", "json",
                                                      NULL });

  assert_contains (text, "\nSuspects: 0 gone, 0 new, 0 changed, 2 unchanged\n");
  assert_contains (text, "sampled every 65536 bytes on average");
  g_assert_true (g_str_has_suffix (text, "\nNo difference beyond sampling noise.\n"));
  assert_contains (json, "\"same_program\":true,\"aligned_by\":\"number\","
                         "\"differences_beyond_noise\":0,\"suspects_gone\":0,"
                         "\"suspects_new\":0,\"suspects_changed\":0,");
  /* The 4 MiB blocks are at least the mean: recorded exactly in both. */
  assert_contains (json, "\"bytes_per_step\":4194304,\"growth_bytes\":25165824,");
}

/* ---- what the issue calls bad input --------------------------------------------------- */

static void
test_unrelated_programs (void)
{
  g_auto(Run) run = { 0 };

  diff (&run, (const char *[]) { leaky, unrelated, "--format", "json", NULL });
  g_assert_cmpint (run.status, ==, 0);
  assert_contains (run.err, "tidemark: note: ");
  assert_contains (run.err, " record different programs; their steps are compared by number "
                            "all the same\n");
  assert_contains (run.out, "\"same_program\":false,");
  assert_contains (run.out, "\"suspects_gone\":2,");
}

static void
test_usage_errors (void)
{
  g_auto(Run) one = { 0 };
  g_auto(Run) xml = { 0 };
  g_auto(Run) csv_two = { 0 };
  g_auto(Run) bad_process = { 0 };
  g_auto(Run) missing = { 0 };

  diff (&one, (const char *[]) { leaky, NULL });
  g_assert_cmpint (one.status, ==, 2);
  g_assert_cmpstr (one.err, ==, "tidemark: diff needs two trace files: BEFORE AFTER\n");
  diff (&xml, (const char *[]) { leaky, fixed, "--format", "xml", NULL });
  g_assert_cmpint (xml.status, ==, 2);
  g_assert_cmpstr (xml.err, ==, "tidemark: unknown format 'xml' (text, csv or json)\n");
  diff (&csv_two, (const char *[]) { leaky, fixed, "--format", "csv", "--steps", "--suspects",
                                     NULL });
  g_assert_cmpint (csv_two.status, ==, 2);
  g_assert_cmpstr (csv_two.err, ==, "tidemark: csv takes one of --steps, --suspects and "
                                    "--retained at a time\n");
  diff (&bad_process, (const char *[]) { leaky, fixed, "--process", "x,y,z", NULL });
  g_assert_cmpint (bad_process.status, ==, 2);
  g_assert_cmpstr (bad_process.err, ==, "tidemark: --process takes a pid or rank:N, or two "
                                        "separated by a comma, not 'x,y,z'\n");
  diff (&missing, (const char *[]) { leaky, fixed, "--rank", "1", NULL });
  g_assert_cmpint (missing.status, ==, 2);
  assert_contains (missing.err, " has no process with rank 1\n");
  g_assert_cmpuint (strchr (missing.err, '\n') - missing.err + 1, ==, strlen (missing.err));
}

/* ---- jobs with several processes ---------------------------------------------------- */

static void
test_rank (void)
{
  g_autofree char *rank1 = diff_ok ((const char *[]) { two_ranks, two_ranks, "--rank", "1",
                                                       "--format", "json", "--suspects", NULL });
  g_autofree char *rank0 = diff_ok ((const char *[]) { two_ranks, two_ranks, "--process",
                                                       "rank:0", "--format", "json", "--suspects",
                                                       NULL });
  g_autofree char *pair = diff_ok ((const char *[]) { two_ranks, two_ranks, "--process",
                                                      "rank:1,rank:0", "--format", "json",
                                                      "--suspects", NULL });

  assert_contains (rank1, "\"pid\":501,\"role\":\"rank 1\",\"dist_rank\":1,");
  assert_contains (rank1, "\"suspects_gone\":0,\"suspects_new\":0,\"suspects_changed\":0,");
  assert_contains (rank1, "{\"change\":\"unchanged\",\"matched_by\":\"stack\",");
  assert_contains (rank0, "\"pid\":500,\"role\":\"rank 0\",\"dist_rank\":0,");
  assert_contains (rank0, "\"suspects\":[]");
  /* Rank 1 leaks, rank 0 does not: the leak is gone. */
  assert_contains (pair, "{\"before\":{\"path\":");
  assert_contains (pair, "\"pid\":501,\"role\":\"rank 1\"");
  assert_contains (pair, "\"pid\":500,\"role\":\"rank 0\"");
  assert_contains (pair, "\"suspects_gone\":1,\"suspects_new\":0,");
}

/* `tidemark record -q [@mode] -o DIR/@name -- TARGET [@option]` */
/* `tidemark export LEAKY --compare FIXED --csv` writes the rows of `tidemark
 * diff LEAKY FIXED --steps --format csv`, byte for byte: the comparison
 * that the app's Comparison as CSV writes. */
static void
test_export_compare_csv (void)
{
  g_autofree char *path = g_build_filename (dir, "comparison.csv", NULL);
  const char *export_argv[] = { TIDE_TIDEMARK_EXE, "export", leaky, "--compare", fixed,
                                "--csv", path, NULL };
  g_autofree char *expected = diff_ok ((const char *[]) { leaky, fixed, "--steps", "--format",
                                                          "csv", NULL });
  g_autofree char *csv = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) export_argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                &err, &status, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (err, ==, "");
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_true (g_file_get_contents (path, &csv, NULL, &error));
  g_assert_cmpstr (csv, ==, expected);
  for (gint k = 1; k <= 10; k++)
    assert_cell_int (csv, k, "heap_change_diff", heap_change (k, TRUE) - heap_change (k, FALSE));
  g_assert_cmpint (g_unlink (path), ==, 0);
}

static char *
record (const char *name,
        const char *mode,
        const char *target,
        const char *option)
{
  g_autofree char *exe = g_build_filename (TIDE_TARGETS_DIR, target, NULL);
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_ptr_array_add (argv, (char *) TIDE_TIDEMARK_EXE);
  g_ptr_array_add (argv, (char *) "record");
  g_ptr_array_add (argv, (char *) "--force");
  g_ptr_array_add (argv, (char *) "-q");
  if (mode != NULL)
    g_ptr_array_add (argv, (char *) mode);
  g_ptr_array_add (argv, (char *) "-o");
  g_ptr_array_add (argv, path);
  g_ptr_array_add (argv, (char *) "--");
  g_ptr_array_add (argv, exe);
  if (option != NULL)
    g_ptr_array_add (argv, (char *) option);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  return path;
}

int
main (int    argc,
      char **argv)
{
  int result;

  g_test_init (&argc, &argv, NULL);
  dir = tide_test_make_dir ("tide-diff");
  leaky = record ("leaky.tide", "--all", "leaky-steps", NULL);
  fixed = record ("fixed.tide", "--all", "leaky-steps", "--fixed");
  sampled[0] = record ("sampled-1.tide", NULL, "leaky-steps", NULL);
  sampled[1] = record ("sampled-2.tide", NULL, "leaky-steps", NULL);
  unrelated = record ("unrelated.tide", "--all", "churn-control", NULL);
  two_ranks = g_build_filename (dir, "two-ranks.tide", NULL);
  tide_test_write_two_ranks (two_ranks);

  g_test_add_func ("/diff/fixed/steps", test_fixed_steps);
  g_test_add_func ("/diff/fixed/suspects", test_fixed_suspects);
  g_test_add_func ("/diff/fixed/retained", test_fixed_retained);
  g_test_add_func ("/diff/fixed/retained-by-scope", test_fixed_retained_by_scope);
  g_test_add_func ("/diff/fail-on-new-suspects", test_fail_on_new_suspects);
  g_test_add_func ("/diff/same-program-twice", test_same_program_twice);
  g_test_add_func ("/diff/unrelated-programs", test_unrelated_programs);
  g_test_add_func ("/diff/usage-errors", test_usage_errors);
  g_test_add_func ("/diff/rank", test_rank);
  g_test_add_func ("/diff/export-compare-csv", test_export_compare_csv);
  result = g_test_run ();
  tide_test_remove_dir (dir);
  return result;
}
