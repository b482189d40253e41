/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark attach` end to end: attach-toucher keeps touching new pages
 * from attach_touch_pages in some steps; the trace must show them as
 * resident pages of that stack, RSS per step as the program itself read it
 * from /proc/self/status, and the program must run on unchanged after a
 * detach.  Needs root (CI runs as root) and a kernel with BTF.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <glib/gstdio.h>

#include "tide-report.h"
#include "tide-trace.h"

#define TOUCH_STEPS   6
#define TOUCH_MIB     8
/* Steps 1, 2, 4 and 5 touch (not the multiples of 3). */
#define KEPT_BYTES    (4.0 * TOUCH_MIB * 1048576.0)

typedef struct
{
  char *dir;
  char *trace;
  char *rss_log;
} Fixture;

static const char *
build_path (const char *relative)
{
  static char path[4096];

  g_snprintf (path, sizeof path, "%s/%s", g_getenv ("TIDEMARK_BUILD_ROOT"), relative);
  return path;
}

static gboolean
can_attach (void)
{
  if (geteuid () != 0)
    {
      g_test_skip ("attaching needs root: run the bpf suite as root");
      return FALSE;
    }
  if (!g_file_test ("/sys/kernel/btf/vmlinux", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("this kernel has no BTF (/sys/kernel/btf/vmlinux)");
      return FALSE;
    }
  return TRUE;
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = g_dir_make_tmp ("tide-attach-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->trace = g_build_filename (f->dir, "trace.tide", NULL);
  f->rss_log = g_build_filename (f->dir, "rss.log", NULL);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GDir) dir = g_dir_open (f->dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (f->dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f->trace);
  g_free (f->rss_log);
}

static GSubprocess *
start_toucher (const char *rss_log,
               const char *sleep_ms,
               gboolean    wait)
{
  g_autoptr(GError) error = NULL;
  const char *argv[] = {
    build_path ("tests/bpf/attach-toucher"), "--steps", G_STRINGIFY (TOUCH_STEPS),
    "--mib", G_STRINGIFY (TOUCH_MIB), "--sleep-ms", sleep_ms, "--rss-log", rss_log,
    wait ? "--wait" : NULL, NULL,
  };
  GSubprocess *p = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                      G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                      G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);

  g_assert_no_error (error);
  return p;
}

/* Starts `tidemark attach` and waits for its "attached" line. */
static GSubprocess *
start_attach (const char *pid,
              const char *trace,
              const char *duration)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) ready = NULL;
  g_autofree char *line = NULL;
  int fds[2];
  GSubprocess *p;

  g_assert_cmpint (pipe (fds), ==, 0);
  g_subprocess_launcher_take_fd (launcher, fds[1], 3);
  p = g_subprocess_launcher_spawn (launcher, &error, build_path ("app/tidemark"), "attach",
                                   "-p", pid, "-o", trace, "--ready-fd", "3", "--quiet",
                                   duration ? "--duration" : NULL, duration, NULL);
  g_assert_no_error (error);
  ready = g_data_input_stream_new (g_unix_input_stream_new (fds[0], TRUE));
  line = g_data_input_stream_read_line (ready, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (line, ==, "attached");
  return p;
}

static void
say_go (GSubprocess *toucher)
{
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all (g_subprocess_get_stdin_pipe (toucher), "go\n", 3, NULL, NULL,
                             &error);
  g_assert_no_error (error);
}

static char *
finish (GSubprocess *p)
{
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 0);
  return out;
}

static gboolean
stack_has (const TideGroup *g,
           const char      *function,
           guint            depth)
{
  const TideFrame *frame;

  if (g->frames->len <= depth)
    return FALSE;
  frame = g_ptr_array_index (g->frames, depth);
  return g_strcmp0 (frame->function, function) == 0;
}

static void
check_resident_pages (TideTrace *trace)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, &error);
  double bytes = 0;

  g_assert_no_error (error);
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);

      if (!stack_has (g, "attach_touch_pages", 0))
        continue;
      /* The scratch pages were unmapped: only main's calls hold pages. */
      g_assert_true (stack_has (g, "main", 1));
      bytes += g->bytes;
    }
  g_test_message ("resident pages of attach_touch_pages: %.0f, expected %.0f", bytes, KEPT_BYTES);
  g_assert_cmpfloat (bytes, >=, KEPT_BYTES * 0.9);
  g_assert_cmpfloat (bytes, <=, KEPT_BYTES * 1.1);
}

static void
check_rss_per_step (TideTrace  *trace,
                    const char *rss_log)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) steps = tide_report_steps (trace, &error);
  g_autofree char *log = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (rss_log, &log, NULL, NULL));
  lines = g_strsplit (g_strstrip (log), "\n", -1);
  g_assert_cmpuint (steps->len, ==, TOUCH_STEPS);
  g_assert_cmpuint (g_strv_length (lines), ==, TOUCH_STEPS);
  for (guint i = 0; i < steps->len; i++)
    {
      TideStepRow *row = g_ptr_array_index (steps, i);
      int number = 0;
      gint64 vm_rss = 0;

      g_assert_cmpint (sscanf (lines[i], "%d %" G_GINT64_FORMAT, &number, &vm_rss), ==, 2);
      g_assert_cmpint (row->number, ==, number);
      g_assert_true (row->has_rss);
      g_test_message ("step %d: trace RSS %" G_GINT64_FORMAT ", VmRSS %" G_GINT64_FORMAT,
                      number, row->rss_end, vm_rss);
      g_assert_cmpfloat (ABS ((double) (row->rss_end - vm_rss)), <=, 0.02 * vm_rss);
    }
}

static void
test_attach_resident_pages (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GSubprocess) toucher = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;
  g_autofree char *mode = NULL;

  if (!can_attach ())
    return;
  toucher = start_toucher (f->rss_log, "100", TRUE);
  attach = start_attach (g_subprocess_get_identifier (toucher), f->trace, NULL);
  say_go (toucher);
  out = finish (toucher);
  g_assert_cmpstr (out, ==, "attach-toucher: 6 steps, 32 MiB kept, checksum 1240320\n");
  /* The attach ends by itself when its target exits. */
  attach_out = finish (attach);

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  mode = tide_trace_dup_meta (trace, "mode");
  g_assert_cmpstr (mode, ==, "attach");
  check_resident_pages (trace);
  check_rss_per_step (trace, f->rss_log);
}

/* Alive and not a zombie. */
static gboolean
is_running (const char *pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%s/stat", pid);
  g_autofree char *stat = NULL;
  const char *paren;

  if (!g_file_get_contents (path, &stat, NULL, NULL) || (paren = strrchr (stat, ')')) == NULL)
    return FALSE;
  return paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* Detaching in the middle leaves the program to finish as it would have. */
static void
test_attach_detach (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(GSubprocess) plain = NULL;
  g_autoptr(GSubprocess) toucher = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *plain_out = NULL;
  g_autofree char *out = NULL;
  g_autofree char *attach_out = NULL;

  if (!can_attach ())
    return;
  plain = start_toucher (f->rss_log, "1", FALSE);
  plain_out = finish (plain);

  /* Six steps of 400 ms: the attach leaves after about one of them. */
  toucher = start_toucher (f->rss_log, "400", TRUE);
  attach = start_attach (g_subprocess_get_identifier (toucher), f->trace, "0.5");
  say_go (toucher);
  attach_out = finish (attach);
  g_assert_true (is_running (g_subprocess_get_identifier (toucher)));
  out = finish (toucher);
  g_assert_cmpstr (out, ==, plain_out);

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
}

/* Run as nobody: one clear line that says what is needed. */
static void
drop_to_nobody (gpointer data)
{
  if (setgroups (0, NULL) != 0 || setgid (65534) != 0 || setuid (65534) != 0)
    _exit (99);
}

static void
test_attach_unprivileged (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) p = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *pid = g_strdup_printf ("%d", getpid ());
  g_autofree char *err = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *trace = g_build_filename (g_get_tmp_dir (), "tide-never-written.tide", NULL);

  if (geteuid () != 0)
    {
      g_test_skip ("needs root to become nobody");
      return;
    }
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_child_setup (launcher, drop_to_nobody, NULL, NULL);
  p = g_subprocess_launcher_spawn (launcher, &error, build_path ("app/tidemark"), "attach",
                                   "-p", pid, "-o", trace, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (p, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 1);
  expected = g_strdup_printf ("tidemark: attaching needs root, or the CAP_BPF and CAP_PERFMON "
                              "capabilities (try: sudo tidemark attach -p %s)\n", pid);
  g_assert_cmpstr (err, ==, expected);
  g_assert_false (g_file_test (trace, G_FILE_TEST_EXISTS));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/attach/resident-pages", Fixture, NULL, fixture_setup,
              test_attach_resident_pages, fixture_teardown);
  g_test_add ("/attach/detach", Fixture, NULL, fixture_setup, test_attach_detach,
              fixture_teardown);
  g_test_add ("/attach/unprivileged", Fixture, NULL, fixture_setup, test_attach_unprivileged,
              fixture_teardown);
  return g_test_run ();
}
