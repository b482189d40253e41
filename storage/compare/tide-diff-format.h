/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Text, CSV and JSON renderings of a TideTraceDiff (`tidemark diff`), with
 * the conventions of tide-report-format.h: CSV and JSON carry plain
 * numbers, text is for people.
 */
#pragma once

#include "tide-report-format.h"
#include "tide-trace-diff.h"

G_BEGIN_DECLS

/* The parts of a diff to write; CSV takes one at a time. */
typedef enum
{
  TIDE_DIFF_STEPS    = 1 << 0,
  TIDE_DIFF_SUSPECTS = 1 << 1,
  TIDE_DIFF_RETAINED = 1 << 2,
  TIDE_DIFF_ALL      = 7,
} TideDiffParts;

void tide_format_diff (GString             *out,
                       const TideTraceDiff *diff,
                       TideDiffParts        parts,
                       TideFormat           format);

G_END_DECLS
