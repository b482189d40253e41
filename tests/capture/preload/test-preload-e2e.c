/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-preload-e2e.c: runs preload-target under libtidemark-preload.so with
 * this test as the recorder: it listens on a SOCK_SEQPACKET socket in a
 * temporary directory, takes every connection, and checks every record.
 */
#include "config.h"

#include "preload-target.h"
#include "tide-test-preload.h"
#include "tide-test-util.h"
#include "tide-wire.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void
test_basic (Fixture       *f,
            gconstpointer  data)
{
  static const char *const parent_steps[] = { "warmup", "after-threads", "", NULL };
  static const char *const child_steps[] = { "child-step", NULL };
  RunOptions o = { .mode = "basic", .preload = TRUE, .socket = TRUE, .all = TRUE,
                   .kill_after = -1 };
  g_autoptr (Run) run = run_target (f, &o);
  const Conn *parent = NULL, *child = NULL;

  g_assert_true (WIFEXITED (run->status));
  g_assert_cmpint (WEXITSTATUS (run->status), ==, 0);
  g_assert_cmpuint (run->conns->len, ==, 2);
  for (guint i = 0; i < run->conns->len; i++)
    {
      const Conn *c = g_ptr_array_index (run->conns, i);
      const TideWireHello *hello = conn_hello (c);

      g_assert_cmpuint (hello->flags & TIDE_HELLO_ALL, ==, TIDE_HELLO_ALL);
      if (hello->pid == (guint32) run->pid)
        parent = c;
      else if (hello->ppid == (guint32) run->pid)
        child = c;
      check_no_drops (c);
      check_frames (c);
    }
  g_assert_nonnull (parent);
  g_assert_nonnull (child);
  g_assert_true (strstr (run->out->str, "status 0") != NULL);

  check_known_allocs (run, parent);
  check_scopes (run, parent);
  check_threads (parent, conn_hello (parent)->h.tid);
  check_steps (parent, parent_steps);
  g_assert_cmpuint (count_allocs (parent, CHILD_SIZE), ==, 0);

  /* The child: its own allocations only, none of the parent's. */
  g_assert_cmpuint (conn_hello (child)->pid, ==, out_child_pid (run));
  g_assert_cmpuint (count_allocs (child, CHILD_SIZE), ==, CHILD_ALLOCS);
  for (guint i = 0; i < KNOWN_N; i++)
    g_assert_cmpuint (count_allocs (child, KNOWN_BASE + i), ==, 0);
  check_steps (child, child_steps);

  /* Both waited at exit for the recorder's last reading, once, and at
   * their first step end, unasked, for its reading; the child also waited
   * at fork, while the recorder noted its pages.  This recorder asks for
   * no other step end. */
  g_assert_cmpuint (parent->n_barriers, ==, 2);
  g_assert_cmpuint (parent->n_exits, ==, 1);
  g_assert_cmpuint (parent->n_step_waits, ==, 1);
  g_assert_cmpuint (child->n_barriers, ==, 3);
  g_assert_cmpuint (child->n_forks, ==, 1);
  g_assert_cmpuint (child->n_exits, ==, 1);
  g_assert_cmpuint (child->n_step_waits, ==, 1);
  g_assert_true (conn_hello (child)->flags & TIDE_HELLO_FORKED);
  g_assert_false (conn_hello (parent)->flags & TIDE_HELLO_FORKED);
}

static void
test_storm (Fixture       *f,
            gconstpointer  data)
{
  RunOptions o = { .mode = "storm", .preload = TRUE, .socket = TRUE, .all = TRUE,
                   .kill_after = -1 };
  g_autoptr (Run) run = run_target (f, &o);
  guint total = STORM_THREADS * STORM_PER_THREAD;
  g_autofree guint *seen = g_new0 (guint, total);
  g_autoptr (GHashTable) frees = g_hash_table_new (g_int64_hash, g_int64_equal);
  const TideWireHeader *h;
  const Conn *c;
  guint n_frees = 0;

  c = clean_single_conn (run);
  FOR_EACH_RECORD (c, h)
    {
      const TideWireAlloc *a = (const void *) h;

      if (h->type == TIDE_WIRE_ALLOC && a->size >= STORM_BASE && a->size < STORM_BASE + total)
        seen[a->size - STORM_BASE]++;
      if (h->type == TIDE_WIRE_FREE)
        n_frees++;
    }
  for (guint i = 0; i < total; i++)
    if (seen[i] != 1)
      g_error ("storm allocation %u arrived %u times", i, seen[i]);
  g_assert_cmpuint (n_frees, >=, total);
  /* No step marked, and still one wait at exit, for the last reading. */
  g_assert_cmpuint (c->n_barriers, ==, 1);
  g_assert_cmpuint (c->n_exits, ==, 1);
}

