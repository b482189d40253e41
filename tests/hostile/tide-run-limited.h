/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Runs a command with a time limit, for the tests that feed hostile traces
 * to `tidemark`: a run that would hang is killed at the limit and reported
 * as timed out, so the test fails instead of hanging with it.
 */
#pragma once

#include <glib.h>

typedef struct
{
  gboolean timed_out;
  int      status;    /* exit status, or 128 + signal */
  char    *out;
  char    *err;
  double   seconds;   /* wall time it took */
} TideLimitedRun;

void tide_limited_run_clear (TideLimitedRun *run);
void tide_run_limited       (const char *const *argv,
                             double             limit_s,
                             TideLimitedRun    *run);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TideLimitedRun, tide_limited_run_clear)
