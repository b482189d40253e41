/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What the scenarios of test-record share: a folder per test, and
 * `tidemark record` run on a program of tests/targets.
 */
#include "config.h"

#include <sys/wait.h>

#include "tide-test-record.h"
#include "tide-test-util.h"

void
run_clear (Run *run)
{
  g_free (run->out);
  g_free (run->err);
}

char *
target_path (const char *name)
{
  return g_build_filename (TIDE_TARGETS_DIR, name, NULL);
}

int
wait_status_to_int (int wait_status)
{
  return WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128 + WTERMSIG (wait_status);
}

void
run_argv (const char * const *argv,
          Run                *run)
{
  g_autoptr(GError) error = NULL;
  int wait_status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &run->out, &run->err,
                &wait_status, &error);
  g_assert_no_error (error);
  run->status = wait_status_to_int (wait_status);
}

/* tidemark record [mode] -o TRACE -- TARGET [ARGS...] */
void
record_args (Fixture           *f,
             const char        *mode,
             const char        *target,
             const char *const *args,
             Run               *run)
{
  g_autofree char *target_exe = target[0] == '/' ? g_strdup (target) : target_path (target);
  const char *argv[16];
  guint n = 0;

  argv[n++] = TIDE_TIDEMARK_EXE;
  argv[n++] = "record";
  argv[n++] = "--force";
  argv[n++] = "-q";
  if (mode != NULL)
    argv[n++] = mode;
  argv[n++] = "-o";
  argv[n++] = f->trace;
  argv[n++] = "--";
  argv[n++] = target_exe;
  for (guint i = 0; args[i] != NULL && n + 1 < G_N_ELEMENTS (argv); i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  run_argv (argv, run);
}

void
record (Fixture    *f,
        const char *mode,
        const char *target,
        const char *arg1,
        const char *arg2,
        Run        *run)
{
  const char *args[] = { arg1, arg1 ? arg2 : NULL, NULL };

  record_args (f, mode, target, args, run);
}

/* The group whose innermost frame is @function, or NULL. */
TideGroup *
find_group (GPtrArray  *groups,
            const char *function)
{
  for (guint i = 0; i < groups->len; i++)
    if (g_strcmp0 (tide_test_top_function (g_ptr_array_index (groups, i)), function) == 0)
      return g_ptr_array_index (groups, i);
  return NULL;
}

/* Sum over every group with that innermost function (one per process). */
void
sum_function (GPtrArray  *groups,
              const char *function,
              gint64     *bytes,
              gint64     *count)
{
  *bytes = *count = 0;
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);
      if (g_strcmp0 (tide_test_top_function (g), function) == 0)
        {
          *bytes += g->bytes;
          *count += g->count;
        }
    }
}

void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = tide_test_make_dir ("tide-record");
  f->trace = g_build_filename (f->dir, "run.tide", NULL);
}

void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  tide_test_remove_dir (f->dir);
  g_free (f->trace);
  g_free (f->dir);
}
