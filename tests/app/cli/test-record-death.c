/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * How a job's processes end, end to end: `tidemark record` of
 * tests/targets/dying-steps in a memory cgroup that it outgrows (the
 * kernel's OOM killer ends it), of a PyTorch DataLoader worker that the
 * OOM killer ends while its parent lives on (tests/python/loader-oom.py),
 * and of a child killed by a plain SIGKILL, which is no OOM kill.
 *
 * The cgroups are made under this process's own memory cgroup, with cgroup
 * v1's memory controller or cgroup v2's, whichever the machine has; that
 * needs root.  A test skips, saying why, only where neither can be made.
 */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tide-kernel-log.h"
#include "tide-test-util.h"

#define MIB          (G_GINT64_CONSTANT (1) << 20)
#define JOB_LIMIT    (96 * MIB)
#define WORKER_LIMIT (64 * MIB)
#define PYTHON       "/usr/bin/python3"

typedef struct
{
  char *dir;      /* the cgroup's directory */
  char *procs;    /* its cgroup.procs */
  char *version;  /* "cgroup-v1" or "cgroup-v2" */
} MemoryCgroup;

static void
memory_cgroup_free (MemoryCgroup *cgroup)
{
  if (cgroup == NULL)
    return;
  /* Its processes are dead; the kernel may hold it a moment longer. */
  for (guint i = 0; i < 50 && g_rmdir (cgroup->dir) != 0 && errno == EBUSY; i++)
    g_usleep (100000);
  g_free (cgroup->dir);
  g_free (cgroup->procs);
  g_free (cgroup->version);
  g_free (cgroup);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MemoryCgroup, memory_cgroup_free)

/* Writes @value into a cgroup file: in place, as cgroupfs wants, not
 * through a renamed temporary file. */
static gboolean
write_file (const char *dir,
            const char *name,
            const char *value)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  FILE *file = fopen (path, "w");
  gboolean ok;

  if (file == NULL)
    return FALSE;
  ok = fputs (value, file) >= 0;
  return fclose (file) == 0 && ok;
}

/* This process's cgroup path for @controller ("memory"), or for cgroup v2
 * when @controller is NULL. */
static char *
own_cgroup (const char *controller)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/self/cgroup", &contents, NULL, NULL))
    return NULL;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (lines[i], ":", 3);
      g_auto(GStrv) controllers = NULL;

      if (g_strv_length (parts) != 3)
        continue;
      if (controller == NULL && g_str_equal (parts[0], "0") && parts[1][0] == '\0')
        return g_strdup (parts[2]);
      controllers = g_strsplit (parts[1], ",", -1);
      if (controller != NULL && g_strv_contains ((const char * const *) controllers, controller))
        return g_strdup (parts[2]);
    }
  return NULL;
}

static MemoryCgroup *
try_cgroup (const char *root,
            const char *own,
            const char *version,
            const char *limit_file,
            gint64      limit,
            char      **why)
{
  g_autoptr(MemoryCgroup) cgroup = g_new0 (MemoryCgroup, 1);
  g_autofree char *name = g_strdup_printf ("tidemark-test-%d-%u", getpid (), g_random_int ());
  g_autofree char *value = g_strdup_printf ("%" G_GINT64_FORMAT, limit);

  cgroup->dir = g_build_filename (root, own, name, NULL);
  cgroup->procs = g_build_filename (cgroup->dir, "cgroup.procs", NULL);
  cgroup->version = g_strdup (version);
  if (g_mkdir (cgroup->dir, 0755) != 0)
    {
      *why = g_strdup_printf ("cannot make %s: %s", cgroup->dir, g_strerror (errno));
      g_clear_pointer (&cgroup->dir, g_free);
      return NULL;
    }
  if (!write_file (cgroup->dir, limit_file, value))
    {
      *why = g_strdup_printf ("cannot set %s/%s", cgroup->dir, limit_file);
      return NULL;
    }
  /* No swap to escape to: the limit is a hard one.  Without swap
   * accounting these files are not there, and nothing swaps anyway. */
  write_file (cgroup->dir, "memory.memsw.limit_in_bytes", value);
  write_file (cgroup->dir, "memory.swap.max", "0");
  return g_steal_pointer (&cgroup);
}

/* A memory cgroup of @limit bytes below this process's own; NULL, with a
 * test message, where the machine lets none be made. */
