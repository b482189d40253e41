/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-timeline-model.h"

#include <math.h>

void
tide_timeline_model_init (TideTimelineModel *self,
                          gint64             doc_begin,
                          gint64             doc_end,
                          double             width)
{
  /* A trace with no extent still gets a drawable range. */
  if (doc_end - doc_begin < TIDE_TIMELINE_MIN_SPAN_NS)
    doc_end = doc_begin + TIDE_TIMELINE_MIN_SPAN_NS;
  self->doc_begin = doc_begin;
  self->doc_end = doc_end;
  self->begin = doc_begin;
  self->end = doc_end;
  self->width = MAX (width, 1.0);
}

void
tide_timeline_model_set_width (TideTimelineModel *self,
                               double             width)
{
  self->width = MAX (width, 1.0);
}

/* Clamps a range to the document, keeping its span where possible: a range
 * pushed past an edge slides back rather than shrinking. */
gboolean
tide_timeline_model_set_range (TideTimelineModel *self,
                               gint64             begin,
                               gint64             end)
{
  gint64 doc_span = self->doc_end - self->doc_begin;
  gint64 span = CLAMP (end - begin, TIDE_TIMELINE_MIN_SPAN_NS, doc_span);

  begin = CLAMP (begin, self->doc_begin, self->doc_end - span);
  end = begin + span;
  if (begin == self->begin && end == self->end)
    return FALSE;
  self->begin = begin;
  self->end = end;
  return TRUE;
}

gboolean
tide_timeline_model_fit (TideTimelineModel *self)
{
  return tide_timeline_model_set_range (self, self->doc_begin, self->doc_end);
}

double
tide_timeline_model_time_to_x (const TideTimelineModel *self,
                               gint64                   t)
{
  return (double) (t - self->begin) * self->width / (double) (self->end - self->begin);
}

gint64
tide_timeline_model_x_to_time (const TideTimelineModel *self,
                               double                   x)
{
  return self->begin + (gint64) floor (x * (double) (self->end - self->begin) / self->width);
}

/* factor > 1 zooms in.  The time under @x stays under @x unless the new
 * range would leave the document. */
gboolean
tide_timeline_model_zoom_around (TideTimelineModel *self,
                                 double             x,
                                 double             factor)
{
  double span = (double) (self->end - self->begin);
  double anchor = (double) self->begin + x * span / self->width;
  double new_span;
  gint64 begin;

  g_return_val_if_fail (factor > 0, FALSE);
  new_span = CLAMP (span / factor, (double) TIDE_TIMELINE_MIN_SPAN_NS,
                    (double) (self->doc_end - self->doc_begin));
  begin = (gint64) llround (anchor - x / self->width * new_span);
  return tide_timeline_model_set_range (self, begin, begin + (gint64) llround (new_span));
}

/* Positive @dx shows later times, as when a scrollbar moves right. */
gboolean
tide_timeline_model_pan_by (TideTimelineModel *self,
                            double             dx)
{
  gint64 span = self->end - self->begin;
  gint64 dt = (gint64) llround (dx * (double) span / self->width);

  return tide_timeline_model_set_range (self, self->begin + dt, self->end + dt);
}

/* Tick intervals: 1-2-5 steps below a second, clock-friendly ones above. */
static const gint64 clock_intervals_s[] = {
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
};

gint64
tide_timeline_tick_interval (gint64 span_ns,
                             double width,
                             double min_px)
{
  double px_per_ns = width / (double) MAX (span_ns, 1);
  gint64 decade = 1;

  for (int k = 0; k < 9; k++, decade *= 10)
    for (gint64 m = 1; m <= 5; m += (m == 1 ? 1 : 3))
      if ((double) (m * decade) * px_per_ns >= min_px)
        return m * decade;
  for (guint i = 0; i < G_N_ELEMENTS (clock_intervals_s); i++)
    if ((double) clock_intervals_s[i] * G_GINT64_CONSTANT (1000000000) * px_per_ns >= min_px)
      return clock_intervals_s[i] * G_GINT64_CONSTANT (1000000000);
  return G_GINT64_CONSTANT (86400000000000);
}

/* Decimals needed to write @interval in units of @unit. */
static int
decimals_for (gint64 interval,
              gint64 unit)
{
  int d = 0;

  for (gint64 u = unit; d < 9 && interval % u != 0; u /= 10)
    d++;
  return d;
}

char *
tide_timeline_format_time (gint64 t,
                           gint64 interval)
{
  static const struct { gint64 ns; const char *name; } units[] = {
    { 1000000000, "s" }, { 1000000, "ms" }, { 1000, "µs" }, { 1, "ns" },
  };
  gint64 magnitude = MAX (ABS (t), interval);

  if (t == 0)
    return g_strdup ("0");
  if (interval >= G_GINT64_CONSTANT (60000000000) && interval % 1000000000 == 0)
    {
      gint64 s = t / 1000000000;
      if (ABS (s) >= 3600)
        return g_strdup_printf ("%" G_GINT64_FORMAT ":%02d:%02d", s / 3600,
                                (int) (ABS (s) / 60 % 60), (int) (ABS (s) % 60));
      return g_strdup_printf ("%" G_GINT64_FORMAT ":%02d", s / 60, (int) (ABS (s) % 60));
    }
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (magnitude >= units[i].ns || units[i].ns == 1)
      return g_strdup_printf ("%.*f %s", decimals_for (interval, units[i].ns),
                              (double) t / (double) units[i].ns, units[i].name);
  g_assert_not_reached ();
}

/* Steps are sorted by start; the processes' steps may overlap, so after
 * the binary search a few earlier spans are checked too. */
gint
tide_timeline_step_at (const TideStepSpan *steps,
                       guint               n_steps,
                       gint64              t)
{
  guint lo = 0, hi = n_steps;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (steps[mid].start_ns <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  for (guint i = lo, checked = 0; i > 0 && checked < 64; i--, checked++)
    if (steps[i - 1].start_ns <= t && t < steps[i - 1].end_ns)
      return (gint) i - 1;
  return -1;
}

/* The step number after (direction > 0) or before @number; @number 0 means
 * none is selected.  Returns 0 when there is none. */
gint
tide_timeline_step_neighbor (const TideStepSpan *steps,
                             guint               n_steps,
                             gint                number,
                             gint                direction)
{
  gint best = 0;

  for (guint i = 0; i < n_steps; i++)
    {
      gint k = steps[i].number;

      if (direction > 0 && k > number && (best == 0 || k < best))
        best = k;
      else if (direction < 0 && (number == 0 || k < number) && k > best)
        best = k;
    }
  return best;
}
