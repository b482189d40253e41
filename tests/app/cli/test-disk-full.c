/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A disk that fills mid-run: `tidemark record --all` of disk-filler onto a
 * 7 MiB tmpfs, mounted in a private mount namespace of this test (root
 * only).  The first five steps fit; the test waits until they are in the
 * trace, then lets the job churn far more rows than the disk holds.  The
 * job must run to its end, `tidemark record` must exit with the job's
 * status and say in one line what happened, and the trace must hold
 * exactly the first five steps, marked as ending early.
 */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tide-test-util.h"
#include "tide-trace.h"

#define DISK_SIZE      "size=7m"
#define FILLER_STATUS  7
/* disk-filler's steps 1-5: 3 blocks each of 70000 + 10 * step + k bytes. */
#define SMALL_BLOCKS   "size BETWEEN 70010 AND 70052"
#define SMALL_COUNT    15
#define SMALL_BYTES    (15 * 70000 + 3 * 10 * (1 + 2 + 3 + 4 + 5) + 5 * (0 + 1 + 2))
#define WAIT_US        (60 * G_USEC_PER_SEC)
#define FILE_LIMIT     (2 * 1024 * 1024)

/* Mounts a small tmpfs on @mount_point, seen by this process and its
 * children only. */
static gboolean
mount_small_disk (const char *mount_point)
{
  return geteuid () == 0 &&
         unshare (CLONE_NEWNS) == 0 &&
         mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
         mount ("tidemark-test", mount_point, "tmpfs", MS_NOSUID | MS_NODEV, DISK_SIZE) == 0;
}

/* One number from the trace while it is written, or -1 while it cannot be
 * read yet. */
static gint64
read_while_written (const char *path,
                    const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 value = -1;

  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* Waits until steps 1-5 and their blocks are committed to @trace. */
static gboolean
has_exited (GPid pid)
{
  siginfo_t info = { 0 };

  return waitid (P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

static void
wait_for_small_steps (const char *trace,
                      GPid        recorder)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_US;

  while (read_while_written (trace, "SELECT (SELECT count (*) FROM steps) * 100"
                                    " + (SELECT count (*) FROM allocations WHERE "
                                    SMALL_BLOCKS ")") != 5 * 100 + SMALL_COUNT)
    {
      if (g_get_monotonic_time () > deadline || has_exited (recorder))
        g_error ("steps 1-5 never reached the trace");
      g_usleep (20 * 1000);
    }
}

/* Lets disk-filler go on: blocks until it opens the fifo. */
static void
say_go (const char *fifo)
{
  int fd = open (fifo, O_WRONLY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, "go\n", 3), ==, 3);
  close (fd);
}

/* Everything @fd gives until its end. */
static char *
read_all (int fd)
{
  GString *text = g_string_new (NULL);
  char buffer[4096];
  ssize_t n;

  while ((n = read (fd, buffer, sizeof buffer)) > 0)
    g_string_append_len (text, buffer, n);
  close (fd);
  return g_string_free (text, FALSE);
}

static void
assert_matches (const char *pattern,
                const char *text)
{
  if (!g_regex_match_simple (pattern, text, G_REGEX_DOTALL, 0))
    g_error ("'%s' does not match %s", text, pattern);
}

static void
check_partial_trace (const char *path,
                     const char *reason_wanted)
{
  g_autoptr(TideTrace) trace = tide_test_open_trace (path);
  g_autofree char *early_end = tide_trace_describe_early_end (trace);
  g_autofree char *early_pattern = g_strdup_printf ("^%s at [0-9]+\\.[0-9] s$", reason_wanted);
  g_autofree char *steps = NULL;
  g_autofree char *reason = NULL;

  g_assert_false (tide_trace_is_complete (trace));
  assert_matches (early_pattern, early_end);
  steps = tide_test_query_text (trace, "SELECT group_concat (number) FROM"
                                       " (SELECT number FROM steps ORDER BY number)");
  g_assert_cmpstr (steps, ==, "1,2,3,4,5");
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations WHERE "
                                               SMALL_BLOCKS), ==, SMALL_COUNT);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT sum (size) FROM allocations WHERE "
                                               SMALL_BLOCKS), ==, SMALL_BYTES);
  /* Some of step 6's churn got in before the disk filled, never all. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations"
                                               " WHERE size = 64"), <, 300000);
  reason = tide_test_query_text (trace, "SELECT value FROM meta WHERE key = 'stopped_reason'");
  g_assert_cmpstr (reason, ==, reason_wanted);
  /* What describes the end was kept past the stop. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta"
                                               " WHERE key = 'exit_status'"), ==, FILLER_STATUS);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT exit_status FROM processes"
                                               " WHERE parent_id IS NULL"), ==, FILLER_STATUS);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT (SELECT value FROM meta"
                                               " WHERE key = 'stopped_ns')"
                                               " > (SELECT max (end_ns) FROM steps)"), ==, 1);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT value FROM meta"
                                               " WHERE key = 'complete'"), ==, 0);
}

/* `tidemark report` reads it, and says it ends early. */
static void
check_report (const char *path,
              const char *reason)
{
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", path, "--steps", "--format", "csv", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *escaped = g_regex_escape_string (path, -1);
  g_autofree char *pattern = NULL;
  g_auto(GStrv) lines = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  pattern = g_strdup_printf ("^tidemark: note: %s ends early \\(%s at [0-9]+\\.[0-9] s\\);"
                             " the report covers what was written before\n$",
                             escaped, reason);
  assert_matches (pattern, err);
  lines = g_strsplit (out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 5 + 1);  /* header, 5 steps, "" */
}

