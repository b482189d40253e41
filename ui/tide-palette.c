/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Every colour of TidePalette, each under the name a stylesheet gives it:
 * "tide_" and the field's name, with "_N" for the N-th of an array
 * (tide_lane_line_0).  The table is the only place that ties the two, so
 * a colour added to TidePalette and not here fails test-palette-css.
 */
#include "config.h"

#include "tide-palette.h"

typedef struct
{
  const char *name;
  gsize       offset;
} NamedColor;

#define ONE(field) { "tide_" #field, G_STRUCT_OFFSET (TidePalette, field) }
#define AT(field, i) { "tide_" #field "_" #i, G_STRUCT_OFFSET (TidePalette, field) + (i) * sizeof (guint32) }
#define EIGHT(field) AT (field, 0), AT (field, 1), AT (field, 2), AT (field, 3), \
                     AT (field, 4), AT (field, 5), AT (field, 6), AT (field, 7)

G_STATIC_ASSERT (TIDE_RENDER_N_LANE_COLORS == 8);
G_STATIC_ASSERT (TIDE_RENDER_N_PROCESS_COLORS == 8);
G_STATIC_ASSERT (TIDE_RSS_N_CLASSES == 4);

static const NamedColor named_colors[] = {
  ONE (background), ONE (text), ONE (text_dim), ONE (grid),
  ONE (band_even), ONE (band_odd), ONE (band_leak),
  ONE (strip_even), ONE (strip_odd), ONE (strip_leak), ONE (strip_text), ONE (strip_leak_text),
  ONE (accent), ONE (transfer_to_device), ONE (transfer_to_host),
  EIGHT (lane_line), EIGHT (lane_fill), EIGHT (lane_envelope),
  ONE (band_highlight), ONE (highlight),
  EIGHT (process),
  AT (rss_class, 0), AT (rss_class, 1), AT (rss_class, 2), AT (rss_class, 3),
  ONE (compare),
  ONE (death), ONE (limit),
};

/* Every field is named: the table covers the struct, colour for colour. */
G_STATIC_ASSERT (G_N_ELEMENTS (named_colors) * sizeof (guint32) == sizeof (TidePalette));

guint
tide_palette_n_colors (void)
{
  return G_N_ELEMENTS (named_colors);
}

const char *
tide_palette_color_name (guint index)
{
  g_return_val_if_fail (index < G_N_ELEMENTS (named_colors), NULL);
  return named_colors[index].name;
}

guint32
tide_palette_get_color (const TidePalette *palette,
                        guint              index)
{
  g_return_val_if_fail (index < G_N_ELEMENTS (named_colors), 0);
  return G_STRUCT_MEMBER (guint32, palette, named_colors[index].offset);
}

void
tide_palette_set_color (TidePalette *palette,
                        guint        index,
                        guint32      rgb)
{
  g_return_if_fail (index < G_N_ELEMENTS (named_colors));
  G_STRUCT_MEMBER (guint32, palette, named_colors[index].offset) = rgb;
}
