/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A two-node job on one machine: each "node" is a `tidemark record` in a
 * UTS namespace of its own (unshare -u) with its own host name, running one
 * rank of a two-rank gloo DDP job started as a launcher starts it (RANK,
 * WORLD_SIZE, MASTER_ADDR, MASTER_PORT).  Each writes run-%h-%r.tide; the
 * two are merged, and the result must have two hosts and two ranks, steps
 * aligned within 50 ms, and the leaking rank's suspect under its host.
 * Needs root (for unshare) and /usr/bin/python3 with torch; skipped
 * otherwise.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tide-test-util.h"

#define PYTHON        "/usr/bin/python3"
#define STEPS         12
#define LEAKING_RANK  1
#define ALIGNED_NS    (50 * G_GINT64_CONSTANT (1000000))

static char *dir;

/* One node: `unshare -u` names its UTS namespace @host, then runs the
 * recorder on rank @rank. */
static GPid
start_node (const char *host,
            int         rank,
            int         port)
{
  g_autofree char *script = g_build_filename (TIDE_PYTHON_TESTS_DIR, "train-ddp-node.py", NULL);
  g_autofree char *output = g_build_filename (dir, "run-%h-%r.tide", NULL);
  g_autofree char *shell = g_strdup_printf ("echo %s > /proc/sys/kernel/hostname && exec \"$@\"",
                                            host);
  g_autofree char *rank_text = g_strdup_printf ("%d", rank);
  g_autofree char *port_text = g_strdup_printf ("%d", port);
  g_autofree char *leaking = g_strdup_printf ("%d", LEAKING_RANK);
  g_autofree char *steps = g_strdup_printf ("%d", STEPS);
  const char *argv[] = { "unshare", "-u", "/bin/sh", "-c", shell, "node", TIDE_TIDEMARK_EXE,
                         "record", "-q", "--torch", "-o", output, "--", PYTHON, script, leaking,
                         steps, NULL };
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  GPid pid;

  env = g_environ_setenv (env, "RANK", rank_text, TRUE);
  env = g_environ_setenv (env, "WORLD_SIZE", "2", TRUE);
  env = g_environ_setenv (env, "MASTER_ADDR", "127.0.0.1", TRUE);
  env = g_environ_setenv (env, "MASTER_PORT", port_text, TRUE);
  env = g_environ_setenv (env, "GLOO_SOCKET_IFNAME", "lo", TRUE);
  g_spawn_async (NULL, (char **) argv, env,
                 G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 NULL, NULL, &pid, &error);
  g_assert_no_error (error);
  return pid;
}

static void
assert_exited_ok (GPid pid)
{
  int status = 0;

  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
}

static char *
tidemark (const char * const *args,
          char              **err)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  int status = 0;

  g_ptr_array_add (argv, (char *) TIDE_TIDEMARK_EXE);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, err,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  return out;
}

static void
assert_contains (const char *haystack,
                 const char *needle)
{
  if (strstr (haystack, needle) == NULL)
    g_error ("expected «%s» in:\n%s", needle, haystack);
}

static gint
compare_gint64 (gconstpointer a,
                gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return (x > y) - (x < y);
}

/* |end of step k on node-a - end of step k on node-b| for every k, sorted. */
static GArray *
step_gaps (TideTrace *trace)
{
  GArray *gaps = g_array_new (FALSE, FALSE, sizeof (gint64));

  for (gint k = 1; k <= STEPS; k++)
    {
      g_autofree char *sql = g_strdup_printf (
        "SELECT abs (a.end_ns - b.end_ns) FROM steps a, steps b,"
        " merge_processes ma, merge_processes mb, merge_sources sa, merge_sources sb"
        " WHERE a.number = %d AND b.number = %d AND ma.process_id = a.process_id"
        " AND mb.process_id = b.process_id AND sa.id = ma.source_id AND sb.id = mb.source_id"
        " AND sa.host = 'node-a' AND sb.host = 'node-b'", k, k);
      gint64 gap = tide_test_query_int (trace, sql);

      g_array_append_val (gaps, gap);
    }
  g_array_sort (gaps, compare_gint64);
  return gaps;
}

static void
test_two_node_job (void)
{
  g_autofree char *a = g_build_filename (dir, "run-node-a-0.tide", NULL);
  g_autofree char *b = g_build_filename (dir, "run-node-b-1.tide", NULL);
  g_autofree char *job = g_build_filename (dir, "job.tide", NULL);
  g_autofree char *merge_err = NULL;
  g_autofree char *merged = NULL;
  g_autofree char *processes = NULL;
  g_autofree char *suspects = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GArray) gaps = NULL;
  int port = tide_test_free_tcp_port ();
  GPid node_a, node_b;

  if (getuid () != 0 || g_find_program_in_path ("unshare") == NULL)
    {
      g_test_skip ("unshare -u needs root");
      return;
    }
  node_a = start_node ("node-a", 0, port);
  node_b = start_node ("node-b", 1, port);
  assert_exited_ok (node_a);
  assert_exited_ok (node_b);
  g_assert_true (g_file_test (a, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (b, G_FILE_TEST_IS_REGULAR));

  merged = tidemark ((const char *[]) { "merge", a, b, "-o", job, NULL }, &merge_err);
  assert_contains (merge_err, "tidemark: merged 1/2 (");
  assert_contains (merge_err, "tidemark: merged 2/2 (");

  processes = tidemark ((const char *[]) { "report", job, "--processes", "--format", "json",
                                           NULL }, NULL);
  suspects = tidemark ((const char *[]) { "report", job, "--suspects", "--format", "csv", NULL },
                       NULL);
  trace = tide_test_open_trace (job);

  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (DISTINCT host)"
                                               " FROM merge_sources"), ==, 2);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (DISTINCT rank) FROM processes"
                                               " WHERE role = 1"), ==, 2);
  assert_contains (processes, "\"role\":\"rank 0 on node-a\",\"dist_rank\":0,");
  assert_contains (processes, "\"role\":\"rank 1 on node-b\",\"dist_rank\":1,");
  assert_contains (processes, ",\"host\":\"node-a\"}");
  assert_contains (processes, ",\"host\":\"node-b\"}");

  /* Every suspect is the leaking rank's, named with its host. */
  g_assert_true (g_str_has_prefix (suspects, "position,"));
  assert_contains (suspects, "\n1,");
  assert_contains (suspects, ",rank 1 on node-b,1,");
  g_assert_null (strstr (suspects, "rank 0 on node-a"));

  /* One machine, one boot: one clock, shifted by nothing; the step ends
   * of the two ranks meet at every step's all-reduce. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM merge_sources"
                                               " WHERE shift_ns = 0"), ==, 2);
  g_assert_cmpint (ABS (tide_test_query_int (trace, "SELECT skew_ns FROM merge_sources"
                                                    " WHERE host = 'node-b'")), <, ALIGNED_NS);
  gaps = step_gaps (trace);
  g_test_message ("step end gaps: median %" G_GINT64_FORMAT " ns, largest %" G_GINT64_FORMAT
                  " ns", g_array_index (gaps, gint64, STEPS / 2),
                  g_array_index (gaps, gint64, STEPS - 1));
  g_assert_cmpint (g_array_index (gaps, gint64, STEPS / 2), <, ALIGNED_NS);
}

int
main (int    argc,
      char **argv)
{
  int result;

  g_test_init (&argc, &argv, NULL);
  dir = tide_test_make_dir ("tide-merge-ddp");
  g_test_add_func ("/merge-ddp/two-node-job", test_two_node_job);
  result = g_test_run ();
  tide_test_remove_dir (dir);
  g_free (dir);
  return result;
}
