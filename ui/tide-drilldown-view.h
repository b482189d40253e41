/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-drilldown-view.h: what the selected step or range retained, as a tree.
 */
#pragma once

#include <gtk/gtk.h>

#include "tide-drilldown-node.h"

G_BEGIN_DECLS

#define TIDE_TYPE_DRILLDOWN_VIEW (tide_drilldown_view_get_type ())

G_DECLARE_FINAL_TYPE (TideDrilldownView, tide_drilldown_view, TIDE, DRILLDOWN_VIEW, GtkWidget)

GtkWidget         *tide_drilldown_view_new               (void);
void               tide_drilldown_view_set_groups        (TideDrilldownView *self,
                                                          GPtrArray         *groups);
GPtrArray         *tide_drilldown_view_get_groups        (TideDrilldownView *self);
void               tide_drilldown_view_set_compared      (TideDrilldownView *self,
                                                          GHashTable        *compared);
GListModel        *tide_drilldown_view_get_model         (TideDrilldownView *self);
TideDrilldownNode *tide_drilldown_view_get_selected_node (TideDrilldownView *self);
void               tide_drilldown_view_set_hide_plumbing (TideDrilldownView *self,
                                                          gboolean           hide);
gboolean           tide_drilldown_view_get_hide_plumbing (TideDrilldownView *self);

G_END_DECLS
