/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * `tidemark attach` end to end (test-attach.c): Python programs, their
 * frames across exec and fork and in every version attach reads, and
 * PyTorch jobs: tensors, a DDP rank, optimizer steps.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <glib/gstdio.h>

#include "tide-report.h"
#include "tide-schema.h"
#include "tide-test-attach.h"
#include "tide-test-util.h"
#include "tide-trace.h"

/* ---- Python ----------------------------------------------------------------- */

#define PYTHON           "/usr/bin/python3"
#define TORCH_LEAK       TIDE_BPF_TESTS_DIR "/attach-torch-leak.py"
#define TORCH_STEPS      40
/* Each step keeps a 512 x 1024 float32 tensor. */
#define TORCH_KEPT_BYTES (TORCH_STEPS * 512.0 * 1024.0 * 4.0)

static gboolean
can_attach_torch (void)
{
  if (!tide_test_can_attach ())
    return FALSE;
  if (!tide_test_python_imports (PYTHON, "torch"))
    {
      g_test_skip (PYTHON " cannot import torch (install python3-torch)");
      return FALSE;
    }
  return TRUE;
}

static char *
read_target_line (GDataInputStream *out)
{
  g_autoptr(GError) error = NULL;
  char *line = g_data_input_stream_read_line (out, NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (line);
  return line;
}

/* Starts a Python program that says "ready" and waits for "go" on stdin,
 * without meson's MALLOC_PERTURB_ (which would have malloc touch each block
 * first), and waits for its "ready"; *@out reads its later lines. */
static GSubprocess *
start_python (const char * const  *argv,
              GDataInputStream   **out)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  GSubprocess *p;

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                        G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_unsetenv (launcher, "MALLOC_PERTURB_");
  p = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  *out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (p));
  ready = read_target_line (*out);
  g_assert_cmpstr (ready, ==, "ready");
  return p;
}

/* Detaches (SIGINT), then lets the target end: it holds what it kept until
 * its stdin closes. */
static char *
detach (GSubprocess *attach)
{
  g_autoptr(GError) error = NULL;
  char *attach_err = NULL;

  g_subprocess_send_signal (attach, SIGINT);
  g_subprocess_communicate_utf8 (attach, NULL, NULL, NULL, &attach_err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (attach));
  g_assert_cmpint (g_subprocess_get_exit_status (attach), ==, 0);
  return attach_err;
}

static char *
detach_then_end (GSubprocess *attach,
                 GSubprocess *target)
{
  g_autoptr(GError) error = NULL;
  char *attach_err = detach (attach);

  g_output_stream_close (g_subprocess_get_stdin_pipe (target), NULL, &error);
  g_assert_no_error (error);
  g_subprocess_wait_check (target, NULL, &error);
  g_assert_no_error (error);
  return attach_err;
}

/* Runs the Python program @argv attached (`attach [OPTION VALUE]`, loud
 * or --quiet) from its "ready" to its last line, which must be @done, and
 * lets it end; returns what attach said on stderr (NULL when quiet). */
static char *
attach_for_python_run (const char * const *argv,
                       const char         *trace,
                       const char         *option,
                       const char         *value,
                       gboolean            loud,
                       const char         *done)
{
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(GSubprocess) target = start_python (argv, &out);
  g_autoptr(GSubprocess) attach = start_attach_full (g_subprocess_get_identifier (target), trace,
                                                     option, value, NULL, loud);
  g_autofree char *last = NULL;

  say_go (target);
  last = read_target_line (out);
  g_assert_cmpstr (last, ==, done);
  return detach_then_end (attach, target);
}

/* The retained groups of @trace, which must have some; the top one's
 * frames go to the test's log. */
static GPtrArray *
retained_groups (TideTrace   *trace,
                 TideGroupBy  by)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *groups = tide_report_retained (trace, 0, by, &error);
  const TideGroup *top;

  g_assert_no_error (error);
  g_assert_cmpuint (groups->len, >, 0);
  top = g_ptr_array_index (groups, 0);
  for (guint i = 0; i < top->frames->len; i++)
    {
      const TideFrame *frame = g_ptr_array_index (top->frames, i);

      g_test_message ("top stack %u: %s %s %s:%d (%s)", i,
                      frame->kind == TIDE_FRAME_PYTHON ? "python" : "native", frame->function,
                      frame->file, frame->line, frame->module);
    }
  return groups;
}

static gint
find_frame (const TideGroup *g,
            guint            from,
            const char      *function)
{
  for (guint i = from; i < g->frames->len; i++)
    if (g_strcmp0 (((const TideFrame *) g_ptr_array_index (g->frames, i))->function,
                   function) == 0)
      return (gint) i;
  return -1;
}

