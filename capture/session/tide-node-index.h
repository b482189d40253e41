/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-node-index.h: the stack tree's nodes by (parent, frame), for the
 * stack table's intern path.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideNodeIndex TideNodeIndex;

TideNodeIndex *tide_node_index_new    (void);
void           tide_node_index_free   (TideNodeIndex *self);
gint64         tide_node_index_lookup (TideNodeIndex *self,
                                       gint64         parent_id,
                                       gint64         frame_id);
void           tide_node_index_insert (TideNodeIndex *self,
                                       gint64         parent_id,
                                       gint64         frame_id,
                                       gint64         id);
gsize          tide_node_index_size   (TideNodeIndex *self);

G_END_DECLS
