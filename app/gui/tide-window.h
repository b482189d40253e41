/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-window.h: the window of one trace.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define TIDE_TYPE_WINDOW (tide_window_get_type ())

G_DECLARE_FINAL_TYPE (TideWindow, tide_window, TIDE, WINDOW, AdwApplicationWindow)

TideWindow *tide_window_new       (GtkApplication *application);
void        tide_window_open_file (TideWindow     *self,
                                   GFile          *file);

G_END_DECLS