static void
check_python_scope_and_suspect (TideTrace *trace,
                                gint64     stack_id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) scopes = tide_report_retained (trace, 0, TIDE_GROUP_BY_SCOPE, &error);
  g_autoptr(GPtrArray) suspects = NULL;
  const TideGroup *g;

  g_assert_no_error (error);
  g_assert_cmpuint (scopes->len, >, 0);
  g = g_ptr_array_index (scopes, 0);
  g_assert_cmpstr (g->scope_path, ==, "Net/DecoupledLinear");
  g_assert_cmpfloat (fabs ((double) g->bytes - TORCH_KEPT_BYTES), <=, 0.1 * TORCH_KEPT_BYTES);
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, >, 0);
  g = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (g->stack_id, ==, stack_id);
}

/* A CPU PyTorch training loop (attach-torch-leak.py), joined while it
 * runs (steps every 200 ms), leaks through the torch.cat of
 * DecoupledLinear.forward.  The top retained stack is that leak, within
 * 10% of what the steps kept (PyTorch's CPU allocator gives the cat's
 * blocks; where it is not probed, the pages the cat touched first, less
 * the first page of each block, malloc's); its Python frames stand where
 * the evaluation loop's C frames were: forward at the marked line is the
 * innermost Python frame and the headline, the nn.Module call and
 * Net.forward, train, main and <module> follow in order, and the native
 * frames go on to _start.
 * Its module scope is the classes of the forward frames' `self`,
 * "Net/DecoupledLinear", which is also the top scope; the first leak
 * suspect is the same stack. */
static void
test_attach_python_frames (Fixture       *f,
                           gconstpointer  data)
{
  static const char * const callers[] = {
    "Module._call_impl", "Net.forward", "Module._call_impl", "train", "main", "<module>",
  };
  /* A pause of 50 ms a step: the leak spans some ten steps of 200 ms. */
  const char * const argv[] = { PYTHON, TORCH_LEAK, G_STRINGIFY (TORCH_STEPS), "50", NULL };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = NULL;
  g_autofree char *attach_err = NULL;
  const TideFrame *frame, *headline;
  TideGroup *top;
  gint at;

  if (!can_attach_torch ())
    return;
  /* The first step ran before the attach. */
  attach_err = attach_for_python_run (argv, f->trace, "--step-interval", "200", FALSE,
                                      "done " G_STRINGIFY (TORCH_STEPS) " 41");
  g_assert_null (attach_err);   /* --quiet: no pipe */

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  groups = retained_groups (trace, TIDE_GROUP_BY_STACK);
  top = g_ptr_array_index (groups, 0);
  g_assert_cmpfloat (fabs ((double) top->bytes - TORCH_KEPT_BYTES), <=, 0.1 * TORCH_KEPT_BYTES);

  at = find_frame (top, 0, "DecoupledLinear.forward");
  g_assert_cmpint (at, >, 0);
  frame = g_ptr_array_index (top->frames, at);
  g_assert_cmpint (frame->kind, ==, TIDE_FRAME_PYTHON);
  g_assert_true (g_str_has_suffix (frame->file, "/tests/capture/attach/attach-torch-leak.py"));
  g_assert_cmpint (frame->line, ==,
                   tide_test_source_line ("tests/capture/attach/attach-torch-leak.py", "# LEAK-LINE"));
  for (gint i = 0; i < at; i++)
    g_assert_cmpint (((const TideFrame *) g_ptr_array_index (top->frames, i))->kind, !=,
                     TIDE_FRAME_PYTHON);
  headline = tide_group_get_headline (top);
  g_assert_true (headline == frame);

  for (guint i = 0; i < G_N_ELEMENTS (callers); i++)
    {
      gint next = find_frame (top, (guint) at + 1, callers[i]);

      g_assert_cmpint (next, >, at);
      frame = g_ptr_array_index (top->frames, next);
      g_assert_cmpint (frame->kind, ==, TIDE_FRAME_PYTHON);
      at = next;
    }
  frame = g_ptr_array_index (top->frames, top->frames->len - 1);
  g_assert_cmpstr (frame->function, ==, "_start");
  g_assert_cmpstr (top->scope_path, ==, "Net/DecoupledLinear");

  check_python_scope_and_suspect (trace, top->stack_id);
}

#define TORCH_KEEP_PY    TIDE_BPF_TESTS_DIR "/attach-torch-keep.py"
#define TORCH_KEEP_STEPS 40
#define TORCH_KEEP_PAUSE_MS "30"
/* keep_activation keeps a 256 x 256 float32 tensor a step. */
#define TORCH_KEEP_BYTES (256.0 * 256.0 * 4.0)

