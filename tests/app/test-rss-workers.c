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
 * it, counted from what the child inherited.
 */
#include "config.h"

#include "tide-report-rss.h"
#include "tide-test-util.h"

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

      if (r->process_id == worker_id && !e->pending && e->first_step <= number &&
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

static void
test_worker_frees (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-workers");
  g_autofree char *path = g_build_filename (dir, "worker.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "allocator-free", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o", path,
                         "--", target, "worker", NULL };
  g_autofree char *out = tide_test_spawn_ok (argv);
  g_autoptr(TideTrace) trace = tide_test_open_trace (path);
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GArray) explanations = NULL;
  g_autoptr(GError) error = NULL;
  const TideRssExplanation *forked, *freed;
  g_autofree char *forked_text = NULL;
  g_autofree char *freed_text = NULL;
  gint64 worker_id;

  g_assert_cmpstr (out, ==, "done\n");
  worker_id = tide_test_query_int (trace, "SELECT id FROM processes WHERE parent_id > 0");
  rows = tide_report_job_steps (trace, &error);
  g_assert_no_error (error);
  explanations = tide_rss_explain_steps (rows);
  forked = worker_explanation (rows, explanations, worker_id, 2);
  freed = worker_explanation (rows, explanations, worker_id, 3);
  forked_text = tide_rss_explanation_describe (forked);
  freed_text = tide_rss_explanation_describe (freed);
  g_test_message ("step 2: %s", forked_text);
  g_test_message ("step 3: %s", freed_text);

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
  tide_test_remove_dir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rss-workers/allocator-free", test_worker_frees);
  return g_test_run ();
}
