/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-test-attach.h: what the scenarios of test-attach share: a folder
 * per test, attach-toucher and `tidemark attach` started and waited for.
 */
#pragma once

#include <gio/gio.h>

#include "tide-report.h"

G_BEGIN_DECLS

#define TOUCH_STEPS   6
#define TOUCH_MIB     8
/* Steps 1, 2, 4 and 5 touch (not the multiples of 3). */
#define KEPT_BYTES    (4.0 * TOUCH_MIB * 1048576.0)
/* --leak: a size that nothing else in the program allocates. */
#define LEAK_SIZE     77777
#define LEAK_SIZE_ARG G_STRINGIFY (LEAK_SIZE)

typedef struct
{
  char *dir;
  char *trace;
  char *rss_log;
} Fixture;

const char  *build_path               (const char *relative);
void         fixture_setup            (Fixture       *f,
                                       gconstpointer  data);
void         fixture_teardown         (Fixture       *f,
                                       gconstpointer  data);
GSubprocess *start_toucher            (const char *rss_log,
                                       const char *sleep_ms,
                                       gboolean    wait,
                                       const char *arg1,
                                       const char *arg2,
                                       const char *arg3,
                                       const char *arg4);
GSubprocess *start_attach_telling     (const char          *pid,
                                       const char          *trace,
                                       const char          *option,
                                       const char          *value,
                                       const char * const  *env,
                                       gboolean             loud,
                                       GDataInputStream   **told);
GSubprocess *start_attach_full        (const char         *pid,
                                       const char         *trace,
                                       const char         *option,
                                       const char         *value,
                                       const char * const *env,
                                       gboolean            loud);
void         wait_for_python_followed (GDataInputStream *told,
                                       const char       *pid);
GSubprocess *start_attach_with_env    (const char         *pid,
                                       const char         *trace,
                                       const char         *option,
                                       const char         *value,
                                       const char * const *env);
GSubprocess *start_attach             (const char *pid,
                                       const char *trace,
                                       const char *option,
                                       const char *value);
void         wait_for_logged_steps    (const char *rss_log,
                                       guint       n);
void         wait_for_trace_rows      (const char *path,
                                       const char *count_sql,
                                       gint64      n);
void         wait_for_trace_steps     (const char *path,
                                       gint64      n);
void         say_go                   (GSubprocess *toucher);
char        *finish                   (GSubprocess *p);
gboolean     stack_has                (const TideGroup *g,
                                       const char      *function,
                                       guint            depth);

/* The Python programs and PyTorch jobs attached (test-attach-jobs.c). */
void add_attach_python_tests (void);
void add_torch_job_tests     (void);

G_END_DECLS