/* The first suspect of @trace by stack: its headline is keep_activation at
 * the KEEP-LINE of @script; its growth a step goes to *@per_step. */
static void
check_keep_activation_suspect (TideTrace  *trace,
                               const char *what,
                               const char *script,
                               double     *per_step)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, &error);
  const TideGroup *g;
  const TideFrame *headline;

  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, >, 0);
  for (guint i = 0; i < MIN (suspects->len, 3); i++)
    {
      g = g_ptr_array_index (suspects, i);
      headline = tide_group_get_headline (g);
      g_test_message ("%s: suspect %u: %s:%d, %.0f B/step from step %d", what, i,
                      headline ? headline->function : "?", headline ? headline->line : 0,
                      g->bytes_per_step, g->growth_step);
    }
  g = g_ptr_array_index (suspects, 0);
  headline = tide_group_get_headline (g);
  g_assert_nonnull (headline);
  g_assert_cmpstr (headline->function, ==, "keep_activation");
  g_assert_cmpint (headline->kind, ==, TIDE_FRAME_PYTHON);
  g_assert_cmpstr (headline->file, ==, script);
  g_assert_cmpint (headline->line, ==, tide_test_source_line (script, "# KEEP-LINE"));
  *per_step = g->bytes_per_step;
}

/* What attach says first of a Python process that has not imported
 * torch, and the start of its next line. */
static char *
no_torch_yet_line (const char *pid)
{
  return g_strdup_printf ("tidemark: attach: process %s has not loaded PyTorch (no libc10): "
                          "optimizer steps count once it does; --step-interval MS marks steps "
                          "by time\n"
                          "tidemark: attached to process %s ", pid, pid);
}

/* A CPU training loop under AdamW keeps a 256 KiB tensor a step in
 * keep_activation() (attach-torch-keep.py), on pages that an earlier
 * backward touched first; it imports torch only once attached, so its
 * probes go on when libc10 is mapped.  Attached without --step-interval,
 * the steps are AdamW's, and the tensors are blamed on the line that made
 * them, by PyTorch's CPU allocator: the first suspect is keep_activation's line,
 * at 256 KiB a step within 15% (`record --torch` names the same, as
 * test_attach_ddp_rank checks on the same loop in a rank of a job), and
 * attach and report say which mechanism measured what. */
static void
test_attach_torch_tensors (Fixture       *f,
                           gconstpointer  data)
{
  const char * const argv[] = { PYTHON, TORCH_KEEP_PY, G_STRINGIFY (TORCH_KEEP_STEPS),
                                TORCH_KEEP_PAUSE_MS, "--wait", NULL };
  g_autofree char *attach_err = NULL, *done = NULL, *measured = NULL, *no_torch_yet = NULL;
  g_autofree char *report = NULL;
  g_autoptr(GSubprocess) target = NULL, attach = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(TideTrace) trace = NULL;
  double per_step;

  if (!can_attach_torch ())
    return;
  target = start_python (argv, &out);
  no_torch_yet = no_torch_yet_line (g_subprocess_get_identifier (target));
  attach = start_attach_full (g_subprocess_get_identifier (target), f->trace, NULL, NULL, NULL,
                              TRUE);
  say_go (target);
  done = read_target_line (out);
  g_assert_cmpstr (done, ==, "done " G_STRINGIFY (TORCH_KEEP_STEPS) " "
                   G_STRINGIFY (TORCH_KEEP_STEPS));
  attach_err = detach_then_end (attach, target);
  g_test_message ("attach said: %s", attach_err);
  g_assert_true (g_str_has_prefix (attach_err, no_torch_yet));
  trace = tide_test_open_trace (f->trace);
  /* The probes go on when the attach reads that libc10 was mapped: under
   * load it reads the import's flood of records late, and the first steps
   * pass unseen, with their tensors, which leaves the growth a step as it
   * is. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), >=,
                   TORCH_KEEP_STEPS / 2);
  check_keep_activation_suspect (trace, "attach", TORCH_KEEP_PY, &per_step);
  g_assert_cmpfloat (fabs (per_step - TORCH_KEEP_BYTES), <=, 0.15 * TORCH_KEEP_BYTES);
  /* Known only at the detach: torch was loaded after the attach. */
  g_assert_nonnull (strstr (attach_err, "tidemark: detached from process "));
  g_assert_nonnull (strstr (attach_err, " (1 page in 16 sampled, PyTorch's CPU allocator, "
                                        "optimizer steps); trace "));
  measured = tide_report_describe_attach (trace);
  g_assert_cmpstr (measured, ==, "Measured by attach: PyTorch's CPU tensors by the line that "
                   "allocated them (c10::alloc_cpu, sampled by bytes), other host memory by the "
                   "stack that first touched it (1 page in 16)");
  /* report leads its suspects with it. */
  report = tide_test_spawn_ok ((const char *[]) { build_path ("app/tidemark"), "report",
                                                  f->trace, "--suspects", NULL });
  g_assert_true (g_str_has_prefix (report, measured));
  g_assert_true (g_str_has_prefix (report + strlen (measured), "\n\nLeak suspects by stack"));
}