/* How long each of @c's step markers said it waits, "1000 100". */
static char *
step_waits (const Conn *c)
{
  GString *waits = g_string_new (NULL);
  const TideWireHeader *h;

  FOR_EACH_RECORD (c, h)
    if (h->type == TIDE_WIRE_STEP)
      g_string_append_printf (waits, "%s%u", waits->len > 0 ? " " : "",
                              ((const TideWireStep *) h)->wait_ms);
  return g_string_free (waits, FALSE);
}

/* A recorder that asks for it (TIDE_WIRE_STEP_WAIT_REQUEST) has the next
 * step end wait: asked at each step, every one of the parent's three
 * waits, the first unasked and longer, each mark saying how long, and the
 * program runs to its end. */
static void
test_step_wait_requests (Fixture       *f,
                         gconstpointer  data)
{
  RunOptions o = { .mode = "basic", .preload = TRUE, .socket = TRUE, .kill_after = -1,
                   .ask_step_waits = TRUE };
  g_autoptr(Run) run = run_target (f, &o);
  const Conn *parent = NULL;
  g_autofree char *waits = NULL;

  for (guint i = 0; i < run->conns->len; i++)
    {
      const Conn *c = g_ptr_array_index (run->conns, i);

      if (conn_hello (c)->pid == (guint32) run->pid)
        parent = c;
    }
  g_assert_nonnull (parent);
  g_assert_true (strstr (run->out->str, "status 0") != NULL);
  g_assert_cmpuint (parent->n_step_waits, ==, 3);
  waits = step_waits (parent);
  g_assert_cmpstr (waits, ==, G_STRINGIFY (TIDE_WIRE_FIRST_STEP_WAIT_MS) " "
                   G_STRINGIFY (TIDE_WIRE_STEP_WAIT_MS) " " G_STRINGIFY (TIDE_WIRE_STEP_WAIT_MS));
  g_assert_cmpuint (parent->n_exits, ==, 1);
}

/* A recorder late to a step wait sends its answer after the marker went
 * on: that answer is not the next barrier's.  Each step barrier is
 * answered twice here, and the exit barrier's answer held 300 ms: every
 * process waits for its own.  Before, its exit's wait took the stale step
 * answer and it hung up before the recorder's last reading. */
static void
test_stale_answers (Fixture       *f,
                    gconstpointer  data)
{
  RunOptions o = { .mode = "basic", .preload = TRUE, .socket = TRUE, .kill_after = -1,
                   .stale_answers = TRUE };
  g_autoptr(Run) run = run_target (f, &o);
  guint n_step_waits = 0;

  g_assert_true (strstr (run->out->str, "status 0") != NULL);
  for (guint i = 0; i < run->conns->len; i++)
    {
      const Conn *c = g_ptr_array_index (run->conns, i);

      g_assert_false (c->closed_unanswered);
      g_assert_cmpuint (c->n_exits, ==, 1);
      n_step_waits += c->n_step_waits;
    }
  g_assert_cmpuint (n_step_waits, >=, 1);
}

/* Asked for its figures as of a moment (TIDE_WIRE_FIGURES_REQUEST), the
 * process sends them stamped with it, then what its threads had made
 * before, then FIGURES_SENT: the recorder reads it once that came, and
 * its blocks must be there by then.  Here the main thread's block waits
 * in its buffer when the request comes; before, it came tens of
 * milliseconds after the answer, which had no end mark. */
