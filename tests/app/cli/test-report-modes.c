/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Every `tidemark report` mode in each of its formats, from the command
 * line, on one recording of tests/targets/leaky-steps with --all, whose
 * values are known exactly:
 *
 *   leak_big_tensor     one 4 MiB block kept in each step from 5 to 10:
 *                       6 blocks, 25,165,824 bytes live at the end;
 *   leak_feature_cache  96 blocks of 16 KiB kept in each step from 4 to 10:
 *                       672 blocks, 11,010,048 bytes;
 *   stdout's buffer     one block of 4,096 bytes, made by the last printf;
 *   step 7              keeps one of each leak (5,767,168 bytes in 97
 *                       blocks) and frees step 6's 8 MiB spike: 18,874,368
 *                       bytes of heap live at its end.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "tide-test-util.h"

#define BIG_TENSOR      4194304
#define FEATURE_STEP    1572864
#define LEAKY_STEPS_C   "tests/targets/leaky-steps.c"

static char *trace_dir;
static char *trace_path;

/* `tidemark report TRACE ARGS...`, which must succeed and say nothing on
 * stderr; returns stdout. */
static char *
report (const char * const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  char *out = NULL;
  int status = 0;

  g_ptr_array_add (argv, (char *) TIDE_TIDEMARK_EXE);
  g_ptr_array_add (argv, (char *) "report");
  g_ptr_array_add (argv, trace_path);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                &status, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (err, ==, "");
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  return out;
}

static void
assert_cell (const char *csv,
             guint       row,
             const char *column,
             const char *expected)
{
  g_autofree char *cell = tide_test_csv_cell (csv, row, column);

  g_assert_cmpstr (cell, ==, expected);
}

static guint
csv_rows (const char *csv)
{
  g_auto(GStrv) lines = g_strsplit (csv, "\n", -1);
  guint n = 0;

  for (guint i = 1; lines[i] != NULL; i++)
    n += lines[i][0] != '\0';
  return n;
}

static void
assert_contains (const char *haystack,
                 const char *needle)
{
  if (strstr (haystack, needle) == NULL)
    g_error ("expected «%s» in:\n%s", needle, haystack);
}

/* ---- --steps ----------------------------------------------------------------- */

static void
test_steps (void)
{
  g_autofree char *text = report ((const char *[]) { "--steps", NULL });
  g_autofree char *csv = report ((const char *[]) { "--steps", "--format", "csv", NULL });
  g_autofree char *json = report ((const char *[]) { "--steps", "--format", "json", NULL });

  g_assert_cmpuint (csv_rows (csv), ==, 10);
  assert_cell (csv, 7, "step", "7");
  assert_cell (csv, 7, "role", "leaky-steps");
  assert_cell (csv, 7, "heap_live_end_bytes", "18874368");
  assert_cell (csv, 7, "retained_bytes", "5767168");
  assert_cell (csv, 7, "retained_count", "97");
  assert_cell (csv, 3, "retained_bytes", "0");
  assert_cell (csv, 4, "retained_bytes", "1572864");
  assert_cell (csv, 4, "retained_count", "96");

  assert_contains (json, ",\"step\":7,\"label\":\"\",");
  assert_contains (json, ",\"heap_live_end_bytes\":18874368,\"heap_delta_bytes\":-2621440,");
  assert_contains (json, ",\"retained_bytes\":5767168,\"retained_count\":97,");

  g_assert_true (g_str_has_prefix (text, "Steps of leaky-steps (pid "));
  /* A start or duration past a second is said in seconds (a slow build).
   * RSS is read when the recorder takes the step's marker, while the target
   * runs on: its change in one step can be anything, "0 B" included. */
  g_assert_true (g_regex_match_simple ("\n +7 +leaky-steps \\(pid [0-9]+\\) +[0-9.]+ m?s +"
                                       "[0-9.]+ m?s +[0-9.]+ [KMG]?i?B +([-+][0-9.]+ [KMG]?i?B|0 B) +"
                                       "18\\.00 MiB +-2\\.50 MiB +5\\.50 MiB ", text, 0, 0));
}

/* ---- --suspects ---------------------------------------------------------------- */

