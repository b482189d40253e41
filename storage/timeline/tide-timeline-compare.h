/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A compared run's lanes in the columns of the trace shown: each column of
 * the shown trace's window holds what the compared trace held over the
 * times that stand there once steps are aligned (tide_step_pairs_map), so
 * that its step N is drawn over the shown trace's step N.
 */
#pragma once

#include "tide-timeline-lanes.h"
#include "tide-trace-diff.h"

G_BEGIN_DECLS

TideTimelineData *tide_timeline_compare_query (TideTrace            *compared,
                                               TideTimelineCache    *cache,
                                               gint64                process_id,
                                               const TideStepPair   *pairs,
                                               guint                 n_pairs,
                                               const TideTimeWindow *window,
                                               GError              **error);

G_END_DECLS
