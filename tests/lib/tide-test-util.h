/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-test-util.h: the helpers every suite shares: a private temporary
 * folder per test, the line of a source file that holds a text, spawning
 * and attaching, and small reads and writes of a trace.
 */
#pragma once

#include "tide-process-end.h"
#include "tide-report.h"
#include "tide-trace.h"

G_BEGIN_DECLS

/* @value lies within @slack of @expected; a failure says both, at the
 * caller's line. */
#define tide_test_assert_within(value, expected, slack) G_STMT_START { \
    gint64 tide_within_value_ = (value), tide_within_expected_ = (expected); \
    gint64 tide_within_slack_ = (slack); \
    g_assert_cmpint (tide_within_value_, >=, tide_within_expected_ - tide_within_slack_); \
    g_assert_cmpint (tide_within_value_, <=, tide_within_expected_ + tide_within_slack_); \
  } G_STMT_END

/* How the processes of the tests' hand-written traces end. */
static const TideProcessEnd tide_test_exited_0 = { .kind = TIDE_END_EXITED };

/* One recording of a test: its folder, its trace, what the target printed
 * and the record summary. */
typedef struct
{
  char      *dir;
  char      *path;   /* run.tide in dir */
  char      *out;    /* the target's stdout */
  char      *err;    /* the record summary */
  TideTrace *trace;
} TideTestRecording;

void        tide_test_recording_init  (TideTestRecording *recording,
                                       const char        *prefix);
void        tide_test_recording_clear (TideTestRecording *recording);

char       *tide_test_make_dir       (const char *prefix);
void        tide_test_remove_dir     (const char *dir);
TideTrace  *tide_test_open_trace     (const char *path);
gint64      tide_test_query_int      (TideTrace  *trace,
                                      const char *sql);
gint64      tide_test_query_file_int (const char *path,
                                      const char *sql);
char       *tide_test_query_text     (TideTrace  *trace,
                                      const char *sql);
const char *tide_test_top_function   (TideGroup  *group);
gint        tide_test_source_line    (const char *path,
                                      const char *text);
void        tide_test_write_two_ranks (const char *path);
char       *tide_test_csv_cell       (const char *csv,
                                      guint       row,
                                      const char *column);
char       *tide_test_spawn_ok       (const char * const *argv);
void        tide_test_exec_sql       (const char *path,
                                      const char *sql);
gboolean    tide_test_python_imports (const char *python,
                                      const char *module);
int         tide_test_free_tcp_port  (void);
gboolean    tide_test_can_attach     (void);

#ifdef TIDE_TARGETS_SRC_DIR
/* The first line of tests/targets/@file that holds @text. */
static inline gint
tide_test_target_line (const char *file,
                       const char *text)
{
  g_autofree char *path = g_build_filename (TIDE_TARGETS_SRC_DIR, file, NULL);

  return tide_test_source_line (path, text);
}
#endif

G_END_DECLS
