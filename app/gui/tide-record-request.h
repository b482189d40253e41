/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-record-request.h: what the Record dialog asks for, as plain data, and
 * its command line.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum
{
  TIDE_SAMPLING_DEFAULT,
  TIDE_SAMPLING_BYTES,
  TIDE_SAMPLING_ALL,
} TideSampling;

typedef enum
{
  TIDE_RECORD_MODE_PROGRAM,
  TIDE_RECORD_MODE_ATTACH,
} TideRecordMode;

/* A live capture the app was asked for: `tidemark record ... -- COMMAND`
 * or `[pkexec] tidemark attach -p PID`.  Every string is owned. */
typedef struct
{
  TideRecordMode  mode;
  char           *recorder;      /* the tidemark program */
  char           *output;        /* the trace to write */
  char           *folder;        /* the recorder's working folder */

  /* TIDE_RECORD_MODE_PROGRAM */
  char          **command;       /* the program and its arguments */
  TideSampling    sampling;
  gint64          sample_bytes;  /* the mean, with TIDE_SAMPLING_BYTES */
  gboolean        torch;

  /* TIDE_RECORD_MODE_ATTACH */
  int             pid;
  char           *process_name;  /* for naming the trace */
  double          duration_s;    /* 0: until stopped */
  gboolean        privileged;    /* the app may attach itself (root) */
  char           *pkexec;        /* nullable: where pkexec is, when not privileged */
} TideRecordRequest;

void   tide_record_request_clear        (TideRecordRequest        *request);
char  *tide_record_request_program_name (const TideRecordRequest  *request);
char **tide_record_request_to_argv      (const TideRecordRequest  *request,
                                         GError                  **error);
gboolean tide_record_command_runs_python (const char * const      *command);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TideRecordRequest, tide_record_request_clear)

G_END_DECLS
