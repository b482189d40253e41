/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Python frames of recorded allocations, with Debian's /usr/bin/python3:
 * read in place from the interpreter's own frames (3.11), and kept by a
 * profile function where TIDEMARK_PYTHON_FRAMES=profile asks for it (as on
 * the versions whose frames are not read in place).  py-frames.py
 * allocates on two threads from functions whose names are not ASCII, and
 * says whether its threads had a profile function.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "tide-test-util.h"

#define PYTHON "/usr/bin/python3"
#define SCRIPT TIDE_PYTHON_TESTS_DIR "/py-frames.py"

typedef TideTestRecording Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  tide_test_recording_init (f, "tide-pyframes");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  tide_test_recording_clear (f);
}

/* Records py-frames.py with --all, TIDEMARK_PYTHON_FRAMES=@frames (or
 * unset); returns its stdout. */
static char *
record (Fixture    *f,
        const char *frames)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o", f->path, "--",
                         PYTHON, SCRIPT, NULL };
  g_auto(GStrv) env = g_environ_unsetenv (g_get_environ (), "TIDEMARK_PYTHON_FRAMES");
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  char *out = NULL;
  int status = 0;

  if (frames != NULL)
    env = g_environ_setenv (env, "TIDEMARK_PYTHON_FRAMES", frames, TRUE);
  g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                &error);
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("record failed (%d): %s", status, err);
  return out;
}

/* Frames named @function at the line of py-frames.py that holds @marker. */
static gint64
count_frames (TideTrace  *trace,
              const char *function,
              const char *marker)
{
  g_autofree char *sql = g_strdup_printf (
    "SELECT count (*) FROM frames WHERE function = '%s' AND line = %d"
    " AND file = '" SCRIPT "'", function, tide_test_source_line (SCRIPT, marker));

  return tide_test_query_int (trace, sql);
}

static void
assert_frames (Fixture *f)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (f->path);

  g_assert_cmpint (count_frames (trace, "größe.<locals>.<listcomp>", "# größe makes"), ==, 1);
  g_assert_cmpint (count_frames (trace, "Ωmega.make.<locals>.<listcomp>", "# make makes"), ==, 1);
  g_assert_cmpint (count_frames (trace, "𠀀.<locals>.<listcomp>", "# 𠀀 makes"), ==, 1);
  /* Only the second thread runs worker. */
  g_assert_cmpint (count_frames (trace, "worker", "# worker calls"), ==, 1);
  g_assert_cmpint (count_frames (trace, "main", "# main calls größe"), ==, 1);
  g_assert_cmpint (count_frames (trace, "main", "# main calls 𠀀"), ==, 1);
  g_assert_cmpint (count_frames (trace, "alternate", "# alternate lists"), ==, 1);
  g_assert_cmpint (count_frames (trace, "alternate", "# alternate sets"), ==, 1);
  g_assert_cmpint (count_frames (trace, "main", "# main calls alternate"), ==, 1);
}

/* No profile function on either thread: with one, 3.11 runs every
 * instruction of the program through its tracing path. */
static void
test_in_place (Fixture       *f,
               gconstpointer  data)
{
  g_autofree char *out = record (f, NULL);

  g_assert_cmpstr (out, ==, "profile True True\n");
  assert_frames (f);
}

static void
test_profile (Fixture       *f,
              gconstpointer  data)
{
  g_autofree char *out = record (f, "profile");

  g_assert_cmpstr (out, ==, "profile False False\n");
  assert_frames (f);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/python-frames/in-place", Fixture, NULL, fixture_setup, test_in_place,
              fixture_teardown);
  g_test_add ("/python-frames/profile", Fixture, NULL, fixture_setup, test_profile,
              fixture_teardown);
  return g_test_run ();
}