static MemoryCgroup *
make_memory_cgroup (gint64 limit)
{
  g_autofree char *v1 = own_cgroup ("memory");
  g_autofree char *v2 = own_cgroup (NULL);
  g_autofree char *why = NULL;
  MemoryCgroup *cgroup = NULL;

  if (v1 != NULL && g_file_test ("/sys/fs/cgroup/memory/memory.limit_in_bytes", G_FILE_TEST_EXISTS))
    cgroup = try_cgroup ("/sys/fs/cgroup/memory", v1, "cgroup-v1", "memory.limit_in_bytes", limit, &why);
  if (cgroup == NULL && v2 != NULL && g_file_test ("/sys/fs/cgroup/cgroup.controllers", G_FILE_TEST_EXISTS))
    {
      g_clear_pointer (&why, g_free);
      cgroup = try_cgroup ("/sys/fs/cgroup", v2, "cgroup-v2", "memory.max", limit, &why);
    }
  if (cgroup == NULL)
    g_test_skip_printf ("no memory cgroup can be made here (%s)",
                        why ? why : "neither cgroup v1's memory controller nor cgroup v2");
  return cgroup;
}

typedef struct
{
  char *dir;
  char *trace;
  char *err;
  int   status;
} Run;

static void
run_clear (Run *run)
{
  if (run->dir != NULL)
    tide_test_remove_dir (run->dir);
  g_free (run->dir);
  g_free (run->trace);
  g_free (run->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

/* `tidemark record -o trace [--torch] -- sh -c SCRIPT`. */
static void
record_script (Run        *run,
               gboolean    torch,
               const char *script)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  run->dir = tide_test_make_dir ("tide-death-XXXXXX");
  run->trace = g_build_filename (run->dir, "run.tide", NULL);
  {
    g_autoptr(GPtrArray) argv = g_ptr_array_new ();

    g_ptr_array_add (argv, (gpointer) TIDE_TIDEMARK_EXE);
    g_ptr_array_add (argv, (gpointer) "record");
    g_ptr_array_add (argv, (gpointer) "--force");
    g_ptr_array_add (argv, (gpointer) "-o");
    g_ptr_array_add (argv, run->trace);
    if (torch)
      g_ptr_array_add (argv, (gpointer) "--torch");
    g_ptr_array_add (argv, (gpointer) "--");
    g_ptr_array_add (argv, (gpointer) "/bin/sh");
    g_ptr_array_add (argv, (gpointer) "-c");
    g_ptr_array_add (argv, (gpointer) script);
    g_ptr_array_add (argv, NULL);
    g_spawn_sync (run->dir, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                  &run->err, &run->status, &error);
  }
  g_assert_no_error (error);
  g_test_message ("record said:\n%s", run->err);
}

/* `tidemark record -o trace [--torch] -- sh -c '[echo $$ > PROCS &&] exec COMMAND'`:
 * the shell moves itself into the cgroup, then becomes the job. */
static void
record (Run                *run,
        const char         *procs,
        gboolean            torch,
        const char * const *command)
{
  g_autoptr(GString) script = g_string_new (NULL);

  if (procs != NULL)
    g_string_append_printf (script, "echo $$ > '%s' && ", procs);
  g_string_append (script, "exec");
  for (guint i = 0; command[i] != NULL; i++)
    g_string_append_printf (script, " '%s'", command[i]);
  record_script (run, torch, script->str);
}

static char *
report (Run        *run,
        const char *format)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", run->trace, "--processes", "--format", format,
                         NULL };

  return tide_test_spawn_ok (argv);
}

/* The process_ends row of the process with @end, as
 * "signal oom limit", and its processes.id in @id. */
static char *
death_of (TideTrace *trace,
          gint64    *process_id)
{
  *process_id = tide_test_query_int (trace, "SELECT process_id FROM process_ends WHERE kind = 2");
  return tide_test_query_text (trace, "SELECT signal || ' ' || oom || ' ' || limit_bytes"
                                      " FROM process_ends WHERE kind = 2");
}

/* death_of()'s answer for an OOM kill at @limit in @cgroup: SIGKILL, the
 * cgroup version's TideOomScope, the limit. */
static char *
oom_kill_row (const MemoryCgroup *cgroup,
              gint64              limit)
{
  return g_strdup_printf ("9 %d %" G_GINT64_FORMAT,
                          g_str_equal (cgroup->version, "cgroup-v1") ? TIDE_OOM_CGROUP_V1
                                                                      : TIDE_OOM_CGROUP_V2, limit);
}

