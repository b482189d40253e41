/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The app's stylesheets name every timeline colour once: style.css with
 * the very values PNG export draws with (tide_palette_light), so that the
 * app in the light style and an exported PNG agree pixel for pixel, and
 * style-dark.css with a dark style's.  No display needed.
 */
#include "config.h"

#include <stdio.h>

#include "tide-palette.h"

typedef struct
{
  GHashTable *colors;   /* name -> guint32 rgb, as GUINT_TO_POINTER */
  guint       n_defines;
} Stylesheet;

/* "@define-color NAME #rrggbb;" lines; any other @define-color fails. */
static void
read_stylesheet (const char *name,
                 Stylesheet *sheet)
{
  g_autofree char *path = g_build_filename (TIDE_APP_SRC_DIR, name, NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, &error));
  g_assert_no_error (error);
  sheet->colors = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  sheet->n_defines = 0;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char color_name[64];
      unsigned rgb;
      char end;

      if (!g_str_has_prefix (lines[i], "@define-color "))
        continue;
      sheet->n_defines++;
      g_assert_cmpint (sscanf (lines[i], "@define-color %63s #%6x%c", color_name, &rgb, &end), ==, 3);
      g_assert_cmpint (end, ==, ';');
      g_assert_false (g_hash_table_contains (sheet->colors, color_name));
      g_hash_table_insert (sheet->colors, g_strdup (color_name), GUINT_TO_POINTER (rgb));
    }
}

static void
test_light_is_png_palette (void)
{
  Stylesheet light;

  read_stylesheet ("style.css", &light);
  g_assert_cmpuint (tide_palette_n_colors (), ==, 56);
  g_assert_cmpuint (light.n_defines, ==, tide_palette_n_colors ());
  for (guint i = 0; i < tide_palette_n_colors (); i++)
    {
      const char *name = tide_palette_color_name (i);
      gpointer rgb = NULL;

      if (!g_hash_table_lookup_extended (light.colors, name, NULL, &rgb))
        g_error ("style.css does not define %s", name);
      g_assert_cmphex (GPOINTER_TO_UINT (rgb), ==, tide_palette_get_color (&tide_palette_light, i));
    }
  g_assert_cmphex (GPOINTER_TO_UINT (g_hash_table_lookup (light.colors, "tide_background")), ==,
                   0xffffff);
  g_assert_cmphex (GPOINTER_TO_UINT (g_hash_table_lookup (light.colors, "tide_lane_line_0")), ==,
                   0x1c71d8);
  g_hash_table_unref (light.colors);
}

/* Every colour again, light text on a dark background. */
static void
test_dark_defines_every_color (void)
{
  Stylesheet dark;

  read_stylesheet ("style-dark.css", &dark);
  g_assert_cmpuint (dark.n_defines, ==, tide_palette_n_colors ());
  for (guint i = 0; i < tide_palette_n_colors (); i++)
    if (!g_hash_table_contains (dark.colors, tide_palette_color_name (i)))
      g_error ("style-dark.css does not define %s", tide_palette_color_name (i));
  g_assert_cmphex (GPOINTER_TO_UINT (g_hash_table_lookup (dark.colors, "tide_background")), ==,
                   0x1e1e1e);
  g_assert_cmphex (GPOINTER_TO_UINT (g_hash_table_lookup (dark.colors, "tide_text")), ==, 0xffffff);
  g_hash_table_unref (dark.colors);
}

/* Names follow the fields, and a set colour reads back. */
static void
test_names (void)
{
  TidePalette palette = tide_palette_light;

  g_assert_cmpstr (tide_palette_color_name (0), ==, "tide_background");
  g_assert_cmpstr (tide_palette_color_name (15), ==, "tide_lane_line_0");
  g_assert_cmpstr (tide_palette_color_name (52), ==, "tide_rss_class_3");
  tide_palette_set_color (&palette, 52, 0x123456);
  g_assert_cmphex (palette.rss_class[3], ==, 0x123456);
  g_assert_cmphex (tide_palette_get_color (&palette, 15), ==, palette.lane_line[0]);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/palette-css/light-is-png-palette", test_light_is_png_palette);
  g_test_add_func ("/palette-css/dark-defines-every-color", test_dark_defines_every_color);
  g_test_add_func ("/palette-css/names", test_names);
  return g_test_run ();
}
