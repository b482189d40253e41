/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Everything that a reader of a trace runs on it, in one call, for the
 * mutation test and the fuzzer: open, every report in every format (what
 * `tidemark report` prints), the GUI's queries (timeline, cached timeline,
 * steps, transfers, a suspect's series, drill-down) and, where the
 * renderer is built, PNG export.
 */
#pragma once

#include <glib.h>

/* What became of a trace: TIDE_EXERCISE_OK when every query ran;
 * TIDE_EXERCISE_CLEAN_ERROR when some failed, each with a message of one
 * line; TIDE_EXERCISE_BAD_ERROR when a message was empty or ran over
 * lines.  A crash or a hang is for the caller to see. */
typedef enum
{
  TIDE_EXERCISE_OK = 0,
  TIDE_EXERCISE_CLEAN_ERROR = 2,
  TIDE_EXERCISE_BAD_ERROR = 3,
} TideExerciseResult;

/* @png_path: where to export the timeline; NULL: no export */
TideExerciseResult tide_exercise_trace (const char *path,
                                        const char *png_path,
                                        char      **first_error);