typedef struct
{
  int   status;   /* exit status, or 128 + signal */
  char *out;
  char *err;
} Run;

/* RLIMIT_FSIZE for the recorder (and its job, which writes no file). */
static void
limit_file_size (gpointer data)
{
  struct rlimit limit = { GPOINTER_TO_SIZE (data), GPOINTER_TO_SIZE (data) };

  setrlimit (RLIMIT_FSIZE, &limit);
}

/* `tidemark record --all -o @trace -- disk-filler`, told to go on once
 * its first five steps are in the trace; a @file_limit if not 0. */
static void
record_filler (const char *dir,
               const char *trace,
               gsize       file_limit,
               Run        *run)
{
  g_autofree char *fifo = g_build_filename (dir, "go", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--all", "-o", trace, "--",
                         TIDE_DISK_FILLER, fifo, NULL };
  g_autoptr(GError) error = NULL;
  int out_fd = -1, err_fd = -1, wait_status = 0;
  GPid recorder;

  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                            file_limit ? limit_file_size : NULL, GSIZE_TO_POINTER (file_limit),
                            &recorder, NULL, &out_fd, &err_fd, &error);
  g_assert_no_error (error);
  wait_for_small_steps (trace, recorder);
  say_go (fifo);
  /* A few lines each: neither pipe fills while the other is read. */
  run->out = read_all (out_fd);
  run->err = read_all (err_fd);
  g_assert_cmpint (waitpid (recorder, &wait_status, 0), ==, recorder);
  g_spawn_close_pid (recorder);
  run->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status)
                                        : 128 + WTERMSIG (wait_status);
}

static void
test_disk_full (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-disk-full");
  g_autofree char *disk = g_build_filename (dir, "disk", NULL);
  g_autofree char *trace = g_build_filename (disk, "run.tide", NULL);
  g_autofree char *wal = g_strconcat (trace, "-wal", NULL);
  g_autofree char *reserve = g_strconcat (trace, "-reserve", NULL);
  Run run = { 0 };

  g_assert_cmpint (g_mkdir (disk, 0700), ==, 0);
  if (!mount_small_disk (disk))
    {
      g_test_skip ("needs root, to mount a small tmpfs in a mount namespace of its own");
      g_rmdir (disk);
      tide_test_remove_dir (dir);
      return;
    }
  record_filler (dir, trace, 0, &run);

  /* The job ran to its end; the recorder exits with its status. */
  g_assert_cmpstr (run.out, ==, "disk-filler: 8 steps\n");
  g_assert_cmpint (run.status, ==, FILLER_STATUS);
  assert_matches ("^tidemark: disk full at [0-9]+\\.[0-9] s; the trace holds steps 1-5\n$",
                  run.err);
  /* One file, as a finished trace: the WAL folded in, the reserve gone. */
  g_assert_true (g_file_test (trace, G_FILE_TEST_IS_REGULAR));
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (reserve, G_FILE_TEST_EXISTS));

  check_partial_trace (trace, "disk full");
  check_report (trace, "disk full");

  umount2 (disk, MNT_DETACH);
  g_rmdir (disk);
  tide_test_remove_dir (dir);
  g_free (run.out);
  g_free (run.err);
}

/* RLIMIT_FSIZE: the write fails with EFBIG, where SIGXFSZ would have
 * killed the recorder.  The database cannot grow to take the WAL in, so
 * the trace stays a database and its WAL, which readers open as one. */
static void
test_file_size_limit (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-fsize");
  g_autofree char *trace = g_build_filename (dir, "run.tide", NULL);
  Run run = { 0 };

  record_filler (dir, trace, FILE_LIMIT, &run);

  g_assert_cmpstr (run.out, ==, "disk-filler: 8 steps\n");
  g_assert_cmpint (run.status, ==, FILLER_STATUS);
  assert_matches ("^tidemark: file size limit reached at [0-9]+\\.[0-9] s;"
                  " the trace holds steps 1-5\n$", run.err);
  check_partial_trace (trace, "file size limit reached");
  check_report (trace, "file size limit reached");

  tide_test_remove_dir (dir);
  g_free (run.out);
  g_free (run.err);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/record/disk-full", test_disk_full);
  g_test_add_func ("/record/file-size-limit", test_file_size_limit);
  return g_test_run ();
}