/* The step the job was in when it died: one past the last it ended. */
static gint64
step_after_last (TideTrace *trace,
                 gint64     process_id)
{
  g_autofree char *sql = g_strdup_printf ("SELECT max (number) + 1 FROM steps WHERE process_id = %"
                                          G_GINT64_FORMAT, process_id);

  return tide_test_query_int (trace, sql);
}

/* A job that outgrows its cgroup: the OOM killer's SIGKILL, 137 passed
 * through, and everywhere the kill, the step and the limit. */
static void
test_oom_cgroup (void)
{
  g_autoptr(MemoryCgroup) cgroup = make_memory_cgroup (JOB_LIMIT);
  const char *command[] = { TIDE_TARGETS_DIR "/dying-steps", "--keep-mib", "8", NULL };
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *death = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *text = NULL;
  g_autofree char *json = NULL;
  g_autofree char *csv = NULL;
  g_autofree char *line = NULL;
  gint64 process_id, step, pid;

  if (cgroup == NULL)
    return;
  record (&run, cgroup->procs, FALSE, command);
  g_assert_true (WIFEXITED (run.status));
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 137);

  trace = tide_test_open_trace (run.trace);
  death = death_of (trace, &process_id);
  expected = oom_kill_row (cgroup, JOB_LIMIT);
  g_assert_cmpstr (death, ==, expected);
  /* The limit it ran under is the trace's too: the job lane draws it. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta WHERE key = 'memory_limit'"), ==,
                   JOB_LIMIT);
  g_clear_pointer (&expected, g_free);
  expected = tide_test_query_text (trace, "SELECT value FROM meta WHERE key = 'memory_limit_kind'");
  g_assert_cmpstr (expected, ==, cgroup->version);
  /* 8 MiB a step in 96 MiB: it dies in the step after its last, by 12. */
  step = step_after_last (trace, process_id);
  g_assert_cmpint (step, >=, 6);
  g_assert_cmpint (step, <=, 12);
  {
    g_autofree char *sql = g_strdup_printf ("SELECT pid FROM processes WHERE id = %" G_GINT64_FORMAT,
                                            process_id);

    pid = tide_test_query_int (trace, sql);
  }

  /* The summary says it first. */
  line = g_strdup_printf ("tidemark: %s --keep-mib 8 (pid %" G_GINT64_FORMAT ") was killed by SIGKILL"
                          " in step %" G_GINT64_FORMAT ": the kernel's OOM killer, at the cgroup's"
                          " limit of 96.00 MiB; the job held ", "dying-steps", pid, step);
  g_assert_nonnull (strstr (run.err, line));
  g_assert_nonnull (strstr (run.err, "; top suspect dying-steps.c:"));
  g_assert_nonnull (strstr (run.err, " keep_activations +8.00 MiB/step (host)\n"));

  text = report (&run, "text");
  g_clear_pointer (&line, g_free);
  line = g_strdup_printf ("SIGKILL (OOM) step %" G_GINT64_FORMAT, step);
  g_assert_nonnull (strstr (text, line));
  g_assert_nonnull (strstr (text, " exec "));

  json = report (&run, "json");
  g_clear_pointer (&line, g_free);
  line = g_strdup_printf ("\"end\":\"signaled\",\"exit_code\":null,\"signal\":9,\"signal_name\":\"SIGKILL\","
                          "\"core_dumped\":false,\"oom_killed\":true,\"oom_scope\":\"%s\","
                          "\"oom_limit_bytes\":%" G_GINT64_FORMAT ",\"end_step\":%" G_GINT64_FORMAT,
                          cgroup->version, JOB_LIMIT, step);
  g_assert_nonnull (strstr (json, line));

  csv = report (&run, "csv");
  {
    g_autofree char *signal = tide_test_csv_cell (csv, 2, "signal_name");
    g_autofree char *oom = tide_test_csv_cell (csv, 2, "oom_killed");
    g_autofree char *end_step = tide_test_csv_cell (csv, 2, "end_step");
    g_autofree char *first = tide_test_csv_cell (csv, 1, "end");
    g_autofree char *step_text = g_strdup_printf ("%" G_GINT64_FORMAT, step);

    g_assert_cmpstr (first, ==, "exec");
    g_assert_cmpstr (signal, ==, "SIGKILL");
    g_assert_cmpstr (oom, ==, "1");
    g_assert_cmpstr (end_step, ==, step_text);
  }
}

/* `dying-steps --kill-child` ran in @run, exited 0, and its child's
 * SIGKILL reads as no OOM kill, in the trace and in the summary. */
