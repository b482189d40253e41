/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-test-widget.h: what the widget tests share: a widget's pixels as
 * the cairo GSK renderer draws them, and a main loop run until a
 * condition holds or a deadline passes.
 */
#pragma once

#include <gtk/gtk.h>
#include <math.h>

/* Renders @widget's own snapshot into @width x @height pixels (0xAARRGGBB). */
static inline guint32 *
tide_test_render_widget (GtkWidget *widget,
                         int        width,
                         int        height)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GskRenderer) renderer = gsk_cairo_renderer_new ();
  g_autoptr(GdkTexture) texture = NULL;
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;
  guint32 *pixels = g_new (guint32, width * height);

  GTK_WIDGET_GET_CLASS (widget)->snapshot (widget, snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  gsk_renderer_realize (renderer, NULL, &error);
  g_assert_no_error (error);
  texture = gsk_renderer_render_texture (renderer, node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  gdk_texture_download (texture, (guchar *) pixels, width * 4);
  gsk_renderer_unrealize (renderer);
  gsk_render_node_unref (node);
  return pixels;
}

/* Renders @widget with all its children as it is on screen (it must be
 * mapped in a window), with the cairo GSK renderer; its size goes to
 * @width and @height.  Pixels are 0xAARRGGBB. */
static inline guint32 *
tide_test_render_mapped (GtkWidget *widget,
                         int       *width,
                         int       *height)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  g_autoptr(GskRenderer) renderer = gsk_cairo_renderer_new ();
  g_autoptr(GdkTexture) texture = NULL;
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;
  guint32 *pixels;

  g_assert_true (gtk_widget_get_mapped (widget));
  *width = gtk_widget_get_width (widget);
  *height = gtk_widget_get_height (widget);
  g_assert_cmpint (*width, >, 0);
  g_assert_cmpint (*height, >, 0);
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), *width, *height);
  node = gtk_snapshot_free_to_node (snapshot);
  pixels = g_new0 (guint32, *width * *height);
  if (node == NULL)   /* drew nothing at all */
    return pixels;
  gsk_renderer_realize (renderer, NULL, &error);
  g_assert_no_error (error);
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, *width, *height));
  gdk_texture_download (texture, (guchar *) pixels, *width * 4);
  gsk_renderer_unrealize (renderer);
  gsk_render_node_unref (node);
  return pixels;
}

/* The colour (0xAARRGGBB, premultiplied) most pixels of @area have, and
 * how many pixels of the area have another: text drawn there makes the
 * second count large, a blank area leaves it 0.  Alpha counts: a widget
 * without a background draws its text on transparent pixels. */
static inline guint32
tide_test_area_mode (const guint32         *pixels,
                     int                    width,
                     int                    height,
                     const graphene_rect_t *area,
                     guint                 *n_other)
{
  g_autoptr(GHashTable) counts = g_hash_table_new (NULL, NULL);
  int x0 = MAX (0, (int) ceil (area->origin.x)), y0 = MAX (0, (int) ceil (area->origin.y));
  int x1 = MIN (width, (int) (area->origin.x + area->size.width));
  int y1 = MIN (height, (int) (area->origin.y + area->size.height));
  guint best = 0, total = 0;
  guint32 mode = 0;

  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        guint32 c = pixels[y * width + x];
        guint n = GPOINTER_TO_UINT (g_hash_table_lookup (counts, GUINT_TO_POINTER (c))) + 1;

        g_hash_table_insert (counts, GUINT_TO_POINTER (c), GUINT_TO_POINTER (n));
        total++;
        if (n > best)
          best = n, mode = c;
      }
  g_assert_cmpuint (total, >, 0);
  if (n_other != NULL)
    *n_other = total - best;
  return mode;
}

static inline gboolean
tide_test_wake_cb (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Iterates until @done holds, at most @max_seconds: a tick wakes the
 * loop so that the limit holds when nothing else happens.  A condition
 * that never comes fails the test, naming @what it waited for. */
static inline void
tide_test_iterate_until (gboolean   (*done) (gpointer),
                         gpointer     data,
                         guint        max_seconds,
                         const char  *what)
{
  gint64 start = g_get_monotonic_time ();
  gint64 deadline = start + max_seconds * G_USEC_PER_SEC;
  guint tick = g_timeout_add (100, tide_test_wake_cb, NULL);

  while (!done (data) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick);
  if (!done (data))
    g_error ("waited %u s for %s", max_seconds, what);
  g_test_message ("waited %.2f s for %s", (g_get_monotonic_time () - start) / 1e6, what);
}
