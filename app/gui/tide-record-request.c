/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideRecordRequest: what the Record dialog asks for, as plain data, and
 * the one function that turns it into the recorder's command line.  It
 * reads no widget and no environment, so that every command line the app
 * can start is tested as exact argv (tests/app/gui/test-record-request.c).
 */
#include "config.h"

#include "tide-record-request.h"

#include <string.h>

void
tide_record_request_clear (TideRecordRequest *request)
{
  g_free (request->recorder);
  g_free (request->output);
  g_free (request->folder);
  g_strfreev (request->command);
  g_free (request->process_name);
  g_free (request->pkexec);
  memset (request, 0, sizeof *request);
}

/**
 * tide_record_request_program_name:
 *
 * Returns: (transfer full): what the trace is named after: the program's
 *   base name, or "NAME-PID" for a process attached to
 */
char *
tide_record_request_program_name (const TideRecordRequest *request)
{
  if (request->mode == TIDE_RECORD_MODE_ATTACH)
    return g_strdup_printf ("%s-%d", request->process_name ? request->process_name : "process",
                            request->pid);
  if (request->command == NULL || request->command[0] == NULL)
    return g_strdup ("trace");
  return g_path_get_basename (request->command[0]);
}

/**
 * tide_record_command_runs_python:
 * @command: (array zero-terminated=1) (nullable): a program and its arguments
 *
 * Whether @command starts a Python interpreter or script, past `env` and
 * VAR=VALUE words: python, python3, python3.11, or a file ending in .py.
 */
gboolean
tide_record_command_runs_python (const char * const *command)
{
  guint i = 0;
  g_autofree char *name = NULL;

  if (command == NULL)
    return FALSE;
  for (; command[i] != NULL; i++)
    {
      g_autofree char *base = g_path_get_basename (command[i]);

      if (!g_str_equal (base, "env") && strchr (command[i], '=') == NULL)
        break;
    }
  if (command[i] == NULL)
    return FALSE;
  name = g_path_get_basename (command[i]);
  if (g_str_has_suffix (name, ".py"))
    return TRUE;
  if (!g_str_has_prefix (name, "python"))
    return FALSE;
  for (const char *c = name + strlen ("python"); *c != '\0'; c++)
    if (!g_ascii_isdigit (*c) && *c != '.')
      return FALSE;
  return TRUE;
}

static void
add_program_options (GStrvBuilder            *builder,
                     const TideRecordRequest *request)
{
  if (request->sampling == TIDE_SAMPLING_ALL)
    g_strv_builder_add (builder, "--all");
  else if (request->sampling == TIDE_SAMPLING_BYTES)
    {
      g_autofree char *bytes = g_strdup_printf ("%" G_GINT64_FORMAT, request->sample_bytes);
      g_strv_builder_add_many (builder, "--sample-bytes", bytes, NULL);
    }
  if (request->torch)
    g_strv_builder_add (builder, "--torch");
}

static gboolean
check_request (const TideRecordRequest  *request,
               GError                  **error)
{
  if (request->mode == TIDE_RECORD_MODE_PROGRAM &&
      (request->command == NULL || request->command[0] == NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "Enter the command line of the program to record.");
      return FALSE;
    }
  if (request->mode == TIDE_RECORD_MODE_ATTACH && request->pid <= 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "Choose the process to attach to.");
      return FALSE;
    }
  if (request->mode == TIDE_RECORD_MODE_ATTACH && !request->privileged && request->pkexec == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "Attaching needs root or CAP_BPF and CAP_PERFMON; pkexec was not found.");
      return FALSE;
    }
  return TRUE;
}

/**
 * tide_record_request_to_argv:
 *
 * Returns: (transfer full) (nullable): the whole command line, the
 *   recorder first (or pkexec, to attach without privileges), or %NULL
 *   with @error set when the request cannot be run
 */
char **
tide_record_request_to_argv (const TideRecordRequest  *request,
                             GError                  **error)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  g_return_val_if_fail (request->recorder != NULL && request->output != NULL, NULL);

  if (!check_request (request, error))
    return NULL;
  if (request->mode == TIDE_RECORD_MODE_PROGRAM)
    {
      /* -q: the summary is for a terminal; the app shows the trace. */
      g_strv_builder_add_many (builder, request->recorder, "record", "-q", "-o", request->output,
                               NULL);
      add_program_options (builder, request);
      g_strv_builder_add (builder, "--");
      g_strv_builder_addv (builder, (const char **) request->command);
      return g_strv_builder_end (builder);
    }

  if (!request->privileged)
    g_strv_builder_add (builder, request->pkexec);
  {
    g_autofree char *pid = g_strdup_printf ("%d", request->pid);
    g_strv_builder_add_many (builder, request->recorder, "attach", "-p", pid, "-o",
                             request->output, NULL);
  }
  if (request->duration_s > 0)
    {
      char seconds[G_ASCII_DTOSTR_BUF_SIZE];

      g_ascii_dtostr (seconds, sizeof seconds, request->duration_s);
      g_strv_builder_add_many (builder, "--duration", seconds, NULL);
    }
  return g_strv_builder_end (builder);
}