static void
assert_child_killed_plainly (Run *run)
{
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *death = NULL;
  gint64 process_id;

  g_assert_true (WIFEXITED (run->status));
  g_assert_cmpint (WEXITSTATUS (run->status), ==, 0);
  trace = tide_test_open_trace (run->trace);
  death = death_of (trace, &process_id);
  g_assert_cmpstr (death, ==, "9 0 0");
  g_assert_null (strstr (run->err, "OOM"));
  g_assert_nonnull (strstr (run->err, ") was killed by SIGKILL in step 2; the job held "));
}

/* A plain SIGKILL is only that, even in a cgroup: no OOM kill. */
static void
test_plain_sigkill (void)
{
  const char *command[] = { TIDE_TARGETS_DIR "/dying-steps", "--kill-child", NULL };
  g_auto(Run) run = { 0 };
  g_autofree char *json = NULL;
  g_autofree char *line = NULL;

  record (&run, NULL, FALSE, command);
  assert_child_killed_plainly (&run);
  json = report (&run, "json");
  line = g_strdup ("\"end\":\"signaled\",\"exit_code\":null,\"signal\":9,\"signal_name\":\"SIGKILL\","
                   "\"core_dumped\":false,\"oom_killed\":false,\"oom_scope\":null,"
                   "\"oom_limit_bytes\":null,\"end_step\":2,\"job_bytes_at_end\":");
  g_assert_nonnull (strstr (json, line));
  /* Its parent exited 0 after it. */
  g_assert_nonnull (strstr (json, "\"end\":\"exited\",\"exit_code\":0,\"signal\":null"));
}

/* A job that exits with an error after its third step: record passes its
 * status through, and its summary says it first, with the step it was in
 * and what the job held then.  Before, only a signal's death had a line. */
static void
test_exit_status (void)
{
  const char *command[] = { TIDE_TARGETS_DIR "/dying-steps", "--steps", "3", "--exit", "3", NULL };
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *line = NULL;
  g_autofree char *first = NULL;
  gint64 pid;

  record (&run, NULL, FALSE, command);
  g_assert_true (WIFEXITED (run.status));
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 3);
  trace = tide_test_open_trace (run.trace);
  pid = tide_test_query_int (trace, "SELECT pid FROM processes p JOIN process_ends e"
                                    " ON e.process_id = p.id WHERE e.kind = 1 AND e.exit_code = 3");
  line = g_strdup_printf ("tidemark: dying-steps --steps 3 --exit 3 (pid %" G_GINT64_FORMAT
                          ") exited with status 3 in step 4; the job held ", pid);
  /* Right after the trace's line. */
  first = g_strdup (strchr (run.err, '\n') + 1);
  g_assert_true (g_str_has_prefix (first, line));
}

/* Whether the kernel's log names the OOM killer's victims to `record`
 * here: the recorder's own test of it (CAP_SYSLOG or no dmesg_restrict,
 * the initial PID namespace). */
static gboolean
kernel_log_readable (void)
{
  g_autoptr(TideKernelLog) log = tide_kernel_log_open ();

  return log != NULL;
}

/* A recorded process killed by a plain SIGKILL just after the OOM killer
 * ended another process of its cgroup, one that `record` does not follow:
 * the cgroup's and the machine's OOM kill counts moved, but the kernel's
 * log named the other one, so this is no OOM kill.  Before, the counters
 * alone called it one, at the cgroup's limit. */
static void
test_record_bystander (void)
{
  g_autoptr(MemoryCgroup) cgroup = NULL;
  g_auto(Run) run = { 0 };
  g_autofree char *script = NULL;

  if (!kernel_log_readable ())
    {
      g_test_skip ("the kernel's log (/dev/kmsg) cannot be read here: record has only the OOM "
                   "kill counters");
      return;
    }
  if ((cgroup = make_memory_cgroup (JOB_LIMIT)) == NULL)
    return;
  /* The shell joins the cgroup; an unrecorded hog there outgrows it and
   * is the OOM killer's; then the shell becomes the recorded job, whose
   * child kills itself. */
  script = g_strdup_printf ("echo $$ > '%s' && "
                            "env -u LD_PRELOAD -u TIDEMARK_SOCKET '%s' --keep-mib 8; "
                            "exec '%s' --kill-child", cgroup->procs,
                            TIDE_TARGETS_DIR "/dying-steps", TIDE_TARGETS_DIR "/dying-steps");
  record_script (&run, FALSE, script);
  assert_child_killed_plainly (&run);
}

