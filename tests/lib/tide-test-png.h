/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-test-png.h: reading colours back from a drawn image, for the tests
 * of the timeline's rendering and of `tidemark export --png`.
 */
#pragma once

#include <cairo.h>
#include <glib.h>

/* The 0xRRGGBB colour of one pixel of an RGB24 or ARGB32 image. */
static inline guint32
tide_test_pixel (cairo_surface_t *image,
                 int              x,
                 int              y)
{
  const guint8 *row = cairo_image_surface_get_data (image) +
                      (gsize) y * cairo_image_surface_get_stride (image);
  return ((const guint32 *) row)[x] & 0xffffff;
}

/* How many pixels of @image are exactly @rgb (0xRRGGBB). */
static inline guint
tide_test_count_pixels (cairo_surface_t *image,
                        guint32          rgb)
{
  guint n = 0;

  for (int y = 0; y < cairo_image_surface_get_height (image); y++)
    for (int x = 0; x < cairo_image_surface_get_width (image); x++)
      n += tide_test_pixel (image, x, y) == rgb;
  return n;
}