#define DDP_KEEP_PY TIDE_BPF_TESTS_DIR "/attach-ddp-keep.py"

/* Records attach-ddp-keep.py (@steps steps, a pause of @pause_ms after
 * each) with `record --torch` into @path. */
static void
record_ddp_keep (const char *path,
                 const char *steps,
                 const char *pause_ms)
{
  g_autofree char *port = g_strdup_printf ("%d", tide_test_free_tcp_port ());
  g_autoptr(GSubprocess) record = NULL;
  g_autoptr(GError) error = NULL;

  record = g_subprocess_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                             build_path ("app/tidemark"), "record", "--torch", "-o", path, "--",
                             PYTHON, DDP_KEEP_PY, port, steps, pause_ms, NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (record, NULL, &error));
  g_assert_no_error (error);
}

/* The same leak in rank 1 of a two-rank DistributedDataParallel job over
 * gloo, started with torch.multiprocessing.spawn (attach-ddp-keep.py):
 * attached to rank 1 alone while the job runs, the first suspect is
 * keep_activation's line, as `record --torch` of the whole job names it,
 * both at 256 KiB a step within 15%. */
static void
test_attach_ddp_rank (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *go = g_build_filename (f->dir, "go", NULL);
  g_autofree char *recorded = g_build_filename (f->dir, "recorded.tide", NULL);
  g_autofree char *port = g_strdup_printf ("%d", tide_test_free_tcp_port ());
  const char * const argv[] = { PYTHON, DDP_KEEP_PY, port, G_STRINGIFY (TORCH_KEEP_STEPS),
                                TORCH_KEEP_PAUSE_MS, go, NULL };
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) job = NULL, attach = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(TideTrace) trace = NULL, record_trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *said = NULL, *done = NULL, *attach_err = NULL;
  char rank_pid[16];
  double attached_per_step, recorded_per_step;

  if (!can_attach_torch ())
    return;
  g_unsetenv ("RANK");
  g_unsetenv ("LOCAL_RANK");
  g_unsetenv ("WORLD_SIZE");
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_unsetenv (launcher, "MALLOC_PERTURB_");
  job = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (job));
  said = read_target_line (out);
  g_assert_cmpint (sscanf (said, "rank 1 pid %15s", rank_pid), ==, 1);
  attach = start_attach_full (rank_pid, f->trace, NULL, NULL, NULL, TRUE);
  g_assert_true (g_file_set_contents (go, "", 0, NULL));
  done = read_target_line (out);
  g_assert_cmpstr (done, ==, "done " G_STRINGIFY (TORCH_KEEP_STEPS) " "
                   G_STRINGIFY (TORCH_KEEP_STEPS));
  attach_err = detach (attach);
  g_test_message ("attach said: %s", attach_err);
  g_assert_cmpint (g_unlink (go), ==, 0);
  g_assert_true (g_subprocess_wait_check (job, NULL, &error));
  g_assert_no_error (error);

  trace = tide_test_open_trace (f->trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), >=,
                   TORCH_KEEP_STEPS - 2);
  check_keep_activation_suspect (trace, "attach", DDP_KEEP_PY, &attached_per_step);
  g_assert_cmpfloat (fabs (attached_per_step - TORCH_KEEP_BYTES), <=, 0.15 * TORCH_KEEP_BYTES);

  record_ddp_keep (recorded, G_STRINGIFY (TORCH_KEEP_STEPS), TORCH_KEEP_PAUSE_MS);
  record_trace = tide_test_open_trace (recorded);
  check_keep_activation_suspect (record_trace, "record", DDP_KEEP_PY, &recorded_per_step);
  g_assert_cmpfloat (fabs (attached_per_step - recorded_per_step), <=, 0.15 * recorded_per_step);
  g_assert_null (tide_report_describe_attach (record_trace));
}

/* The top retained stack of a trace where grow() (below) kept 16 blocks
 * of 1 MiB, which bytes' repeat filled: grow at its line is the headline,
 * a Python frame. */