/* A DataLoader worker that moves itself into a small cgroup and outgrows
 * it: the OOM killer ends the worker, its parent lives on and exits 0. */
static void
test_loader_worker_oom (void)
{
  g_autoptr(MemoryCgroup) cgroup = NULL;
  g_autofree char *script = g_build_filename (TIDE_PYTHON_TESTS_DIR, "loader-oom.py", NULL);
  g_auto(Run) run = { 0 };
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *death = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *role = NULL;
  gint64 process_id;

  if (!tide_test_python_imports (PYTHON, "torch"))
    {
      g_test_skip (PYTHON " cannot import torch");
      return;
    }
  if ((cgroup = make_memory_cgroup (WORKER_LIMIT)) == NULL)
    return;
  {
    const char *command[] = { "env", NULL, PYTHON, script, NULL };
    g_autofree char *assign = g_strdup_printf ("TIDE_TEST_WORKER_CGROUP=%s", cgroup->procs);

    command[1] = assign;
    record (&run, NULL, TRUE, command);
  }
  g_assert_true (WIFEXITED (run.status));
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  trace = tide_test_open_trace (run.trace);
  death = death_of (trace, &process_id);
  expected = oom_kill_row (cgroup, WORKER_LIMIT);
  g_assert_cmpstr (death, ==, expected);
  {
    g_autofree char *sql = g_strdup_printf ("SELECT worker FROM processes WHERE id = %" G_GINT64_FORMAT,
                                            process_id);

    g_assert_cmpint (tide_test_query_int (trace, sql), ==, 0);
  }
  g_assert_nonnull (strstr (run.err, "tidemark: DataLoader worker 0 (pid "));
  g_assert_nonnull (strstr (run.err, ") was killed by SIGKILL in step "));
  g_assert_nonnull (strstr (run.err, ": the kernel's OOM killer, at the cgroup's limit of 64.00 MiB;"));
  /* The parent is alive to the end, and said so. */
  g_assert_nonnull (strstr (run.err, "loader-oom: the worker died"));
}

/* ---- attach: the OOM killer's victim, as the kernel names it ------------------- */

/* `sh -c SCRIPT` started in the background, its stdin a pipe (@in). */
static GPid
start_shell (const char *script,
             int        *in)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autoptr(GError) error = NULL;
  GPid pid = 0;

  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &pid, in, NULL, NULL, &error);
  g_assert_no_error (error);
  return pid;
}

/* Waits until @pid runs @comm (its exec done), at most 30 s. */
static void
wait_for_comm (GPid        pid,
               const char *comm)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/comm", pid);

  for (guint i = 0; i < 3000; i++)
    {
      g_autofree char *text = NULL;

      if (g_file_get_contents (path, &text, NULL, NULL) && g_str_equal (g_strstrip (text), comm))
        return;
      g_usleep (10000);
    }
  g_error ("pid %d never ran %s", pid, comm);
}

/* `tidemark attach -p PID -o TRACE`, once it says it is attached; NULL,
 * with the test skipped and @pid killed and reaped, where this kernel or
 * user cannot attach. */
static GSubprocess *
start_attach (GPid        pid,
              const char *trace)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autofree char *pid_text = g_strdup_printf ("%d", pid);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "attach", "-q", "-p", pid_text, "-o", trace,
                         "--ready-fd", "3", NULL };
  g_autoptr(GDataInputStream) ready = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  GSubprocess *attach;
  int fds[2];

  g_assert_cmpint (pipe (fds), ==, 0);
  g_subprocess_launcher_take_fd (launcher, fds[1], 3);
  attach = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  ready = g_data_input_stream_new (g_unix_input_stream_new (fds[0], TRUE));
  line = g_data_input_stream_read_line (ready, NULL, NULL, NULL);
  if (g_strcmp0 (line, "attached") != 0)
    {
      g_autofree char *err = NULL;

      g_subprocess_communicate_utf8 (attach, NULL, NULL, NULL, &err, NULL);
      g_test_skip_printf ("tidemark attach cannot run here: %s", err ? err : "?");
      g_object_unref (attach);
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      return NULL;
    }
  return attach;
}

static void
wait_attach (GSubprocess *attach)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;

  g_subprocess_communicate_utf8 (attach, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  if (!g_subprocess_get_successful (attach))
    g_error ("tidemark attach failed: %s", err);
}

