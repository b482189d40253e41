/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-exercise.h"

#include <string.h>

#include "tide-drilldown.h"
#include "tide-report-format.h"
#include "tide-report.h"
#include "tide-timeline-data.h"
#include "tide-trace.h"

#ifdef TIDE_HAVE_RENDER
#include "tide-render.h"
#endif

typedef struct
{
  TideExerciseResult result;
  char              *first_error;
} Outcome;

/* Records @error (if set) and clears it. */
static void
note (Outcome  *outcome,
      GError  **error)
{
  if (*error == NULL)
    return;
  if ((*error)->message[0] == '\0' || strchr ((*error)->message, '\n') != NULL)
    outcome->result = TIDE_EXERCISE_BAD_ERROR;
  else if (outcome->result == TIDE_EXERCISE_OK)
    outcome->result = TIDE_EXERCISE_CLEAN_ERROR;
  if (outcome->first_error == NULL)
    outcome->first_error = g_strdup ((*error)->message);
  g_clear_error (error);
}

static const TideFormat formats[] = { TIDE_FORMAT_TEXT, TIDE_FORMAT_CSV, TIDE_FORMAT_JSON };
static const TideGroupBy groupings[] = { TIDE_GROUP_BY_STACK, TIDE_GROUP_BY_SCOPE };

static void
format_groups (GPtrArray      *groups,
               TideGroupsKind  kind,
               TideGroupBy     by,
               gint            step)
{
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    {
      g_autoptr(GString) out = g_string_new (NULL);
      tide_format_groups (out, groups, kind, by, step, formats[f]);
    }
}

/* The last step's number, for --retained --step N. */
static gint
exercise_steps (TideTrace *trace,
                Outcome   *outcome)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) rows = tide_report_steps (trace, &error);
  gint last = 0;

  note (outcome, &error);
  if (rows == NULL)
    return 0;
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    {
      g_autoptr(GString) out = g_string_new (NULL);
      tide_format_steps (out, rows, formats[f]);
    }
  for (guint i = 0; i < rows->len; i++)
    last = MAX (last, ((TideStepRow *) g_ptr_array_index (rows, i))->number);
  return last;
}

static void
exercise_groups (TideTrace *trace,
                 gint       last_step,
                 Outcome   *outcome)
{
  gint steps[] = { 0, 1, last_step };

  for (guint b = 0; b < G_N_ELEMENTS (groupings); b++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) suspects = tide_report_suspects (trace, groupings[b], &error);

      note (outcome, &error);
      if (suspects != NULL)
        format_groups (suspects, TIDE_GROUPS_SUSPECTS, groupings[b], 0);
      for (guint s = 0; s < G_N_ELEMENTS (steps); s++)
        {
          g_autoptr(GPtrArray) retained = tide_report_retained (trace, steps[s], groupings[b],
                                                                &error);
          note (outcome, &error);
          if (retained != NULL)
            format_groups (retained, TIDE_GROUPS_RETAINED, groupings[b], steps[s]);
        }
    }
}

/* What the window runs: the timeline (plain and through its cache), the
 * step bands, transfers, the top suspect's series and its frames, and the
 * drill-down of the whole trace. */
static void
exercise_window_queries (TideTrace *trace,
                         Outcome   *outcome)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTimelineCache) cache = tide_timeline_cache_new (1 << 20);
  g_autoptr(GPtrArray) suspects = NULL;
  gint64 span = MAX (tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace), 1000);
  TideTimelineData *data;
  GArray *array;

  data = tide_timeline_data_query (trace, 0, &(TideTimeWindow) { 0, span, 640 }, &error);
  note (outcome, &error);
  tide_timeline_data_free (data);
  for (int zoom = 1; zoom <= 64; zoom *= 8)
    {
      TideTimeWindow zoomed = { span / 2, span / 2 + span / zoom + 1, 640 };

      data = tide_timeline_data_query_cached (trace, cache, 0, &zoomed, &error);
      note (outcome, &error);
      tide_timeline_data_free (data);
    }
  if ((array = tide_timeline_steps (trace, 0, &error)) != NULL)
    g_array_unref (array);
  note (outcome, &error);
  if ((array = tide_timeline_transfers (trace, 0, &error)) != NULL)
    g_array_unref (array);
  note (outcome, &error);
  suspects = tide_report_suspects (trace, TIDE_GROUP_BY_STACK, &error);
  note (outcome, &error);
  if (suspects != NULL && suspects->len > 0)
    {
      const TideGroup *top = g_ptr_array_index (suspects, 0);
      g_autoptr(GPtrArray) frames = NULL;

      if ((array = tide_timeline_group_series (trace, top->process.id, top->stack_id,
                                               top->scope_id, top->device, &error)) != NULL)
        g_array_unref (array);
      note (outcome, &error);
      frames = tide_report_frames (trace, top->stack_id, &error);
      note (outcome, &error);
    }
  g_clear_pointer (&suspects, g_ptr_array_unref);
  if ((suspects = tide_drilldown_retained (trace, 0, 0, span, &error)) != NULL)
    g_clear_pointer (&suspects, g_ptr_array_unref);
  note (outcome, &error);
}

TideExerciseResult
tide_exercise_trace (const char  *path,
                     const char  *png_path,
                     char       **first_error)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TideTrace) trace = tide_trace_open (path, &error);
  Outcome outcome = { TIDE_EXERCISE_OK, NULL };

  note (&outcome, &error);
  if (trace != NULL)
    {
      gint last_step = exercise_steps (trace, &outcome);

      exercise_groups (trace, last_step, &outcome);
      exercise_window_queries (trace, &outcome);
#ifdef TIDE_HAVE_RENDER
      if (png_path != NULL)
        {
          tide_render_timeline_png (trace, png_path, 640, 360, &error);
          note (&outcome, &error);
        }
#endif
    }
  if (first_error != NULL)
    *first_error = outcome.first_error;
  else
    g_free (outcome.first_error);
  return outcome.result;
}