static void
test_figures_answer (Fixture       *f,
                     gconstpointer  data)
{
  RunOptions o = { .mode = "figures", .preload = TRUE, .socket = TRUE, .all = TRUE,
                   .kill_after = -1, .figures_after = "allocated" };
  g_autoptr(Run) run = run_target (f, &o);
  const TideWireHeader *h;
  const Conn *c;
  gboolean block_seen = FALSE, free_bytes_seen = FALSE, own_seen = FALSE;
  guint n_sent = 0;

  g_assert_true (strstr (run->out->str, "figures ok") != NULL);
  g_assert_cmpuint (run->figures_at_ns, >, 0);
  c = clean_single_conn (run);
  FOR_EACH_RECORD (c, h)
    {
      const TideWireCounter *counter = (const void *) h;

      if (h->type == TIDE_WIRE_ALLOC && ((const TideWireAlloc *) h)->size == FIGURES_SIZE)
        block_seen = TRUE;
      if (h->type == TIDE_WIRE_COUNTER && h->time_ns == run->figures_at_ns)
        {
          g_assert_cmpuint (n_sent, ==, 0);
          free_bytes_seen |= counter->counter == TIDE_WIRE_COUNTER_ALLOC_FREE;
          own_seen |= counter->counter == TIDE_WIRE_COUNTER_PRELOAD_OWN;
        }
      if (h->type != TIDE_WIRE_FIGURES_SENT)
        continue;
      g_assert_cmpuint (h->len, ==, sizeof *h);
      g_assert_cmpuint (h->time_ns, ==, run->figures_at_ns);
      g_assert_true (block_seen);
      g_assert_true (free_bytes_seen);
      g_assert_true (own_seen);
      n_sent++;
    }
  g_assert_cmpuint (n_sent, ==, 1);
}

static void
assert_same_run (const Run *a,
                 const Run *b)
{
  g_assert_cmpstr (a->out->str, ==, b->out->str);
  g_assert_cmpint (a->status, ==, b->status);
}

/* The recorder closes the connection mid-run, or is not there at all: the
 * target's output and exit status do not change. */
static void
test_recorder_gone (Fixture       *f,
                    gconstpointer  data)
{
  RunOptions plain = { .mode = "chatty", .kill_after = -1 };
  RunOptions no_socket = { .mode = "chatty", .preload = TRUE, .kill_after = -1 };
  RunOptions dies = { .mode = "chatty", .preload = TRUE, .socket = TRUE, .all = TRUE,
                      .kill_after = 3 };
  RunOptions sampled = { .mode = "chatty", .preload = TRUE, .socket = TRUE, .kill_after = 1 };
  g_autoptr (Run) base = run_target (f, &plain);
  g_autoptr (Run) r1 = run_target (f, &no_socket);
  g_autoptr (Run) r2 = run_target (f, &dies);
  g_autoptr (Run) r3 = run_target (f, &sampled);

  g_assert_true (WIFEXITED (base->status));
  g_assert_cmpint (WEXITSTATUS (base->status), ==, 3);
  g_assert_true (strstr (base->out->str, "\niter 39 sum ") != NULL);
  assert_same_run (base, r1);
  assert_same_run (base, r2);
  assert_same_run (base, r3);
  g_assert_cmpuint (r1->conns->len, ==, 0);
  single_conn (r2);
}

/* A target killed with SIGKILL loses at most what it did in the last
 * 200 ms: an allocation made before that is in the trace. */
static void
test_sigkill (Fixture       *f,
              gconstpointer  data)
{
  RunOptions o = { .mode = "hang", .preload = TRUE, .socket = TRUE, .kill_after = -1,
                   .sigkill = TRUE };
  g_autoptr (Run) run = run_target (f, &o);
  const Conn *c;

  g_assert_true (WIFSIGNALED (run->status));
  g_assert_cmpint (WTERMSIG (run->status), ==, SIGKILL);
  c = single_conn (run);
  /* Sampled mode: a block above the sampling interval is always recorded. */
  g_assert_cmpuint (count_allocs (c, KILL_SIZE), ==, 1);
  g_assert_cmpfloat (find_alloc (c, KILL_SIZE, 0, NULL)->weight, ==, 1.0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  signal (SIGPIPE, SIG_IGN);
  g_test_add ("/capture/preload/e2e/basic", Fixture, NULL,
              fixture_setup, test_basic, fixture_teardown);
  g_test_add ("/capture/preload/e2e/step-wait-requests", Fixture, NULL,
              fixture_setup, test_step_wait_requests, fixture_teardown);
  g_test_add ("/capture/preload/e2e/stale-answers", Fixture, NULL,
              fixture_setup, test_stale_answers, fixture_teardown);
  g_test_add ("/capture/preload/e2e/figures-answer", Fixture, NULL,
              fixture_setup, test_figures_answer, fixture_teardown);
  g_test_add ("/capture/preload/e2e/storm", Fixture, NULL,
              fixture_setup, test_storm, fixture_teardown);
  add_preload_block_tests ();
  g_test_add ("/capture/preload/e2e/recorder-gone", Fixture, NULL,
              fixture_setup, test_recorder_gone, fixture_teardown);
  g_test_add ("/capture/preload/e2e/sigkill", Fixture, NULL,
              fixture_setup, test_sigkill, fixture_teardown);
  return g_test_run ();
}
