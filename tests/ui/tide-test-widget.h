/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-test-widget.h: what the widget tests share: a widget's pixels as
 * the cairo GSK renderer draws them, and a main loop run until a
 * condition holds or a deadline passes.
 */
#pragma once

#include <gtk/gtk.h>

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
