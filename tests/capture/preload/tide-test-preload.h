/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-test-preload.h: what the scenarios of test-preload-e2e share: the
 * test plays the recorder, runs preload-target (or Python) under the
 * preload with the options a scenario sets, and reads the records back.
 */
#pragma once

#include <glib.h>

#include "tide-wire.h"

G_BEGIN_DECLS

#define RUN_TIMEOUT_US (120 * G_USEC_PER_SEC)

typedef struct
{
  int         fd;
  GByteArray *bytes;       /* every record received, back to back */
  guint       n_messages;
  guint       n_barriers;  /* EXIT_BARRIERs answered */
  guint       n_exits;     /* ... of them, those at exit (TIDE_BARRIER_EXIT) */
  guint       n_forks;     /* ... and at fork (TIDE_BARRIER_FORK) */
  guint       n_step_waits; /* ... and at a step end (TIDE_BARRIER_STEP) */
  gboolean    ask_step_waits; /* answer each step with a step wait request */
  gboolean    stale_answers;  /* see RunOptions */
  gint64      exit_answer_due_us; /* the held answer to the exit barrier goes then; 0: none */
  TideWireHeader exit_answer;
  gboolean    closed_unanswered;  /* the process hung up while its exit answer was held */
} Conn;

typedef struct
{
  char *dir;
  char *sock_path;
} Fixture;

typedef struct
{
  GPtrArray *conns;
  GString   *out;
  GPid       pid;
  int        status;
  guint64    figures_at_ns;  /* the FIGURES_REQUEST sent (RunOptions.figures_after); 0: none */
} Run;

typedef struct
{
  const char *mode;
  gboolean    preload;
  gboolean    socket;
  gboolean    all;
  int         kill_after;  /* close the connection after N messages; -1 never */
  guint       sample_bytes;  /* 0: the default */
  const char *also_preload;  /* a library preloaded after ours, or NULL */
  gboolean    sigkill;     /* SIGKILL the target 200 ms after it says "ready" */
  gboolean    unwind_check;  /* TIDEMARK_UNWIND_CHECK=1 */
  const char *seed;        /* TIDEMARK_SEED, or NULL */
  gboolean    no_perturb;  /* without meson's MALLOC_PERTURB_ */
  const char * const *argv;  /* what runs: NULL, preload-target @mode */
  const char *pythonmalloc;  /* PYTHONMALLOC, or NULL */
  gboolean    python;      /* with the tidemark package, as `record` runs Python */
  gboolean    ask_step_waits;  /* ask every next step end to wait, as the recorder
                                * does where a reading is due */
  gboolean    stale_answers;   /* answer each step barrier twice, the second as a
                                * recorder late to a wait that ended does, and
                                * hold the exit barrier's answer for 300 ms */
  const char *figures_after;   /* once the target printed this, ask its first
                                * connection for its figures as of now */
} RunOptions;

#define FOR_EACH_RECORD(c, h)                                           \
  for (guint off_ = 0;                                                  \
       off_ < (c)->bytes->len                                           \
       && ((h) = (const TideWireHeader *) ((c)->bytes->data + off_));   \
       off_ += (h)->len)

void                  conn_free          (gpointer data);
void                  run_free           (Run *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Run, run_free)
void                  fixture_setup      (Fixture       *f,
                                          gconstpointer  data);
void                  fixture_teardown   (Fixture       *f,
                                          gconstpointer  data);
int                   listen_on          (const char *path);
void                  conn_take          (Conn         *c,
                                          const guint8 *msg,
                                          gssize        len);
char                **target_env         (const Fixture    *f,
                                          const RunOptions *o);
gboolean              pump               (Run              *run,
                                          int              *listen_fd,
                                          int              *out_fd,
                                          const RunOptions *o);
Run                  *run_target         (Fixture          *f,
                                          const RunOptions *o);
const TideWireHello  *conn_hello         (const Conn *c);
guint64               out_pointer        (const Run  *run,
                                          const char *key,
                                          guint       nth);
guint32               out_child_pid      (const Run *run);
void                  mapped_span        (const Conn *c,
                                          const char *path_suffix,
                                          guint64    *lo,
                                          guint64    *hi);
void                  check_frames       (const Conn *c);
void                  check_no_drops     (const Conn *c);
const Conn           *single_conn        (const Run *run);
const Conn           *clean_single_conn  (const Run *run);
const TideWireAlloc  *find_alloc         (const Conn *c,
                                          guint64     size,
                                          guint       nth,
                                          guint      *index);
guint                 count_allocs       (const Conn *c,
                                          guint64     size);
gboolean              freed_after        (const Conn *c,
                                          guint64     addr,
                                          guint       after);
void                  check_known_allocs (const Run  *run,
                                          const Conn *c);
void                  check_steps        (const Conn         *c,
                                          const char * const *labels);
void                  check_scopes       (const Run  *run,
                                          const Conn *c);
void                  check_threads      (const Conn *c,
                                          guint32     main_tid);

/* test-preload-e2e-blocks.c: folded frees, the unwinder's memo, the
 * malloc family under each allocator, the sampler, CPython's frees. */
void add_preload_block_tests (void);

G_END_DECLS
