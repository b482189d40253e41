/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The private memory of a process that marks no steps (a DataLoader
 * worker), explained over its parent's steps: `tidemark record
 * --sync-steps` on `tests/targets/allocator-free worker`, whose forked
 * child frees 48 MiB of blocks in step 3, 16 MiB of them in the free
 * chunks it inherited.  What the allocator holds free is only the
 * program's to ask: a process that marks no steps sends it as it runs and
 * at its fork, so that each reading of its private memory has it beside
 * it, counted from what the child inherited.  And `tests/targets/cow-steps
 * parent-writes`, whose child holds pages alone that it wrote, and pages
 * that its parent wrote: only the first are its copies.  And
 * `tests/targets/fork-on-cue`, whose child forks while the test holds the
 * recorder stopped.
 */
#include "config.h"

#include "tide-report-rss.h"
#include "tide-test-util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB          G_GINT64_CONSTANT (1048576)
/* Library pages, the preload's buffers and the child's stack, which the
 * program's code touches on the way. */
#define CLASS_SLACK  MIB

/* The explanation of the worker's change that covers step @number. */
static const TideRssExplanation *
worker_explanation (GPtrArray *rows,
                    GArray    *explanations,
                    gint64     worker_id,
                    gint       number)
{
  for (guint i = 0; i < rows->len; i++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, i);
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, i);

      if (r->process.id == worker_id && !e->pending && e->first_step <= number &&
          number <= e->last_step)
        return e;
    }
  g_error ("no explanation of the worker covers step %d", number);
}

static void
assert_within (gint64      value,
               gint64      expected,
               const char *what)
{
  if (value < expected - CLASS_SLACK || value > expected + CLASS_SLACK)
    g_error ("%s: %" G_GINT64_FORMAT " bytes, expected %" G_GINT64_FORMAT " within %"
             G_GINT64_FORMAT, what, value, expected, CLASS_SLACK);
}

/* A job recorded with --sync-steps, its rows and their explanations, and
 * its one forked child. */
typedef struct
{
  char      *dir;
  TideTrace *trace;
  GPtrArray *rows;
  GArray    *explanations;
  gint64     worker_id;
} WorkerJob;

static void
worker_job_clear (WorkerJob *job)
{
  g_clear_pointer (&job->explanations, g_array_unref);
  g_clear_pointer (&job->rows, g_ptr_array_unref);
  g_clear_object (&job->trace);
  if (job->dir != NULL)
    tide_test_remove_dir (job->dir);
  g_clear_pointer (&job->dir, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (WorkerJob, worker_job_clear)

/* The trace at @path, its rows and their explanations, and its one
 * forked child. */
static void
open_worker_job (WorkerJob  *job,
                 const char *path)
{
  g_autoptr(GError) error = NULL;

  job->trace = tide_test_open_trace (path);
  job->worker_id = tide_test_query_int (job->trace,
                                        "SELECT id FROM processes WHERE parent_id > 0");
  job->rows = tide_report_job_steps (job->trace, &error);
  g_assert_no_error (error);
  job->explanations = tide_rss_explain_steps (job->rows);
}

/* Records tests/targets/@target @mode, which prints "done". */
static void
record_worker_job (WorkerJob  *job,
                   const char *target,
                   const char *mode)
{
  g_autofree char *path = NULL;
  g_autofree char *exe = g_build_filename (TIDE_TARGETS_DIR, target, NULL);
  g_autofree char *out = NULL;

  job->dir = tide_test_make_dir ("tide-rss-workers");
  path = g_build_filename (job->dir, "worker.tide", NULL);
  {
    const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o",
                           path, "--", exe, mode, NULL };

    out = tide_test_spawn_ok (argv);
  }
  g_assert_cmpstr (out, ==, "done\n");
  open_worker_job (job, path);
}

/* The explanation of the job's worker that covers step @number, said in
 * the test's log. */
static const TideRssExplanation *
job_worker_explanation (const WorkerJob *job,
                        gint             number)
{
  const TideRssExplanation *e = worker_explanation (job->rows, job->explanations,
                                                    job->worker_id, number);
  g_autofree char *text = tide_rss_explanation_describe (e);

  g_test_message ("step %d: %s", number, text);
  return e;
}

/* Column @column of the worker's row at step @number in `report --steps`
 * CSV, as a number. */
static gint64
steps_csv_bytes (const WorkerJob *job,
                 gint             number,
                 const char      *column)
{
  g_autoptr(GString) csv = g_string_new (NULL);

  tide_format_steps (csv, job->rows, TIDE_FORMAT_CSV);
  for (guint i = 0; i < job->rows->len; i++)
    {
      const TideStepRow *r = g_ptr_array_index (job->rows, i);
      g_autofree char *cell = NULL;

      if (r->process.id != job->worker_id || r->number != number)
        continue;
      cell = tide_test_csv_cell (csv->str, i + 1, column);
      return g_ascii_strtoll (cell, NULL, 10);
    }
  g_error ("no row of the worker at step %d", number);
}

static void
test_worker_frees (void)
{
  g_auto(WorkerJob) job = { 0 };
  const TideRssExplanation *forked, *freed;

  record_worker_job (&job, "allocator-free", "worker");
  forked = job_worker_explanation (&job, 2);
  freed = job_worker_explanation (&job, 3);

  /* The 16 MiB its parent held free at the fork are not the worker's. */
  g_assert_true (forked->since_fork);
  assert_within (forked->terms[TIDE_RSS_ALLOC_FREE], 0, "allocator free at fork");
  assert_within (forked->terms[TIDE_RSS_UNEXPLAINED], 0, "unexplained at fork");

  g_assert_cmpint (freed->first_step, ==, 3);
  g_assert_cmpint (freed->last_step, ==, 3);
  assert_within (freed->base_delta, 48 * MIB, "private memory");
  assert_within (freed->terms[TIDE_RSS_ALLOC_FREE], 32 * MIB, "allocator free");
  assert_within (freed->terms[TIDE_RSS_COW], 16 * MIB, "copy-on-write");
  assert_within (freed->terms[TIDE_RSS_HEAP], 0, "heap");
  assert_within (freed->terms[TIDE_RSS_UNEXPLAINED], 0, "unexplained");
}

/* One byte through the FIFO at @path, opened @flags: whether it went. */
static gboolean
cue (const char *path,
     int         flags)
{
  char c = 'c';
  int fd = open (path, flags);
  gboolean went;

  if (fd < 0)
    return FALSE;
  went = (flags == O_WRONLY ? write (fd, &c, 1) : read (fd, &c, 1)) == 1;
  close (fd);
  return went;
}

/* `fork-on-cue`: its child forks while the recorder is stopped, and the
 * parent's step 2 ends before the recorder goes on, which then meets that
 * step end and the child's first message at once, the step end first.
 * The child is read at that step end all the same: its first span is
 * step 2, since its fork, not steps 2-3.  Before, the snapshot went
 * without it (under stress-ng, one run in about 150 of
 * /rss-workers/allocator-free, its recorder stalled half a second). */
static void
test_forked_while_stopped (void)
{
  g_autofree char *exe = g_build_filename (TIDE_TARGETS_DIR, "fork-on-cue", NULL);
  g_auto(WorkerJob) job = { 0 };
  g_autofree char *path = NULL;
  g_autofree char *cue_out = NULL;
  g_autofree char *cue_in = NULL;
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  const TideRssExplanation *forked;
  GPid recorder;
  gboolean went;
  int status;

  job.dir = tide_test_make_dir ("tide-rss-workers");
  path = g_build_filename (job.dir, "worker.tide", NULL);
  cue_out = g_build_filename (job.dir, "cue-out", NULL);
  cue_in = g_build_filename (job.dir, "cue-in", NULL);
  g_assert_cmpint (mkfifo (cue_out, 0600), ==, 0);
  g_assert_cmpint (mkfifo (cue_in, 0600), ==, 0);
  env = g_environ_setenv (env, "TIDE_TEST_CUE_OUT", cue_out, TRUE);
  env = g_environ_setenv (env, "TIDE_TEST_CUE_IN", cue_in, TRUE);
  {
    const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o",
                           path, "--", exe, NULL };

    g_spawn_async (NULL, (char **) argv, env,
                   G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                   &recorder, &error);
    g_assert_no_error (error);
  }
  g_assert_true (cue (cue_out, O_RDONLY));
  g_assert_cmpint (kill (recorder, SIGSTOP), ==, 0);
  /* The fork, and the step end 100 ms after it; the recorder goes on
   * whatever happened, never left stopped. */
  went = cue (cue_in, O_WRONLY);
  g_usleep (400 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (kill (recorder, SIGCONT), ==, 0);
  g_assert_true (went);
  g_assert_cmpint (waitpid (recorder, &status, 0), ==, recorder);
  g_spawn_close_pid (recorder);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  open_worker_job (&job, path);
  forked = job_worker_explanation (&job, 2);
  g_assert_true (forked->since_fork);
  g_assert_cmpint (forked->first_step, ==, 2);
  g_assert_cmpint (forked->last_step, ==, 2);
}

/* `cow-steps parent-writes`: the child wrote 8 MiB of the pages it
 * inherited in step 3, and its parent 12 MiB more: the child holds those
 * 20 MiB alone, but copied only the 8 MiB it wrote.  The other 12 MiB are
 * the pages it inherited, no longer shared since its parent wrote its
 * own: a DataLoader worker does not copy the weights that its parent's
 * optimizer updates.  Where the page frames are hidden (not root), all
 * 20 MiB are copies. */
static void
test_parent_writes (void)
{
  g_autofree char *source_path = g_build_filename (TIDE_TARGETS_SRC_DIR, "cow-steps.c", NULL);
  g_auto(WorkerJob) job = { 0 };
  g_autoptr(GPtrArray) cow = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *line = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *copied = NULL;
  g_autofree char *left = NULL;
  const TideRssExplanation *writes;
  const TideCowRow *row;

  if (geteuid () != 0)
    {
      g_test_skip ("pagemap shows page frames to root only");
      return;
    }
  record_worker_job (&job, "cow-steps", "parent-writes");
  writes = job_worker_explanation (&job, 3);
  text = tide_rss_explanation_describe (writes);

  g_assert_cmpint (writes->first_step, ==, 3);
  assert_within (writes->base_delta, 20 * MIB, "private memory");
  assert_within (writes->terms[TIDE_RSS_COW], 8 * MIB, "copy-on-write");
  assert_within (writes->terms[TIDE_RSS_SHARING], 12 * MIB, "no longer shared");
  assert_within (writes->left_by_parent, 12 * MIB, "left by the parent");
  assert_within (writes->terms[TIDE_RSS_UNEXPLAINED], 0, "unexplained");
  /* ", less N newly shared" where pages became shared meanwhile. */
  g_assert_nonnull (strstr (text, " MiB its parent wrote or freed"));

  assert_within (steps_csv_bytes (&job, 3, "cow_left_bytes"), 12 * MIB, "report --steps");

  cow = tide_report_cow (job.trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cow->len, ==, 1);
  row = g_ptr_array_index (cow, 0);
  assert_within (row->copied_bytes, 8 * MIB, "copied");
  assert_within (row->left_bytes, 12 * MIB, "left");
  g_assert_cmpint (row->source_bytes, ==, 8 * MIB);
  copied = tide_format_delta (row->copied_bytes);
  left = tide_format_bytes (row->left_bytes);
  line = tide_cow_row_describe (row);
  expected = g_strdup_printf ("%s: %s copied on write, 8.00 MiB of it from the parent's blocks "
                              "allocated at cow-steps.c:%d (main); %s more no longer shared, "
                              "its parent having written or freed them", row->process.role, copied,
                              tide_test_source_line (source_path, "char *shared = mmap ("), left);
  g_assert_cmpstr (line, ==, expected);
}

/* `cow-steps idle-child`: a worker whose memory stays the same is read at
 * each of its parent's step ends all the same, and each of those steps is
 * explained on its own.  A reading that found every value unchanged wrote
 * nothing, and the report saw no reading: "steps 3-4 ... not read". */
static void
test_idle_worker (void)
{
  g_auto(WorkerJob) job = { 0 };

  record_worker_job (&job, "cow-steps", "idle-child");
  for (gint number = 2; number <= 5; number++)
    {
      const TideRssExplanation *e = job_worker_explanation (&job, number);

      g_assert_cmpint (e->last_step, ==, number);
      g_assert_cmpint (ABS (e->terms[TIDE_RSS_UNEXPLAINED]), <=, CLASS_SLACK);
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rss-workers/idle", test_idle_worker);
  g_test_add_func ("/rss-workers/allocator-free", test_worker_frees);
  g_test_add_func ("/rss-workers/parent-writes", test_parent_writes);
  g_test_add_func ("/rss-workers/forked-while-stopped", test_forked_while_stopped);
  return g_test_run ();
}
