/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * -o templates: %h, %p, %r and %%, the rank from the launchers' variables,
 * and the refusal of an existing file.
 */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "tide-output-name.h"
#include "tide-test-util.h"

static void
test_expand (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *name = tide_output_name_expand ("run-%h-%r-%p.tide", "node-a", 4242, "7",
                                                   &error);
  g_autofree char *percent = tide_output_name_expand ("100%%-%h%%", "b", 1, NULL, &error);
  g_autofree char *plain = tide_output_name_expand ("plain.tide", "b", 1, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (name, ==, "run-node-a-7-4242.tide");
  g_assert_cmpstr (percent, ==, "100%-b%");
  g_assert_cmpstr (plain, ==, "plain.tide");
  g_assert_true (tide_output_name_is_template ("a-%h"));
  g_assert_false (tide_output_name_is_template ("a-h"));
}

static void
test_expand_errors (void)
{
  struct { const char *name; const char *rank; const char *message; } cases[] = {
    { "run-%r.tide", NULL, "run-%r.tide: %r needs a rank, and none of RANK, SLURM_PROCID, "
                           "OMPI_COMM_WORLD_RANK and PMI_RANK is set" },
    { "run-%r.tide", "../1", "run-%r.tide: the rank '../1' is not a number" },
    { "run-%x.tide", "1", "run-%x.tide: unknown directive '%x' (%h host, %p pid, %r rank, %% a "
                          "percent sign)" },
    { "run-%", "1", "run-%: unknown directive '%' (%h host, %p pid, %r rank, %% a percent "
                    "sign)" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *name = tide_output_name_expand (cases[i].name, "h", 1, cases[i].rank,
                                                       &error);

      g_assert_null (name);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      g_assert_cmpstr (error->message, ==, cases[i].message);
    }
}

/* The first variable set, in the order RANK, SLURM_PROCID,
 * OMPI_COMM_WORLD_RANK, PMI_RANK; an empty one counts as unset. */
static void
test_rank_from_env (void)
{
  const char *vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK" };

  for (guint i = 0; i < G_N_ELEMENTS (vars); i++)
    g_unsetenv (vars[i]);
  g_assert_null (tide_output_rank_from_env ());
  g_setenv ("PMI_RANK", "4", TRUE);
  g_assert_cmpstr (tide_output_rank_from_env (), ==, "4");
  g_setenv ("OMPI_COMM_WORLD_RANK", "3", TRUE);
  g_assert_cmpstr (tide_output_rank_from_env (), ==, "3");
  g_setenv ("SLURM_PROCID", "2", TRUE);
  g_assert_cmpstr (tide_output_rank_from_env (), ==, "2");
  g_setenv ("RANK", "", TRUE);
  g_assert_cmpstr (tide_output_rank_from_env (), ==, "2");
  g_setenv ("RANK", "1", TRUE);
  g_assert_cmpstr (tide_output_rank_from_env (), ==, "1");
  for (guint i = 0; i < G_N_ELEMENTS (vars); i++)
    g_unsetenv (vars[i]);
}

/* A template whose file exists is refused unless forced; a plain name
 * replaces its file as it always did. */
static void
test_resolve (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tide_test_make_dir ("tide-output-name");
  g_autofree char *template = g_build_filename (dir, "run-%h-%r.tide", NULL);
  g_autofree char *expected = NULL;
  g_autofree char *first = NULL;
  g_autofree char *again = NULL;
  g_autofree char *forced = NULL;
  g_autofree char *plain = g_build_filename (dir, "plain.tide", NULL);
  g_autofree char *plain_again = NULL;
  char host[256] = "";

  g_assert_no_error (error);
  gethostname (host, sizeof host - 1);
  expected = g_strdup_printf ("%s/run-%s-5.tide", dir, host);
  g_setenv ("SLURM_PROCID", "5", TRUE);

  first = tide_output_name_resolve (template, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (first, ==, expected);
  g_assert_true (g_file_set_contents (first, "x", 1, NULL));

  again = tide_output_name_resolve (template, FALSE, &error);
  g_assert_null (again);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS);
  {
    g_autofree char *message = g_strdup_printf ("%s exists already; --force replaces it, or -o "
                                                "with %%p names each trace apart", expected);
    g_assert_cmpstr (error->message, ==, message);
  }
  g_clear_error (&error);

  forced = tide_output_name_resolve (template, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (forced, ==, expected);

  /* A plain name is no different: the earlier trace stays, unless forced. */
  g_assert_true (g_file_set_contents (plain, "x", 1, NULL));
  plain_again = tide_output_name_resolve (plain, FALSE, &error);
  g_assert_null (plain_again);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS);
  g_clear_error (&error);
  plain_again = tide_output_name_resolve (plain, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (plain_again, ==, plain);
  /* Claimed: there, and empty, until the writer fills it. */
  g_assert_true (g_file_test (plain, G_FILE_TEST_IS_REGULAR));
  tide_output_name_release (plain);
  g_assert_false (g_file_test (plain, G_FILE_TEST_EXISTS));

  g_unsetenv ("SLURM_PROCID");
  g_unlink (first);
  g_rmdir (dir);
}

/* Names without -o: the stem's, then -2, -3 ... each claimed at once. */
static void
test_unique (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tide_test_make_dir ("tide-output-name");
  g_autofree char *stem = g_build_filename (dir, "train-20261205-101500", NULL);
  g_autofree char *a = tide_output_name_unique (stem, &error);
  g_autofree char *b = tide_output_name_unique (stem, NULL);
  g_autofree char *c = NULL;
  g_autofree char *wal = g_strconcat (stem, "-3.tide-wal", NULL);

  g_assert_no_error (error);
  g_assert_true (g_str_has_suffix (a, "/train-20261205-101500.tide"));
  g_assert_true (g_str_has_suffix (b, "/train-20261205-101500-2.tide"));
  /* A trace being written, of which only the WAL is there yet. */
  g_assert_true (g_file_set_contents (wal, "", 0, NULL));
  c = tide_output_name_unique (stem, NULL);
  g_assert_true (g_str_has_suffix (c, "/train-20261205-101500-4.tide"));
  tide_output_name_release (a);
  tide_output_name_release (b);
  tide_output_name_release (c);
  g_unlink (wal);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/output-name/expand", test_expand);
  g_test_add_func ("/output-name/expand-errors", test_expand_errors);
  g_test_add_func ("/output-name/rank-from-env", test_rank_from_env);
  g_test_add_func ("/output-name/resolve", test_resolve);
  g_test_add_func ("/output-name/unique", test_unique);
  return g_test_run ();
}
