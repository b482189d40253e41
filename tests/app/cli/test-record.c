/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark record` end to end: the real command, the real preload library,
 * the test programs of tests/targets with their known leaks, and the trace
 * read back through the storage queries that `tidemark report` prints; and
 * `tidemark export` of such a trace.
 */
#include "config.h"

#include <glib.h>

#include "tide-test-record.h"

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  add_record_leak_tests ();
  add_record_process_tests ();
  add_record_exit_tests ();
  add_record_export_tests ();
  return g_test_run ();
}
