/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Every command line the app's Record dialog can start, as exact argv:
 * tide_record_request_to_argv() on requests built here, no widget.
 */
#include "config.h"

#include "tide-record-request.h"

static char *
joined_argv (const TideRecordRequest *request)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) argv = tide_record_request_to_argv (request, &error);

  g_assert_no_error (error);
  return g_strjoinv ("|", argv);
}

static void
program_request (TideRecordRequest *request,
                 const char        *command)
{
  g_autoptr(GError) error = NULL;

  *request = (TideRecordRequest) {
    .mode = TIDE_RECORD_MODE_PROGRAM,
    .recorder = g_strdup ("/opt/tidemark"),
    .output = g_strdup ("/t/python3-1.tide"),
  };
  if (command != NULL)
    g_assert_true (g_shell_parse_argv (command, NULL, &request->command, &error));
}

static void
test_record_program (void)
{
  g_auto(TideRecordRequest) request = { 0 };
  g_autofree char *plain = NULL;
  g_autofree char *all = NULL;
  g_autofree char *bytes = NULL;
  g_autofree char *name = NULL;

  program_request (&request, "python3 'train it.py' --epochs 1");
  plain = joined_argv (&request);
  g_assert_cmpstr (plain, ==,
                   "/opt/tidemark|record|-q|-o|/t/python3-1.tide|--|python3|train it.py|--epochs|1");

  request.sampling = TIDE_SAMPLING_ALL;
  request.torch = TRUE;
  all = joined_argv (&request);
  g_assert_cmpstr (all, ==, "/opt/tidemark|record|-q|-o|/t/python3-1.tide|--all|--torch|--|"
                            "python3|train it.py|--epochs|1");

  /* The mean is written only with its sampling mode; an option-like
   * program argument stays after "--". */
  tide_record_request_clear (&request);
  program_request (&request, "/usr/bin/env --help");
  request.sampling = TIDE_SAMPLING_BYTES;
  request.sample_bytes = 262144;
  bytes = joined_argv (&request);
  g_assert_cmpstr (bytes, ==, "/opt/tidemark|record|-q|-o|/t/python3-1.tide|--sample-bytes|262144|"
                              "--|/usr/bin/env|--help");
  name = tide_record_request_program_name (&request);
  g_assert_cmpstr (name, ==, "env");
}

static void
test_record_needs_command (void)
{
  g_auto(TideRecordRequest) request = { 0 };
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) argv = NULL;

  program_request (&request, NULL);
  argv = tide_record_request_to_argv (&request, &error);
  g_assert_null (argv);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "Enter the command line of the program to record.");
}

static void
attach_request (TideRecordRequest *request,
                gboolean           privileged,
                const char        *pkexec)
{
  *request = (TideRecordRequest) {
    .mode = TIDE_RECORD_MODE_ATTACH,
    .recorder = g_strdup ("/opt/tidemark"),
    .output = g_strdup ("/t/out.tide"),
    .pid = 4242,
    .process_name = g_strdup ("python3"),
    .privileged = privileged,
    .pkexec = g_strdup (pkexec),
  };
}

static void
test_attach (void)
{
  g_auto(TideRecordRequest) user = { 0 };
  g_auto(TideRecordRequest) root = { 0 };
  g_auto(TideRecordRequest) stuck = { 0 };
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) argv = NULL;
  g_autofree char *via_pkexec = NULL;
  g_autofree char *as_root = NULL;
  g_autofree char *name = NULL;

  /* Not root: pkexec runs the recorder; a duration is written as given. */
  attach_request (&user, FALSE, "/usr/bin/pkexec");
  user.duration_s = 1.5;
  via_pkexec = joined_argv (&user);
  g_assert_cmpstr (via_pkexec, ==,
                   "/usr/bin/pkexec|/opt/tidemark|attach|-p|4242|-o|/t/out.tide|--duration|1.5");
  name = tide_record_request_program_name (&user);
  g_assert_cmpstr (name, ==, "python3-4242");

  /* Root: no pkexec, and no duration when none was asked for. */
  attach_request (&root, TRUE, "/usr/bin/pkexec");
  as_root = joined_argv (&root);
  g_assert_cmpstr (as_root, ==, "/opt/tidemark|attach|-p|4242|-o|/t/out.tide");

  /* Not root and no pkexec: one line that says what is needed. */
  attach_request (&stuck, FALSE, NULL);
  argv = tide_record_request_to_argv (&stuck, &error);
  g_assert_null (argv);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED);
  g_assert_cmpstr (error->message, ==,
                   "Attaching needs root or CAP_BPF and CAP_PERFMON; pkexec was not found.");
  g_clear_error (&error);

  /* No process chosen. */
  stuck.privileged = TRUE;
  stuck.pid = 0;
  argv = tide_record_request_to_argv (&stuck, &error);
  g_assert_null (argv);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "Choose the process to attach to.");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/record-request/program", test_record_program);
  g_test_add_func ("/record-request/needs-command", test_record_needs_command);
  g_test_add_func ("/record-request/attach", test_attach);
  return g_test_run ();
}
