/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The timeline palette's colours by name: the names that app/gui/style.css
 * (light) and app/gui/style-dark.css define with @define-color, so that the
 * app's colours are the stylesheet's and follow its dark style.
 */
#pragma once

#include "tide-render.h"

G_BEGIN_DECLS

guint       tide_palette_n_colors    (void);
const char *tide_palette_color_name  (guint              index);
guint32     tide_palette_get_color   (const TidePalette *palette,
                                      guint              index);
void        tide_palette_set_color   (TidePalette       *palette,
                                      guint              index,
                                      guint32            rgb);

G_END_DECLS
