/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * libFuzzer target: a trace from bytes, opened and run through every report
 * query and the PNG renderer (tide-exercise.h).  A clean error is a good
 * outcome; a message that is empty or runs over lines aborts, as a crash,
 * a sanitizer report or a hang (-timeout) would.  Build with -Dfuzzer=true
 * under clang (tests/hostile/meson.build); seeds are corpus/.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>

#include "tide-exercise.h"

static char *trace_path;
static char *png_path;

static void
make_paths (void)
{
  /* tide_trace_open() reads a file: one in memory where /dev/shm is. */
  const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
  g_autofree char *dir = NULL;
  g_autofree char *template = g_build_filename (base, "tide-fuzz-XXXXXX", NULL);

  dir = g_mkdtemp (g_steal_pointer (&template));
  if (dir == NULL)
    abort ();
  trace_path = g_build_filename (dir, "input.tide", NULL);
  png_path = g_build_filename (dir, "input.png", NULL);
}

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A critical warning is a precondition that a value from the file broke.
 * GLib's fatal-criticals end the process with SIGTRAP, which libFuzzer
 * does not catch: it would die without writing the input that did it. */
static void
abort_on_critical (const char     *domain,
                   GLogLevelFlags  level,
                   const char     *message,
                   gpointer        data)
{
  g_log_default_handler (domain, level, message, data);
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
    abort ();
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  g_log_set_default_handler (abort_on_critical, NULL);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *first_error = NULL;

  if (trace_path == NULL)
    make_paths ();
  if (!g_file_set_contents (trace_path, (const char *) data, (gssize) size, NULL))
    abort ();
  if (tide_exercise_trace (trace_path, png_path, &first_error) == TIDE_EXERCISE_BAD_ERROR)
    {
      g_printerr ("an error message that is not one line: \"%s\"\n", first_error);
      abort ();
    }
  g_unlink (png_path);
  return 0;
}