static void
check_grow_is_top (const char *path)
{
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = NULL;
  const TideFrame *headline;
  TideGroup *top;

  trace = tide_trace_open (path, &error);
  g_assert_no_error (error);
  groups = tide_report_retained (trace, 0, TIDE_GROUP_BY_STACK, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (groups->len, >, 0);
  top = g_ptr_array_index (groups, 0);
  headline = tide_group_get_headline (top);
  g_assert_nonnull (headline);
  g_assert_cmpint (headline->kind, ==, TIDE_FRAME_PYTHON);
  g_assert_cmpstr (headline->function, ==, "grow");
  g_assert_cmpstr (headline->file, ==, "<string>");
  g_assert_cmpint (headline->line, ==, 4);
  g_assert_cmpfloat (fabs ((double) top->bytes - 16.0 * 1048576), <=, 0.1 * 16.0 * 1048576);
}

#define GROW_CODE \
  "import os, sys\n" \
  "kept = []\n" \
  "def grow():\n" \
  "    kept.append(b'x' * (1 << 20))  # line 4\n" \
  "print('ready', flush=True)\n" \
  "sys.stdin.readline()\n"

/* A shell that the attach follows into the python it execs: that
 * interpreter has not started when the exec is seen, and its frames are
 * read once it has. */
static void
test_attach_python_exec (Fixture       *f,
                         gconstpointer  data)
{
  static const char code[] =
    GROW_CODE
    "for _ in range(16):\n"
    "    grow()\n"
    "print('done', flush=True)\n"
    "sys.stdin.readline()\n";
  const char * const argv[] = {
    "/bin/sh", "-c", "echo ready && read go && exec \"$0\" -c \"$1\"", PYTHON, code, NULL,
  };
  g_autoptr(GSubprocess) target = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(GDataInputStream) told = NULL;
  g_autofree char *ready = NULL, *done = NULL, *attach_err = NULL;

  if (!tide_test_can_attach ())
    return;
  target = start_python (argv, &out);
  attach = start_attach_telling (g_subprocess_get_identifier (target), f->trace, NULL, NULL,
                                 NULL, FALSE, &told);
  say_go (target);
  ready = read_target_line (out);
  g_assert_cmpstr (ready, ==, "ready");
  wait_for_python_followed (told, g_subprocess_get_identifier (target));
  say_go (target);
  done = read_target_line (out);
  g_assert_cmpstr (done, ==, "done");
  attach_err = detach_then_end (attach, target);
  check_grow_is_top (f->trace);
}

/* A python's fork (a DataLoader worker) has its Python frames too: its
 * parent's interpreter, at the same addresses. */
static void
test_attach_python_fork (Fixture       *f,
                         gconstpointer  data)
{
  static const char code[] =
    GROW_CODE
    "child = os.fork()\n"
    "if child == 0:\n"
    "    for _ in range(16):\n"
    "        grow()\n"
    "    print('done', flush=True)\n"
    "    sys.stdin.readline()\n"
    "    os._exit(0)\n"
    "os.waitpid(child, 0)\n";
  const char * const argv[] = { PYTHON, "-c", code, NULL };
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *attach_err = NULL;

  if (!tide_test_can_attach ())
    return;
  attach_err = attach_for_python_run (argv, f->trace, NULL, NULL, FALSE, "done");
  check_grow_is_top (f->trace);
  trace = tide_test_open_trace (f->trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM processes"), ==, 2);
}

/* pyenv's CPython @version ("3.8"), where it has one: Debian has only
 * 3.11.  NULL when there is none. */
static char *
find_pyenv_python (const char *version)
{
  g_autofree char *root = g_strdup (g_getenv ("PYENV_ROOT"));
  g_autofree char *versions = NULL;
  g_autofree char *prefix = g_strdup_printf ("%s.", version);
  g_autoptr(GDir) dir = NULL;
  const char *name;

  if (root == NULL)
    root = g_build_filename (g_get_home_dir (), ".pyenv", NULL);
  versions = g_build_filename (root, "versions", NULL);
  dir = g_dir_open (versions, 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *exe = NULL;

      if (!g_str_has_prefix (name, prefix) || !g_ascii_isdigit (name[strlen (prefix)]))
        continue;
      exe = g_strdup_printf ("%s/%s/bin/python%s", versions, name, version);
      if (g_file_test (exe, G_FILE_TEST_IS_EXECUTABLE))
        return g_steal_pointer (&exe);
    }
  return NULL;
}

#define PY_LEAK        TIDE_BPF_TESTS_DIR "/attach-py-leak.py"
#define PY_LEAK_BLOCKS 16

/* The next Python frame of @g from @from on: @function at @line of
 * attach-py-leak.py.  Returns its index. */
static gint
check_next_python_frame (const TideGroup *g,
                         gint             from,
                         const char      *function,
                         const char      *marker)
{
  gint at = find_frame (g, (guint) from, function);
  const TideFrame *frame;

  g_assert_cmpint (at, >=, from);
  frame = g_ptr_array_index (g->frames, at);
  g_assert_cmpint (frame->kind, ==, TIDE_FRAME_PYTHON);
  g_assert_true (g_str_has_suffix (frame->file, "/tests/capture/attach/attach-py-leak.py"));
  g_assert_cmpint (frame->line, ==, tide_test_source_line ("tests/capture/attach/attach-py-leak.py", marker));
  /* Nothing Python between the two: the evaluation frames stand for them. */
  for (gint i = from; i < at; i++)
    g_assert_cmpint (((const TideFrame *) g_ptr_array_index (g->frames, i))->kind, !=,
                     TIDE_FRAME_PYTHON);
  return at;
}

/* attach-py-leak.py under pyenv's CPython @data ("3.8" ... "3.13"): the
 * top retained stack is Store.grow at its line (grow before 3.11, where
 * code objects have no qualified name), under step and Block.forward at
 * theirs with map's C frames between them (two evaluations of the
 * interpreter), then main and the module, down to the native start; its bytes
 * are the 16 MiB kept, in the scope Block (the class of forward's `self`).
 * Attach says nothing of the version. */
static void
test_attach_python_version (Fixture       *f,
                            gconstpointer  data)
{
  const char *version = data;
  gboolean qualified = atoi (version + 2) >= 11;
  g_autofree char *python = find_pyenv_python (version);
  const char * const argv[] = { python, PY_LEAK, G_STRINGIFY (PY_LEAK_BLOCKS), NULL };
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = NULL;
  g_autoptr(GPtrArray) scopes = NULL;
  g_autofree char *attach_err = NULL;
  const TideFrame *frame;
  TideGroup *top;
  gint at;

  if (!tide_test_can_attach ())
    return;
  if (python == NULL)
    {
      g_autofree char *why = g_strdup_printf ("no CPython %s here (pyenv's versions)", version);

      g_test_skip (why);
      return;
    }
  attach_err = attach_for_python_run (argv, f->trace, NULL, NULL, TRUE,
                                      "done " G_STRINGIFY (PY_LEAK_BLOCKS));
  g_test_message ("%s", attach_err);
  g_assert_null (strstr (attach_err, "Python"));

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  groups = retained_groups (trace, TIDE_GROUP_BY_STACK);
  top = g_ptr_array_index (groups, 0);
  g_assert_cmpfloat (fabs ((double) top->bytes - PY_LEAK_BLOCKS * 1048576.0), <=,
                     0.1 * PY_LEAK_BLOCKS * 1048576.0);
  at = check_next_python_frame (top, 0, qualified ? "Store.grow" : "grow", "# LEAK-LINE");
  g_assert_true (tide_group_get_headline (top) == g_ptr_array_index (top->frames, at));
  at = check_next_python_frame (top, at + 1, "step", "# CALLER-LINE");
  /* map calls step from C: between the two evaluations. */
  g_assert_cmpint (find_frame (top, (guint) at + 1, "map_next"), >, at);
  g_assert_cmpint (find_frame (top, (guint) at + 1, "map_next"), <,
                   find_frame (top, (guint) at + 1, qualified ? "Block.forward" : "forward"));
  at = check_next_python_frame (top, at + 1, qualified ? "Block.forward" : "forward",
                                "# FORWARD-LINE");
  at = find_frame (top, (guint) at + 1, "main");
  g_assert_cmpint (at, >, 0);
  g_assert_cmpint (find_frame (top, (guint) at + 1, "<module>"), >, at);
  frame = g_ptr_array_index (top->frames, top->frames->len - 1);
  g_assert_cmpstr (frame->function, ==, "_start");

  /* Without steps no stack has a dominant scope: by scope, Block holds
   * what was kept. */
  scopes = retained_groups (trace, TIDE_GROUP_BY_SCOPE);
  top = g_ptr_array_index (scopes, 0);
  g_assert_cmpstr (top->scope_path, ==, "Block");
  g_assert_cmpfloat (fabs ((double) top->bytes - PY_LEAK_BLOCKS * 1048576.0), <=,
                     0.1 * PY_LEAK_BLOCKS * 1048576.0);
}

/* A Python older than 3.8 (pyenv's 3.7 or 3.6, where there is one):
 * attach says in one line that its frames are not supported, and records
 * native stacks. */
static void
test_attach_python_unsupported (Fixture       *f,
                                gconstpointer  data)
{
  static const char code[] =
    "import sys\n"
    "print('ready', flush=True)\n"
    "sys.stdin.readline()\n"
    "kept = [bytearray(b'x' * (1 << 20)) for _ in range(8)]\n"
    "print('done', flush=True)\n"
    "sys.stdin.readline()\n";
  g_autofree char *python = NULL;
  const char *argv[] = { NULL, "-c", code, NULL };
  g_autofree char *base = NULL, *expected = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *attach_err = NULL;

  if (!tide_test_can_attach ())
    return;
  if ((python = find_pyenv_python ("3.7")) == NULL && (python = find_pyenv_python ("3.6")) == NULL)
    {
      g_test_skip ("no CPython 3.7 or 3.6 here (pyenv's versions)");
      return;
    }
  argv[0] = python;
  attach_err = attach_for_python_run (argv, f->trace, NULL, NULL, TRUE, "done");

  base = g_path_get_basename (python);
  expected = g_strdup_printf ("tidemark: attach: Python %s frames are not supported (only 3.8 "
                              "to 3.13); native stacks only\n", base + strlen ("python"));
  g_test_message ("%s", attach_err);
  /* Said once, as the attach starts, then it goes on. */
  g_assert_true (g_str_has_prefix (attach_err, expected));
  g_assert_true (g_str_has_prefix (attach_err + strlen (expected),
                                   "tidemark: attached to process "));
  g_assert_null (strstr (attach_err + strlen (expected), "not supported"));

  trace = tide_trace_open (f->trace, &error);
  g_assert_no_error (error);
  /* The 8 MiB it kept, sampled, on native stacks. */
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM allocations"), >=,
                   8 * 256 / 16);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM frames WHERE kind = 2"),
                   ==, 0);
}

