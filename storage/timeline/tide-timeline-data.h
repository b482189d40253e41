/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The timeline's queries, by job: the lanes (tide-timeline-lanes.h), the
 * LOD cache that they read through (tide-lod-cache.h), and the step,
 * transfer and series spans (tide-timeline-series.h).
 */
#pragma once

#include "tide-lod-cache.h"
#include "tide-timeline-lanes.h"
#include "tide-timeline-series.h"
