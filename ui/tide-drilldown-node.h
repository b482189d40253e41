/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-drilldown-node.h: a row of the drill-down tree: a scope, a stack or a
 * frame.
 */
#pragma once

#include <gio/gio.h>

#include "tide-report.h"

G_BEGIN_DECLS

#define TIDE_TYPE_DRILLDOWN_NODE (tide_drilldown_node_get_type ())

G_DECLARE_FINAL_TYPE (TideDrilldownNode, tide_drilldown_node, TIDE, DRILLDOWN_NODE, GObject)

typedef enum
{
  TIDE_DRILLDOWN_SCOPE,
  TIDE_DRILLDOWN_STACK,
  TIDE_DRILLDOWN_FRAME,
} TideDrilldownKind;

TideDrilldownNode *tide_drilldown_node_new          (TideDrilldownKind  kind,
                                                     const char        *label);
GListModel        *tide_drilldown_build             (GPtrArray         *groups);
TideDrilldownKind  tide_drilldown_node_get_kind     (TideDrilldownNode *self);
const char        *tide_drilldown_node_get_label    (TideDrilldownNode *self);
gint64             tide_drilldown_node_get_bytes    (TideDrilldownNode *self);
gint64             tide_drilldown_node_get_count    (TideDrilldownNode *self);
const TideFrame   *tide_drilldown_node_get_frame    (TideDrilldownNode *self);
GListModel        *tide_drilldown_node_get_children (TideDrilldownNode *self);
gboolean           tide_drilldown_node_is_plumbing  (TideDrilldownNode *self);
void               tide_drilldown_compare           (GListModel        *roots,
                                                     GHashTable        *compared);
gboolean           tide_drilldown_node_get_compared (TideDrilldownNode *self,
                                                     gint64            *bytes);

G_END_DECLS
