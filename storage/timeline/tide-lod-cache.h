/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The memory of the timeline's queries (tide-timeline-lanes.h): the LOD
 * rows already read and the lanes each process has, kept for the views of
 * one trace, so that panning or zooming back over a part already drawn
 * runs no query.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideTimelineCache TideTimelineCache;

TideTimelineCache *tide_timeline_cache_new         (gsize                    max_bytes);
void               tide_timeline_cache_free        (TideTimelineCache       *cache);
gsize              tide_timeline_cache_get_bytes   (const TideTimelineCache *cache);
guint64            tide_timeline_cache_get_queries (const TideTimelineCache *cache);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TideTimelineCache, tide_timeline_cache_free)

G_END_DECLS