#define TORCH_STEPS_PY TIDE_BPF_TESTS_DIR "/attach-torch-steps.py"

/* The two optimizers of attach-torch-steps.py, as it names them: they
 * switch grad mode in each of the places torch.optim does (_use_grad, and
 * @torch.no_grad() under the profiler's wrapper), and one runs its
 * closure with gradients on inside its step. */
typedef struct
{
  const char *name;
  const char *first;
  const char *second;
} OptimizerPair;

static const OptimizerPair optimizer_pairs[] = {
  { "sgd-adam", "SGD", "Adam" },
  { "adamw", "AdamW", "AdamW" },
  { "lbfgs-adagrad", "LBFGS", "Adagrad+foreach" },
};

/* Optimizer steps without --step-interval: attach-torch-steps.py, joined
 * before it starts to train, steps two optimizers every iteration and
 * evaluates under torch.no_grad() every third one; it trains until a file
 * appears, made once the trace shows 20 steps.  The trace has a step for
 * each step of its first optimizer, give or take the one under way at the
 * detach: not the second optimizer's, not the evaluations', and each step
 * once though gradients go off and back on around it and in it. */
static void
test_attach_optimizer_steps (Fixture       *f,
                             gconstpointer  data)
{
  const OptimizerPair *pair = data;
  g_autofree char *stop = g_build_filename (f->dir, "stop", NULL);
  const char * const argv[] = { PYTHON, TORCH_STEPS_PY, stop, pair->first, pair->second, NULL };
  g_autoptr(GSubprocess) target = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *said = NULL, *attach_err = NULL;
  gint64 made = 0, found;

  if (!can_attach_torch ())
    return;
  target = start_python (argv, &out);
  attach = start_attach (g_subprocess_get_identifier (target), f->trace, NULL, NULL);
  say_go (target);
  wait_for_trace_steps (f->trace, 20);
  g_assert_true (g_file_set_contents (stop, "", 0, NULL));
  said = read_target_line (out);
  g_assert_cmpint (sscanf (said, "steps %" G_GINT64_FORMAT, &made), ==, 1);
  attach_err = detach_then_end (attach, target);

  trace = tide_test_open_trace (f->trace);
  found = tide_test_query_int (trace, "SELECT count (*) FROM steps");
  g_test_message ("optimizer steps made while attached: %" G_GINT64_FORMAT
                  ", steps in the trace: %" G_GINT64_FORMAT, made, found);
  g_assert_cmpint (made, >=, 20);
  g_assert_cmpint (found, >=, made - 1);
  g_assert_cmpint (found, <=, made + 1);
}

