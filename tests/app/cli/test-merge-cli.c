/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark merge` from the command line: its progress on stderr, and a
 * refusal as one line with exit status 2.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "tide-test-util.h"

static char *dir;

static int
merge (const char * const *args,
       char              **err)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_ptr_array_add (argv, (char *) TIDE_TIDEMARK_EXE);
  g_ptr_array_add (argv, (char *) "merge");
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                err, &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static void
test_merge_cli (void)
{
  g_autofree char *a = g_build_filename (dir, "a.tide", NULL);
  g_autofree char *b = g_build_filename (dir, "b.tide", NULL);
  g_autofree char *job = g_build_filename (dir, "job.tide", NULL);
  g_autofree char *err_ok = NULL;
  g_autofree char *err_twice = NULL;
  g_autofree char *err_exists = NULL;
  g_autofree char *err_no_output = NULL;
  g_autofree char *twice = NULL;
  g_autofree char *exists = NULL;
  g_autofree char *wrote = NULL;

  tide_test_write_two_ranks (a);
  tide_test_write_two_ranks (b);

  g_assert_cmpint (merge ((const char *[]) { a, b, "-o", job, NULL }, &err_ok), ==, 0);
  g_assert_true (g_str_has_prefix (err_ok, "tidemark: merged 1/2 ("));
  g_assert_nonnull (strstr (err_ok, "\ntidemark: merged 2/2 ("));
  wrote = g_strdup_printf ("\ntidemark: wrote %s: 2 traces, ", job);
  g_assert_nonnull (strstr (err_ok, wrote));

  g_assert_cmpint (merge ((const char *[]) { a, b, a, "-o", job, "--force", NULL }, &err_twice),
                   ==, 2);
  twice = g_strdup_printf ("tidemark: %s is given twice\n", a);
  g_assert_cmpstr (err_twice, ==, twice);

  g_assert_cmpint (merge ((const char *[]) { a, b, "-o", job, NULL }, &err_exists), ==, 2);
  exists = g_strdup_printf ("tidemark: %s exists already; --force replaces it\n", job);
  g_assert_cmpstr (err_exists, ==, exists);

  g_assert_cmpint (merge ((const char *[]) { a, b, NULL }, &err_no_output), ==, 2);
  g_assert_cmpstr (err_no_output, ==, "tidemark: merge needs -o JOB.tide\n");
}

int
main (int    argc,
      char **argv)
{
  int result;

  g_test_init (&argc, &argv, NULL);
  dir = tide_test_make_dir ("tide-merge-cli");
  g_test_add_func ("/merge-cli/progress-and-refusals", test_merge_cli);
  result = g_test_run ();
  tide_test_remove_dir (dir);
  g_free (dir);
  return result;
}
