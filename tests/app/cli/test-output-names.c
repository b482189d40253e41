/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark record -o run-%h-%r.tide` as a launcher runs it: the name from
 * the host and the launcher's rank, a second run refused rather than
 * overwriting (a plain -o name too, and a trace still being written),
 * --force, default names that never collide, and what the trace records of its machine (host,
 * boot id, the real-time offset of its monotonic clock, the rank).
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>


#include "tide-test-util.h"

static char *dir;

static int
record (const char  *template,
        const char  *rank,
        gboolean     force,
        char       **err)
{
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "leaky-steps", NULL);
  g_auto(GStrv) env = g_environ_unsetenv (g_get_environ (), "SLURM_PROCID");
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "-q", "-o", template, "--", target,
                         "--steps", "2", NULL, NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;

  env = g_environ_unsetenv (env, "RANK");
  env = g_environ_unsetenv (env, "OMPI_COMM_WORLD_RANK");
  env = g_environ_unsetenv (env, "PMI_RANK");
  if (rank != NULL)
    env = g_environ_setenv (env, "SLURM_PROCID", rank, TRUE);
  if (force)
    {
      /* --force goes before the output option. */
      memmove (&argv[4], &argv[3], sizeof argv[0] * 6);
      argv[3] = "--force";
    }
  g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, err,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

static gint64
now_offset_ns (void)
{
  struct timespec mono, real;

  clock_gettime (CLOCK_MONOTONIC, &mono);
  clock_gettime (CLOCK_REALTIME, &real);
  return (real.tv_sec - mono.tv_sec) * G_GINT64_CONSTANT (1000000000) +
         (real.tv_nsec - mono.tv_nsec);
}

static void
test_template_and_meta (void)
{
  g_autofree char *template = g_build_filename (dir, "run-%h-%r.tide", NULL);
  g_autofree char *path = g_strdup_printf ("%s/run-%s-6.tide", dir, g_get_host_name ());
  g_autofree char *err = NULL;
  g_autofree char *boot_id = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *host = NULL;
  g_autofree char *boot = NULL;
  g_autofree char *offset = NULL;
  g_autofree char *rank = NULL;

  g_assert_cmpint (record (template, "6", FALSE, &err), ==, 0);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_get_contents ("/proc/sys/kernel/random/boot_id", &boot_id, NULL, NULL));
  trace = tide_test_open_trace (path);
  host = tide_trace_dup_meta (trace, "hostname");
  boot = tide_trace_dup_meta (trace, "boot_id");
  offset = tide_trace_dup_meta (trace, "realtime_offset_ns");
  rank = tide_trace_dup_meta (trace, "launcher_rank");
  g_assert_cmpstr (host, ==, g_get_host_name ());
  g_assert_cmpstr (boot, ==, g_strstrip (boot_id));
  g_assert_cmpstr (rank, ==, "6");
  /* Each module's build-id, for merges: the target's own among them. */
  {
    g_autofree char *build_id = tide_test_query_text (trace, "SELECT build_id FROM modules"
                                                             " WHERE path LIKE '%/leaky-steps'");

    g_assert_true (g_regex_match_simple ("^[0-9a-f]{40}$", build_id, 0, 0));
  }
  g_assert_nonnull (offset);
  /* The same clocks, read a moment later: equal unless someone set the
   * time meanwhile (NTP slews by microseconds). */
  g_assert_cmpint (ABS (g_ascii_strtoll (offset, NULL, 10) - now_offset_ns ()), <, 5000000);
}

static gint64
start_ns (const char *path)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (path);

  return tide_trace_get_start_ns (trace);
}

static void
test_existing_refused (void)
{
  g_autofree char *template = g_build_filename (dir, "again-%r.tide", NULL);
  g_autofree char *path = g_build_filename (dir, "again-1.tide", NULL);
  g_autofree char *err1 = NULL;
  g_autofree char *err2 = NULL;
  g_autofree char *err3 = NULL;
  g_autofree char *expected = NULL;
  GStatBuf before, after;
  gint64 first_start;

  g_assert_cmpint (record (template, "1", FALSE, &err1), ==, 0);
  g_assert_cmpint (g_stat (path, &before), ==, 0);
  first_start = start_ns (path);
  g_assert_cmpint (record (template, "1", FALSE, &err2), ==, 2);
  expected = g_strdup_printf ("tidemark: %s exists already; --force replaces it, or -o with %%p "
                              "names each trace apart\n", path);
  g_assert_cmpstr (err2, ==, expected);
  g_assert_cmpint (g_stat (path, &after), ==, 0);
  g_assert_cmpint (after.st_ino, ==, before.st_ino);
  g_assert_cmpint (after.st_mtime, ==, before.st_mtime);

  /* Forced: a new recording, which started later. */
  g_assert_cmpint (record (template, "1", TRUE, &err3), ==, 0);
  g_assert_cmpint (start_ns (path), >, first_start);
}

/* A shell command that leaves @marker behind if it ever runs. */
static int
record_marker (const char  *output,
               const char  *marker,
               gboolean     force,
               char       **err)
{
  g_autofree char *script = g_strdup_printf ("echo ran > '%s'", marker);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "-q", "-o", output, "--", "/bin/sh", "-c",
                         script, NULL, NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (force)
    {
      memmove (&argv[4], &argv[3], sizeof argv[0] * 7);
      argv[3] = "--force";
    }
  g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, err,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

/* `-o run.tide` over an earlier trace: refused in one line, before the
 * program starts, the old file as it was; --force replaces it. */
static void
test_plain_existing_refused (void)
{
  g_autofree char *path = g_build_filename (dir, "plain.tide", NULL);
  g_autofree char *marker = g_build_filename (dir, "plain-ran", NULL);
  g_autofree char *err = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  gsize before_len = 0, after_len = 0;

  g_assert_cmpint (record_marker (path, marker, FALSE, &err), ==, 0);
  g_assert_true (g_file_get_contents (path, &before, &before_len, NULL));
  g_assert_cmpint (g_unlink (marker), ==, 0);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (record_marker (path, marker, FALSE, &err), ==, 2);
  expected = g_strdup_printf ("tidemark: %s exists already; --force replaces it, or -o with %%p "
                              "names each trace apart\n", path);
  g_assert_cmpstr (err, ==, expected);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_get_contents (path, &after, &after_len, NULL));
  g_assert_cmpuint (after_len, ==, before_len);
  g_assert_cmpint (memcmp (before, after, before_len), ==, 0);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (record_marker (path, marker, TRUE, &err), ==, 0);
  g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_clear_pointer (&after, g_free);
  g_assert_true (g_file_get_contents (path, &after, &after_len, NULL));
  g_assert_false (after_len == before_len && memcmp (before, after, before_len) == 0);
}

/* A trace still being written has a WAL before its file says much: the
 * WAL alone is enough to refuse. */
static void
test_wal_refused (void)
{
  g_autofree char *path = g_build_filename (dir, "busy.tide", NULL);
  g_autofree char *wal = g_build_filename (dir, "busy.tide-wal", NULL);
  g_autofree char *marker = g_build_filename (dir, "busy-ran", NULL);
  g_autofree char *err = NULL;

  g_assert_true (g_file_set_contents (wal, "wal", -1, NULL));
  g_assert_cmpint (record_marker (path, marker, FALSE, &err), ==, 2);
  g_assert_true (g_str_has_suffix (err, " exists already; --force replaces it, or -o with %p "
                                        "names each trace apart\n"));
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Without -o, a name another recording took in the same second gets a
 * suffix: the files a recording started now would be named, made first
 * for the next seconds too, stay as they were. */
static void
test_default_names_unique (void)
{
  g_autofree char *sub = g_build_filename (dir, "default", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "leaky-steps", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "-q", "--", target, "--steps", "2", NULL };
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) listing = NULL;
  const char *name;
  guint n_traces = 0, n_taken = 0;
  int status = 0;

  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  for (gint s = 0; s < 30; s++)
    {
      g_autoptr(GDateTime) t = g_date_time_add_seconds (now, s);
      g_autofree char *stamp = g_date_time_format (t, "%Y%m%d-%H%M%S");
      g_autofree char *taken = g_strdup_printf ("%s/leaky-steps-%s.tide", sub, stamp);

      g_assert_true (g_file_set_contents (taken, "taken", -1, NULL));
    }
  g_spawn_sync (sub, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  listing = g_dir_open (sub, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *path = g_build_filename (sub, name, NULL);
      g_autofree char *contents = NULL;

      g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
      if (g_str_equal (contents, "taken"))
        n_taken++;
      else if (g_str_has_suffix (name, "-2.tide"))
        n_traces++;
      else
        g_error ("unexpected file %s", name);
    }
  g_assert_cmpuint (n_taken, ==, 30);
  g_assert_cmpuint (n_traces, ==, 1);
}

static void
test_no_rank (void)
{
  g_autofree char *template = g_build_filename (dir, "norank-%r.tide", NULL);
  g_autofree char *err = NULL;
  g_autofree char *expected = g_strdup_printf ("tidemark: %s: %%r needs a rank, and none of "
                                               "RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK and "
                                               "PMI_RANK is set\n", template);

  g_assert_cmpint (record (template, NULL, FALSE, &err), ==, 2);
  g_assert_cmpstr (err, ==, expected);
}

int
main (int    argc,
      char **argv)
{
  int result;

  g_test_init (&argc, &argv, NULL);
  dir = tide_test_make_dir ("tide-output-names");
  g_test_add_func ("/output-names/template-and-meta", test_template_and_meta);
  g_test_add_func ("/output-names/existing-refused", test_existing_refused);
  g_test_add_func ("/output-names/no-rank", test_no_rank);
  g_test_add_func ("/output-names/plain-existing-refused", test_plain_existing_refused);
  g_test_add_func ("/output-names/wal-refused", test_wal_refused);
  g_test_add_func ("/output-names/default-names-unique", test_default_names_unique);
  result = g_test_run ();
  tide_test_remove_dir (dir);
  g_free (dir);
  return result;
}
