/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The one way sizes are printed for people: the CLI's reports and
 * summaries, the GUI's tables, tooltips and lane labels, and the exported
 * PNG all say "1.50 MiB", so a number read in one place is found as is in
 * another.  Binary units, two decimals from KiB up, whole bytes below;
 * CSV and JSON carry plain integers instead (tide-report-format.h).
 */
#include "config.h"

#include "tide-format-bytes.h"

/* |bytes| without overflow: a damaged trace may hold G_MININT64. */
static guint64
magnitude (gint64 bytes)
{
  return bytes < 0 ? -(guint64) bytes : (guint64) bytes;
}

static char *
format_magnitude (const char *sign,
                  guint64     bytes)
{
  static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  double value = (double) bytes;
  guint unit = 0;

  /* From KiB up, a value that prints as 1024.00 is the next unit's 1.00. */
  while (unit < G_N_ELEMENTS (units) - 1 && (value >= 1024 || (unit > 0 && value >= 1023.995)))
    {
      value /= 1024;
      unit++;
    }
  if (unit == 0)
    return g_strdup_printf ("%s%" G_GUINT64_FORMAT " B", sign, bytes);
  return g_strdup_printf ("%s%.2f %s", sign, value, units[unit]);
}

char *
tide_format_bytes (gint64 bytes)
{
  return format_magnitude (bytes < 0 ? "-" : "", magnitude (bytes));
}

char *
tide_format_delta (gint64 bytes)
{
  if (bytes == 0)
    return g_strdup ("0 B");
  return format_magnitude (bytes > 0 ? "+" : "-", magnitude (bytes));
}
