/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * glibc sets its allocator up at the first call into it, with no lock: a
 * second thread that calls in meanwhile reads an arena with no top chunk
 * and crashes (SIGSEGV at address 8 in int_mallinfo, seen once in the
 * suite, in the rss-classes target).  The preload's flusher asks the
 * allocator for its free memory at its first tick in a process that marks
 * no step, so the preload asks it first, alone, on the thread that loads
 * it.  tests/targets/allocator-first notes which thread called its
 * mallinfo2 first, end to end through `tidemark record`.
 */
#include "config.h"

#include "tide-test-util.h"

static void
test_main_thread_first (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-allocator-init");
  g_autofree char *path = g_build_filename (dir, "first.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "allocator-first", NULL);
  const char *record[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "-o", path, "--",
                           target, NULL };
  g_autofree char *out = tide_test_spawn_ok (record);

  g_assert_cmpstr (out, ==, "main\n");
  tide_test_remove_dir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/allocator-init/main-thread-first", test_main_thread_first);
  return g_test_run ();
}
