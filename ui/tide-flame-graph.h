/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-flame-graph.h: the drill-down's stacks as a flame graph.
 */
#pragma once

#include <gtk/gtk.h>

#include "tide-report.h"

G_BEGIN_DECLS

#define TIDE_TYPE_FLAME_GRAPH (tide_flame_graph_get_type ())

G_DECLARE_FINAL_TYPE (TideFlameGraph, tide_flame_graph, TIDE, FLAME_GRAPH, GtkWidget)

GtkWidget       *tide_flame_graph_new                (void);
void             tide_flame_graph_set_groups         (TideFlameGraph *self,
                                                      GPtrArray      *groups);
const char      *tide_flame_graph_get_search         (TideFlameGraph *self);
void             tide_flame_graph_set_search         (TideFlameGraph *self,
                                                      const char     *search);
guint            tide_flame_graph_get_n_matches      (TideFlameGraph *self);
gint64           tide_flame_graph_get_total_bytes    (TideFlameGraph *self);
gboolean         tide_flame_graph_activate_at        (TideFlameGraph *self,
                                                      double          x,
                                                      double          y);
const char      *tide_flame_graph_get_zoom_label     (TideFlameGraph *self);
const TideFrame *tide_flame_graph_get_selected_frame (TideFlameGraph *self);
gint64           tide_flame_graph_get_selected_bytes (TideFlameGraph *self);
gboolean         tide_flame_graph_get_hide_plumbing  (TideFlameGraph *self);
void             tide_flame_graph_set_hide_plumbing  (TideFlameGraph *self,
                                                      gboolean        hide);
gboolean         tide_flame_graph_get_function_area  (TideFlameGraph  *self,
                                                      const char      *function,
                                                      graphene_rect_t *area);
/* The fill of a frame (NULL: the root) whose label is @label, as 0xRRGGBB,
 * before search highlighting and dimming. */
guint32          tide_flame_graph_frame_rgb          (const TideFrame *frame,
                                                      const char      *label);

G_END_DECLS
