/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One time bucket's extremes and last value, with when each was taken. */
typedef struct
{
  gint64 bucket;
  gint64 start_ns;
  gint64 high, high_ns;
  gint64 low, low_ns;
  gint64 last, last_ns;
} TideEnvelopeBucket;

/* The points that draw a counter which changes far more often than it is
 * written (tide-counter-envelope.c). */
typedef struct
{
  gint64  origin_ns;
  gint64  bucket_ns;
  gint64  settle_ns;   /* how long after its end a bucket may still get changes */
  GArray *pending;     /* TideEnvelopeBucket, oldest first, not written yet; NULL: none yet */
  gint64  written;     /* the last value written; -1: none */
  gint64  written_ns;  /* ... and its time */
} TideCounterEnvelope;

typedef void (*TideEnvelopePointFunc) (gint64   ts_ns,
                                       gint64   value,
                                       gpointer user_data);

void     tide_counter_envelope_init       (TideCounterEnvelope   *self,
                                           gint64                 origin_ns,
                                           gint64                 bucket_ns,
                                           gint64                 settle_ns);
void     tide_counter_envelope_clear      (TideCounterEnvelope   *self);
void     tide_counter_envelope_note       (TideCounterEnvelope   *self,
                                           gint64                 ts_ns,
                                           gint64                 value);
gboolean tide_counter_envelope_has_points (TideCounterEnvelope   *self);
void     tide_counter_envelope_write      (TideCounterEnvelope   *self,
                                           gint64                 now_ns,
                                           gint64                 value,
                                           gboolean               cut,
                                           TideEnvelopePointFunc  func,
                                           gpointer               user_data);

G_END_DECLS
