/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-counter-envelope.c: the points that draw a counter exactly at one
 * bucket width.
 *
 * The recorded blocks' counters (the live heap, the mapped, pinned and
 * device bytes) change with every block, and the recorder writes them at
 * its polls.  A block allocated and freed between two polls (a temporary
 * buffer, a step's activations) would never reach the timeline, nor a
 * device's peak.  Every change is noted instead, with the time it
 * happened, into buckets of the timeline's own grid (origin and width):
 * each bucket keeps its highest, lowest and last value.  At a poll the
 * buckets closed by then are written, each as up to three points at their
 * own times, so the timeline's buckets of that width and wider have the
 * counter's true min, max and last value, for at most three rows per
 * bucket in which anything changed.  Within a bucket only those three
 * stand: a time at which the counter's value must be read exactly (a step
 * end, a process's last reading) cuts the bucket there.
 *
 * Records arrive in order for each thread, not across threads, and a
 * thread's records come in batches: a bucket is written once no more of
 * its changes should come (settle_ns after its end), and a change noted
 * later still is written just after the last point, so that the points
 * stay in time order.
 */
#include "config.h"

#include "tide-counter-envelope.h"

/* Buckets noted and not written yet, at most: a few in a recording (a
 * bucket's width and the settle time after it). */
#define ENVELOPE_MAX_PENDING 64

/**
 * tide_counter_envelope_init:
 * @settle_ns: how much later than a change its note may come: a bucket
 *   is written that long after its end (unless a write cuts it)
 */
void
tide_counter_envelope_init (TideCounterEnvelope *self,
                            gint64               origin_ns,
                            gint64               bucket_ns,
                            gint64               settle_ns)
{
  self->origin_ns = origin_ns;
  self->bucket_ns = MAX (bucket_ns, 1);
  self->settle_ns = MAX (settle_ns, 0);
  self->pending = NULL;   /* made at the first change: most devices have none */
  self->written = -1;
  self->written_ns = G_MININT64;
}

void
tide_counter_envelope_clear (TideCounterEnvelope *self)
{
  g_clear_pointer (&self->pending, g_array_unref);
}

static gint64
bucket_of (TideCounterEnvelope *self,
           gint64               ts_ns)
{
  gint64 offset = ts_ns - self->origin_ns;

  /* Floor, for a time before the origin too. */
  return offset >= 0 ? offset / self->bucket_ns : -((-offset - 1) / self->bucket_ns) - 1;
}

/* The pending bucket that a change at @ts_ns goes into, made if need be. */
static TideEnvelopeBucket *
bucket_for (TideCounterEnvelope *self,
            gint64               ts_ns,
            gint64               value)
{
  GArray *pending = self->pending != NULL
    ? self->pending : (self->pending = g_array_new (FALSE, FALSE, sizeof (TideEnvelopeBucket)));
  TideEnvelopeBucket *newest = pending->len > 0
    ? &g_array_index (pending, TideEnvelopeBucket, pending->len - 1) : NULL;
  gint64 bucket;
  TideEnvelopeBucket fresh;

  /* Most changes fall in the newest bucket: no division for those. */
  if (newest != NULL && ts_ns >= newest->start_ns && ts_ns - newest->start_ns < self->bucket_ns)
    return newest;
  bucket = bucket_of (self, ts_ns);
  fresh = (TideEnvelopeBucket) { bucket, self->origin_ns + bucket * self->bucket_ns,
                                 value, ts_ns, value, ts_ns, value, ts_ns };
  for (guint i = pending->len; i > 0; i--)
    {
      TideEnvelopeBucket *b = &g_array_index (pending, TideEnvelopeBucket, i - 1);

      if (b->bucket == bucket)
        return b;
      if (b->bucket < bucket)
        {
          /* Times far apart or out of order (the program's clock is its
           * own word) join the bucket before them rather than make the
           * pending ones many: a bucket in the future is never written
           * before a cut. */
          if (pending->len >= ENVELOPE_MAX_PENDING)
            return b;
          g_array_insert_val (pending, i, fresh);
          return &g_array_index (pending, TideEnvelopeBucket, i);
        }
    }
  if (pending->len >= ENVELOPE_MAX_PENDING)
    return &g_array_index (pending, TideEnvelopeBucket, 0);
  /* Older than every pending bucket; written already, maybe: its points
   * then follow the last one written (emit()). */
  g_array_insert_val (pending, 0, fresh);
  return &g_array_index (pending, TideEnvelopeBucket, 0);
}

/**
 * tide_counter_envelope_note:
 * @value: the counter's value once the change at @ts_ns was made
 *
 * A change of the counter.  Its value after all the changes noted so far
 * is the last value of the bucket of the latest of them.
 */
void
tide_counter_envelope_note (TideCounterEnvelope *self,
                            gint64               ts_ns,
                            gint64               value)
{
  TideEnvelopeBucket *b;

  /* A time is the program's word: no arithmetic on it may overflow. */
  ts_ns = CLAMP (ts_ns, 0, G_MAXINT64 / 4);
  b = bucket_for (self, ts_ns, value);

  if (value > b->high)
    {
      b->high = value;
      b->high_ns = ts_ns;
    }
  if (value < b->low)
    {
      b->low = value;
      b->low_ns = ts_ns;
    }
  b->last = value;
  b->last_ns = MAX (b->last_ns, ts_ns);
}

static void
emit (TideCounterEnvelope   *self,
      gint64                 ts_ns,
      gint64                 value,
      gint64                 limit_ns,
      TideEnvelopePointFunc  func,
      gpointer               user_data)
{
  if (value == self->written)
    return;
  /* In time order, and none after the write's time unless the last point
   * written already is. */
  ts_ns = MAX (MIN (ts_ns, limit_ns), self->written_ns + 1);
  self->written = value;
  self->written_ns = ts_ns;
  func (ts_ns, value, user_data);
}

static void
emit_bucket (TideCounterEnvelope      *self,
             const TideEnvelopeBucket *b,
             gint64                    limit_ns,
             TideEnvelopePointFunc     func,
             gpointer                  user_data)
{
  /* The extremes in the order they were reached, then where it ended. */
  gboolean low_first = b->low_ns < b->high_ns;
  gint64 first = low_first ? b->low : b->high, first_ns = low_first ? b->low_ns : b->high_ns;
  gint64 second = low_first ? b->high : b->low, second_ns = low_first ? b->high_ns : b->low_ns;

  emit (self, first_ns, first, limit_ns, func, user_data);
  emit (self, second_ns, second, limit_ns, func, user_data);
  emit (self, b->last_ns, b->last, limit_ns, func, user_data);
}

/* Whether it has a point written or one to write. */
gboolean
tide_counter_envelope_has_points (TideCounterEnvelope *self)
{
  return self->written_ns != G_MININT64 || (self->pending != NULL && self->pending->len > 0);
}

/**
 * tide_counter_envelope_write:
 * @now_ns: the write's time: no point is later (unless the last one
 *   written is), and a counter without a point gets its first one there
 * @value: the counter's value now
 * @cut: write every bucket noted (a step end, the process's end); else a
 *   bucket waits for its end and the changes that may still come for it,
 *   so that a counter written at every poll takes no more rows than one
 *   bucket's
 *
 * Hands @func the points of every bucket noted since the last write and
 * closed by @now_ns, in time order, each a change from the point before
 * it.  Where nothing is left open and @value is not the last of them
 * (changes noted out of order), it follows them: a point stands where the
 * counter changed, never at a poll's time, so that after a cut the
 * counter's value at the cut is the last point's at or before it.
 */
void
tide_counter_envelope_write (TideCounterEnvelope   *self,
                             gint64                 now_ns,
                             gint64                 value,
                             gboolean               cut,
                             TideEnvelopePointFunc  func,
                             gpointer               user_data)
{
  guint done = 0;

  for (; self->pending != NULL && done < self->pending->len; done++)
    {
      const TideEnvelopeBucket *b = &g_array_index (self->pending, TideEnvelopeBucket, done);

      if (!cut && now_ns - b->start_ns < self->bucket_ns + self->settle_ns)
        break;
      emit_bucket (self, b, now_ns, func, user_data);
    }
  if (done > 0)
    g_array_remove_range (self->pending, 0, done);
  if (self->pending == NULL || self->pending->len == 0)
    emit (self, self->written_ns == G_MININT64 ? now_ns : self->written_ns + 1, value, now_ns,
          func, user_data);
}