static void
test_suspects (void)
{
  int big_line = tide_test_source_line (LEAKY_STEPS_C, "malloc (BIG_TENSOR_SIZE)");
  int feature_line = tide_test_source_line (LEAKY_STEPS_C, "malloc (FEATURE_BLOCK_SIZE)");
  g_autofree char *text = report ((const char *[]) { "--suspects", NULL });
  g_autofree char *csv = report ((const char *[]) { "--suspects", "--format", "csv", NULL });
  g_autofree char *json = report ((const char *[]) { "--suspects", "--format", "json", NULL });
  g_autofree char *first = g_strdup_printf ("fastest first:\n  1. leaky-steps.c:%d leak_big_tensor\n"
                                            "       +4.00 MiB/step since step 5, 24.00 MiB live "
                                            "at the last step, in leaky-steps (pid ", big_line);
  g_autofree char *second = g_strdup_printf ("\n  2. leaky-steps.c:%d leak_feature_cache\n"
                                             "       +1.50 MiB/step since step 4, 10.50 MiB live "
                                             "at the last step, in leaky-steps (pid ",
                                             feature_line);
  g_autofree char *line_text = g_strdup_printf ("%d", big_line);
  g_autofree char *json_head = g_strdup_printf (
    "\"headline\":{\"text\":\"leaky-steps.c:%d leak_big_tensor\",\"frame\":0,\"kind\":\"native\","
    "\"function\":\"leak_big_tensor\"", big_line);

  assert_contains (text, first);
  assert_contains (text, second);
  g_assert_null (strstr (text, "\n  3. "));

  g_assert_cmpuint (csv_rows (csv), ==, 2);
  assert_cell (csv, 1, "position", "1");
  assert_cell (csv, 1, "bytes", "25165824");
  assert_cell (csv, 1, "growth_start_step", "5");
  assert_cell (csv, 1, "bytes_per_step", "4194304");
  assert_cell (csv, 1, "function", "leak_big_tensor");
  assert_cell (csv, 1, "line", line_text);
  assert_cell (csv, 2, "bytes", "11010048");
  assert_cell (csv, 2, "growth_start_step", "4");
  assert_cell (csv, 2, "bytes_per_step", "1572864");

  g_assert_true (g_str_has_prefix (json, "{\"suspects\":[{\"position\":1,\"pid\":"));
  assert_contains (json, ",\"role\":\"leaky-steps\",\"dist_rank\":null,\"device\":\"host\","
                         "\"bytes\":25165824,\"count\":null,\"resident_bytes\":null,"
                         "\"growth_start_step\":5,\"growth_bytes\":25165824,"
                         "\"bytes_per_step\":4194304,\"scope\":null,");
  assert_contains (json, json_head);
  assert_contains (json, "{\"position\":2,");
  assert_contains (json, "\"growth_bytes\":11010048,\"bytes_per_step\":1572864,");
}

/* ---- --retained, by stack and by scope, at the end and at a step ------------------- */

static void
test_retained (void)
{
  g_autofree char *text = report ((const char *[]) { "--retained", NULL });
  g_autofree char *csv = report ((const char *[]) { "--retained", "--format", "csv", NULL });
  g_autofree char *json = report ((const char *[]) { "--retained", "--format", "json", NULL });

  g_assert_cmpuint (csv_rows (csv), ==, 3);
  assert_cell (csv, 1, "function", "leak_big_tensor");
  assert_cell (csv, 1, "bytes", "25165824");
  assert_cell (csv, 1, "count", "6");
  assert_cell (csv, 2, "function", "leak_feature_cache");
  assert_cell (csv, 2, "bytes", "11010048");
  assert_cell (csv, 2, "count", "672");
  assert_cell (csv, 3, "bytes", "4096");
  assert_cell (csv, 3, "count", "1");

  assert_contains (text, "Retained by stack, still live when the trace ended: 34.50 MiB in "
                         "3 groups\n");
  assert_contains (text, "\n  1.    24.00 MiB         6    24.00 MiB   step 5  leaky-steps.c:");
  assert_contains (text, "\n  2.    10.50 MiB       672    10.50 MiB   step 4  leaky-steps.c:");

  assert_contains (json, "{\"retained\":[{\"position\":1,");
  assert_contains (json, "\"bytes\":25165824,\"count\":6,\"resident_bytes\":25165824,");
  assert_contains (json, "\"bytes\":11010048,\"count\":672,\"resident_bytes\":11010048,");
}

