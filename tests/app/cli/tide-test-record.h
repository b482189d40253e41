/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-test-record.h: what the scenarios of test-record share: a folder
 * per test, `tidemark record` run on a program of tests/targets, and the
 * groups of a report looked up by their innermost function.
 */
#pragma once

#include "tide-report.h"

G_BEGIN_DECLS

#define MiB (1024 * 1024)

typedef struct
{
  char *dir;
  char *trace;
} Fixture;

typedef struct
{
  int   status;   /* exit status, or 128 + signal */
  char *out;
  char *err;
} Run;

void       run_clear          (Run                *run);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

char      *target_path        (const char         *name);
int        wait_status_to_int (int                 wait_status);
void       run_argv           (const char * const *argv,
                               Run                *run);
void       record_args        (Fixture            *f,
                               const char         *mode,
                               const char         *target,
                               const char *const  *args,
                               Run                *run);
void       record             (Fixture            *f,
                               const char         *mode,
                               const char         *target,
                               const char         *arg1,
                               const char         *arg2,
                               Run                *run);
TideGroup *find_group         (GPtrArray          *groups,
                               const char         *function);
void       sum_function       (GPtrArray          *groups,
                               const char         *function,
                               gint64             *bytes,
                               gint64             *count);
void       fixture_setup      (Fixture            *f,
                               gconstpointer       data);
void       fixture_teardown   (Fixture            *f,
                               gconstpointer       data);

#define RECORD_TEST_ADD(path, data, fn) \
  g_test_add (path, Fixture, data, fixture_setup, fn, fixture_teardown)

/* Each scenario file's tests. */
void add_record_leak_tests    (void);
void add_record_process_tests (void);
void add_record_exit_tests    (void);
void add_record_export_tests  (void);

G_END_DECLS