/* A Python job without PyTorch gets no steps from the optimizer finder,
 * and one line that says why; it runs on as it was. */
static void
test_attach_no_torch_steps (Fixture       *f,
                            gconstpointer  data)
{
  const char * const argv[] = { PYTHON, "-c", GROW_CODE
                                "for _ in range(16):\n"
                                "    grow()\n"
                                "print('done', len(kept), flush=True)\n"
                                "sys.stdin.readline()\n", NULL };
  g_autoptr(GSubprocess) target = NULL;
  g_autoptr(GSubprocess) attach = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(TideTrace) trace = NULL;
  g_autofree char *done = NULL, *attach_err = NULL, *expected = NULL;
  const char *pid;

  if (!tide_test_can_attach ())
    return;
  target = start_python (argv, &out);
  pid = g_subprocess_get_identifier (target);
  attach = start_attach_full (pid, f->trace, NULL, NULL, NULL, TRUE);
  say_go (target);
  done = read_target_line (out);
  g_assert_cmpstr (done, ==, "done 16");
  attach_err = detach_then_end (attach, target);
  g_test_message ("%s", attach_err);
  expected = no_torch_yet_line (pid);
  g_assert_true (g_str_has_prefix (attach_err, expected));
  check_grow_is_top (f->trace);
  trace = tide_test_open_trace (f->trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, 0);
}

