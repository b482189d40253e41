/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-suspects-view.h: the leak suspects, steepest first.
 */
#pragma once

#include <gtk/gtk.h>

#include "tide-report.h"

G_BEGIN_DECLS

#define TIDE_TYPE_SUSPECTS_VIEW (tide_suspects_view_get_type ())

G_DECLARE_FINAL_TYPE (TideSuspectsView, tide_suspects_view, TIDE, SUSPECTS_VIEW, GtkWidget)

GtkWidget       *tide_suspects_view_new          (void);
void             tide_suspects_view_set_suspects (TideSuspectsView *self,
                                                  GPtrArray        *suspects);
void             tide_suspects_view_set_class_suspects (TideSuspectsView *self,
                                                        GPtrArray        *classes);
guint            tide_suspects_view_get_n_rows   (TideSuspectsView *self);
char            *tide_suspects_view_dup_row_text (TideSuspectsView *self,
                                                  guint             index);
void             tide_suspects_view_select       (TideSuspectsView *self,
                                                  gint              index);
const TideGroup *tide_suspects_view_get_selected (TideSuspectsView *self);

G_END_DECLS