static gint64
process_end_of (TideTrace  *trace,
                GPid        pid,
                const char *what)
{
  g_autofree char *sql = g_strdup_printf ("SELECT %s FROM process_ends e JOIN processes p"
                                          " ON p.id = e.process_id WHERE p.pid = %d"
                                          " ORDER BY p.id DESC LIMIT 1", what, pid);

  return tide_test_query_int (trace, sql);
}

/* Attached to a process that the OOM killer ends: an OOM kill at the
 * cgroup's limit. */
static void
test_attach_victim (void)
{
  g_autoptr(MemoryCgroup) cgroup = make_memory_cgroup (JOB_LIMIT);
  g_autofree char *dir = tide_test_make_dir ("tide-death-attach");
  g_autofree char *trace_path = g_build_filename (dir, "attach.tide", NULL);
  g_autofree char *script = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  int in = -1, status = 0;
  GPid pid;

  if (cgroup == NULL)
    return;
  /* It waits for a line before it becomes the job, so that nothing of
   * the job happens before the attach. */
  script = g_strdup_printf ("echo $$ > '%s' && read go && exec '%s' --keep-mib 8", cgroup->procs,
                            TIDE_TARGETS_DIR "/dying-steps");
  pid = start_shell (script, &in);
  attach = start_attach (pid, trace_path);
  if (attach == NULL)
    {
      tide_test_remove_dir (dir);
      return;
    }
  g_assert_cmpint (write (in, "go\n", 3), ==, 3);
  close (in);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  wait_attach (attach);
  trace = tide_test_open_trace (trace_path);
  g_assert_cmpint (process_end_of (trace, pid, "signal"), ==, SIGKILL);
  g_assert_cmpint (process_end_of (trace, pid, "oom"), ==,
                   g_str_equal (cgroup->version, "cgroup-v1") ? TIDE_OOM_CGROUP_V1 : TIDE_OOM_CGROUP_V2);
  g_assert_cmpint (process_end_of (trace, pid, "limit_bytes"), ==, JOB_LIMIT);
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

/* Attached to a process killed by a plain SIGKILL just after the OOM
 * killer ended another process of its cgroup: the cgroup's and the
 * machine's OOM kill counts moved, but the kernel named the other one as
 * the victim, so this is no OOM kill. */
static void
test_attach_bystander (void)
{
  g_autoptr(MemoryCgroup) cgroup = make_memory_cgroup (JOB_LIMIT);
  g_autofree char *dir = tide_test_make_dir ("tide-death-attach");
  g_autofree char *trace_path = g_build_filename (dir, "attach.tide", NULL);
  g_autofree char *sleeper = NULL;
  g_autofree char *hog = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  const char *argv[] = { "/bin/sh", "-c", NULL, NULL };
  g_autoptr(GError) error = NULL;
  int in = -1, status = 0;
  GPid pid;

  if (cgroup == NULL)
    return;
  sleeper = g_strdup_printf ("echo $$ > '%s' && exec sleep 300", cgroup->procs);
  pid = start_shell (sleeper, &in);
  wait_for_comm (pid, "sleep");
  attach = start_attach (pid, trace_path);
  if (attach == NULL)
    {
      tide_test_remove_dir (dir);
      return;
    }
  /* Another process of the cgroup outgrows it and is the OOM killer's. */
  hog = g_strdup_printf ("echo $$ > '%s' && exec '%s' --keep-mib 8", cgroup->procs,
                         TIDE_TARGETS_DIR "/dying-steps");
  argv[2] = hog;
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  /* Then the followed one, by hand. */
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  close (in);
  wait_attach (attach);
  trace = tide_test_open_trace (trace_path);
  g_assert_cmpint (process_end_of (trace, pid, "signal"), ==, SIGKILL);
  g_assert_cmpint (process_end_of (trace, pid, "oom"), ==, TIDE_OOM_NONE);
  g_clear_object (&trace);
  tide_test_remove_dir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/death/oom-cgroup", test_oom_cgroup);
  g_test_add_func ("/death/plain-sigkill", test_plain_sigkill);
  g_test_add_func ("/death/record-bystander", test_record_bystander);
  g_test_add_func ("/death/exit-status", test_exit_status);
  g_test_add_func ("/death/loader-worker-oom", test_loader_worker_oom);
  g_test_add_func ("/death/attach-victim", test_attach_victim);
  g_test_add_func ("/death/attach-bystander", test_attach_bystander);
  return g_test_run ();
}