/* A Python job that maps a libc10 without PyTorch's functions (a torch
 * built otherwise, or stripped): attach says in one line each that it
 * finds no optimizer steps and that tensors are left to page faults, and
 * the job runs on and ends as it would have. */
static void
test_attach_c10_without_symbols (Fixture       *f,
                                 gconstpointer  data)
{
  g_autofree char *libc10 = g_strdup (build_path ("tests/capture/attach/libc10.so"));
  const char * const argv[] = { PYTHON, "-c", "import ctypes, sys\n"
                                "ctypes.CDLL(sys.argv[1])\n"
                                "print('ready', flush=True)\n"
                                "sys.stdin.readline()\n"
                                "print('done', flush=True)\n"
                                "sys.stdin.readline()\n", libc10, NULL };
  g_autofree char *attach_err = NULL, *expected = NULL, *probes = NULL;
  g_autoptr(TideTrace) trace = NULL;

  if (!tide_test_can_attach ())
    return;
  attach_err = attach_for_python_run (argv, f->trace, NULL, NULL, TRUE, "done");
  g_test_message ("%s", attach_err);
  expected = g_strdup_printf ("tidemark: attach: %1$s has no c10::GradMode::set_enabled: no "
                              "optimizer steps; --step-interval MS marks steps by time\n"
                              "tidemark: attach: %1$s has no c10::alloc_cpu and c10::free_cpu: "
                              "PyTorch's tensors are blamed on the stack that first touched "
                              "their pages\n"
                              "tidemark: attached to process ", libc10);
  g_assert_true (g_str_has_prefix (attach_err, expected));
  trace = tide_test_open_trace (f->trace);
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, 0);
  probes = tide_test_query_text (trace, "SELECT value FROM meta WHERE key = 'c10_probes'");
  g_assert_cmpstr (probes, ==, "0");
}

/* The versions whose frames attach reads, as pyenv names them. */
static const char * const pyenv_versions[] = { "3.8", "3.9", "3.10", "3.11", "3.12", "3.13" };

/* The PyTorch jobs attached (and recorded): the slowest tests, which need
 * no machine to themselves, run as a suite of their own (--torch-jobs). */
void
add_torch_job_tests (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (optimizer_pairs); i++)
    {
      g_autofree char *name = g_strdup_printf ("/attach/torch/optimizer-steps-%s",
                                               optimizer_pairs[i].name);

      g_test_add (name, Fixture, &optimizer_pairs[i], fixture_setup,
                  test_attach_optimizer_steps, fixture_teardown);
    }
  g_test_add ("/attach/torch/tensors", Fixture, NULL, fixture_setup, test_attach_torch_tensors,
              fixture_teardown);
  g_test_add ("/attach/torch/ddp-rank", Fixture, NULL, fixture_setup, test_attach_ddp_rank,
              fixture_teardown);
}

/* The Python programs attached, beside the native ones of test-attach.c. */
void
add_attach_python_tests (void)
{
  g_test_add ("/attach/python-frames", Fixture, NULL, fixture_setup, test_attach_python_frames,
              fixture_teardown);
  g_test_add ("/attach/python-exec", Fixture, NULL, fixture_setup, test_attach_python_exec,
              fixture_teardown);
  g_test_add ("/attach/python-fork", Fixture, NULL, fixture_setup, test_attach_python_fork,
              fixture_teardown);
  g_test_add ("/attach/python-unsupported", Fixture, NULL, fixture_setup,
              test_attach_python_unsupported, fixture_teardown);
  for (guint i = 0; i < G_N_ELEMENTS (pyenv_versions); i++)
    {
      g_autofree char *name = g_strdup_printf ("/attach/python-version/%s", pyenv_versions[i]);

      g_test_add (name, Fixture, pyenv_versions[i], fixture_setup, test_attach_python_version,
                  fixture_teardown);
    }
  g_test_add ("/attach/no-torch-steps", Fixture, NULL, fixture_setup,
              test_attach_no_torch_steps, fixture_teardown);
  g_test_add ("/attach/c10-without-symbols", Fixture, NULL, fixture_setup,
              test_attach_c10_without_symbols, fixture_teardown);
}