static void
test_retained_step (void)
{
  g_autofree char *text = report ((const char *[]) { "--retained", "--step", "7", NULL });
  g_autofree char *csv = report ((const char *[]) { "--retained", "--step", "7", "--format", "csv",
                                                    NULL });
  g_autofree char *json = report ((const char *[]) { "--retained", "--step", "7", "--format",
                                                     "json", NULL });

  g_assert_cmpuint (csv_rows (csv), ==, 2);
  assert_cell (csv, 1, "function", "leak_big_tensor");
  assert_cell (csv, 1, "bytes", "4194304");
  assert_cell (csv, 1, "count", "1");
  assert_cell (csv, 2, "function", "leak_feature_cache");
  assert_cell (csv, 2, "bytes", "1572864");
  assert_cell (csv, 2, "count", "96");

  assert_contains (text, "Retained by stack, allocated in step 7 and still live at its end: "
                         "5.50 MiB in 2 groups\n");
  assert_contains (text, "\n  1.     4.00 MiB         1     4.00 MiB   step 5  leaky-steps.c:");
  assert_contains (text, "\n  2.     1.50 MiB        96     1.50 MiB   step 4  leaky-steps.c:");

  assert_contains (json, "\"bytes\":4194304,\"count\":1,\"resident_bytes\":4194304,");
  assert_contains (json, "\"bytes\":1572864,\"count\":96,\"resident_bytes\":1572864,");
}

/* leaky-steps opens no scope: one group, holding what the stacks hold. */
static void
test_retained_by_scope (void)
{
  g_autofree char *text = report ((const char *[]) { "--retained", "--by", "scope", NULL });
  g_autofree char *csv = report ((const char *[]) { "--retained", "--by", "scope", "--format",
                                                    "csv", NULL });
  g_autofree char *json = report ((const char *[]) { "--retained", "--by", "scope", "--format",
                                                     "json", NULL });
  g_autofree char *step_csv = report ((const char *[]) { "--retained", "--step", "7", "--by",
                                                         "scope", "--format", "csv", NULL });

  g_assert_cmpuint (csv_rows (csv), ==, 1);
  assert_cell (csv, 1, "scope", "");
  assert_cell (csv, 1, "bytes", "36179968");
  assert_cell (csv, 1, "count", "679");
  g_assert_cmpuint (csv_rows (step_csv), ==, 1);
  assert_cell (step_csv, 1, "bytes", "5767168");
  assert_cell (step_csv, 1, "count", "97");

  assert_contains (text, "Retained by scope, still live when the trace ended: 34.50 MiB in "
                         "1 group\n");
  assert_contains (text, "\n  1.    34.50 MiB       679 ");
  assert_contains (text, "(no scope)\n");
  assert_contains (json, "\"bytes\":36179968,\"count\":679,");
  assert_contains (json, "\"scope\":null,\"frames\":[],");
}

/* ---- several reports at once, in text -------------------------------------------- */

static void
test_default_and_combined (void)
{
  g_autofree char *plain = report ((const char *[]) { NULL });
  g_autofree char *steps = report ((const char *[]) { "--steps", NULL });
  g_autofree char *suspects = report ((const char *[]) { "--suspects", NULL });
  g_autofree char *both = g_strdup_printf ("%s\n%s", steps, suspects);

  /* With no mode: the steps, then the suspects. */
  g_assert_cmpstr (plain, ==, both);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "leaky-steps", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  int status = 0, result;

  g_test_init (&argc, &argv, NULL);
  trace_dir = tide_test_make_dir ("tide-report-modes");
  trace_path = g_build_filename (trace_dir, "leaky-steps.tide", NULL);
  {
    const char *record[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o",
                             trace_path, "--", target, NULL };

    g_spawn_sync (NULL, (char **) record, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status,
                  &error);
  }
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "leaky-steps done\n");
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  g_test_add_func ("/report-modes/steps", test_steps);
  g_test_add_func ("/report-modes/suspects", test_suspects);
  g_test_add_func ("/report-modes/retained", test_retained);
  g_test_add_func ("/report-modes/retained-step", test_retained_step);
  g_test_add_func ("/report-modes/retained-by-scope", test_retained_by_scope);
  g_test_add_func ("/report-modes/default-and-combined", test_default_and_combined);
  result = g_test_run ();
  tide_test_remove_dir (trace_dir);
  g_free (trace_path);
  g_free (trace_dir);
  return result;
}
