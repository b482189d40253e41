/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideSession: what the user is looking at in one trace, in one place.
 * The trace, the chosen process, the chosen step or dragged range, the
 * visible window and the zooms that led to it are properties here, and
 * every view binds to them (g_object_bind_property, or a notify handler on
 * the session) instead of to each other; a view that changes one sets it
 * here and the others follow.  No widget: the session holds state and the
 * rules that tie its parts together, so it is tested without a display.
 *
 * The rules: a step and a range are two kinds of selection, so choosing
 * one clears the other; another process clears both, as its steps are
 * others; a zoom action records the window it leaves, so that zoom-back
 * returns to it.  Setters notify every property they changed at once
 * (freeze/thaw), so a handler always sees a consistent session.
 *
 * A second trace may be compared with the one shown ("Compare with…"):
 * the session holds it and the comparison of the chosen process with its
 * counterpart there (tide_trace_diff_new, the comparison `tidemark diff`
 * prints), made again whenever either trace or the process changes, so
 * that the views that bind to "comparison" never hold a stale one.
 * Another file shown ends the comparison; the same one reopened keeps it.
 *
 * What the views show of the whole trace, its steps, suspects and
 * processes, is read once when the trace is set: the session's "tables"
 * (tide-trace-tables.c), which every view that shows them binds to.  The
 * leak suspect chosen among them ("suspect") is the session's too: the
 * timeline draws its growth; choosing one chooses its process, and new
 * tables drop it.
 *
 * Whether allocator and runtime plumbing frames are left out of the
 * stack views ("hide-plumbing") is the session's too, on by default: the
 * drill-down's check box and the flame graph follow it, so both show the
 * same stacks.
 */
#include "config.h"

#include "tide-session.h"

#include "tide-timeline-model.h"

/* Enough to undo any sequence of zooms a person makes; the oldest go. */
#define MAX_ZOOM_HISTORY 64

typedef struct
{
  gint64 begin;
  gint64 end;
} Window;

struct _TideSession
{
  GObject            parent_instance;

  TideTrace         *trace;
  TideTraceTables   *tables;         /* of trace, or NULL */
  const TideGroup   *suspect;        /* one of tables' suspects, or NULL */
  GArray            *zoom_history;   /* Window, oldest first */
  TideTimelineModel  model;          /* the visible window, in proportions only */
  gint64             process_id;
  gint64             range_begin;    /* -1: no range */
  gint64             range_end;
  gint               step;           /* 0: no step */
  TideTrace         *compare_trace;  /* nullable: the trace compared with */
  TideTraceDiff     *comparison;     /* nullable: trace against compare_trace */
  char              *compare_error;  /* why there is no comparison */
  gboolean           hide_plumbing;
};

G_DEFINE_FINAL_TYPE (TideSession, tide_session, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_TRACE,
  PROP_TABLES,
  PROP_SUSPECT,
  PROP_PROCESS_ID,
  PROP_STEP,
  PROP_RANGE_BEGIN,
  PROP_RANGE_END,
  PROP_VISIBLE_BEGIN,
  PROP_VISIBLE_END,
  PROP_ZOOM_DEPTH,
  PROP_COMPARE_TRACE,
  PROP_COMPARISON,
  PROP_HIDE_PLUMBING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
notify (TideSession *self,
        guint        prop)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

static void
clear_step (TideSession *self)
{
  if (self->step != 0)
    {
      self->step = 0;
      notify (self, PROP_STEP);
    }
}

static void
clear_range (TideSession *self)
{
  if (self->range_begin != -1 || self->range_end != -1)
    {
      self->range_begin = self->range_end = -1;
      notify (self, PROP_RANGE_BEGIN);
      notify (self, PROP_RANGE_END);
    }
}

static void
clear_zoom_history (TideSession *self)
{
  if (self->zoom_history->len > 0)
    {
      g_array_set_size (self->zoom_history, 0);
      notify (self, PROP_ZOOM_DEPTH);
    }
}

static void
notify_visible (TideSession *self)
{
  notify (self, PROP_VISIBLE_BEGIN);
  notify (self, PROP_VISIBLE_END);
}

static void
update_comparison (TideSession *self)
{
  g_autoptr(GError) error = NULL;
  gboolean had = self->comparison != NULL || self->compare_error != NULL;

  g_clear_pointer (&self->comparison, tide_trace_diff_free);
  g_clear_pointer (&self->compare_error, g_free);
  if (self->trace != NULL && self->compare_trace != NULL)
    {
      self->comparison = tide_trace_diff_new_for_process (self->trace, self->process_id,
                                                          self->compare_trace, &error);
      if (self->comparison == NULL)
        self->compare_error = g_strdup (error ? error->message : "cannot compare the traces");
    }
  if (had || self->comparison != NULL || self->compare_error != NULL)
    notify (self, PROP_COMPARISON);
}

static void
tide_session_dispose (GObject *object)
{
  TideSession *self = TIDE_SESSION (object);

  g_clear_object (&self->trace);
  g_clear_object (&self->tables);
  g_clear_object (&self->compare_trace);
  g_clear_pointer (&self->comparison, tide_trace_diff_free);
  G_OBJECT_CLASS (tide_session_parent_class)->dispose (object);
}

static void
tide_session_finalize (GObject *object)
{
  TideSession *self = TIDE_SESSION (object);

  g_array_unref (self->zoom_history);
  g_free (self->compare_error);
  G_OBJECT_CLASS (tide_session_parent_class)->finalize (object);
}

static void
tide_session_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  TideSession *self = TIDE_SESSION (object);

  switch (prop_id)
    {
    case PROP_TRACE: g_value_set_object (value, self->trace); break;
    case PROP_TABLES: g_value_set_object (value, self->tables); break;
    case PROP_SUSPECT: g_value_set_pointer (value, (gpointer) self->suspect); break;
    case PROP_PROCESS_ID: g_value_set_int64 (value, self->process_id); break;
    case PROP_STEP: g_value_set_int (value, self->step); break;
    case PROP_RANGE_BEGIN: g_value_set_int64 (value, self->range_begin); break;
    case PROP_RANGE_END: g_value_set_int64 (value, self->range_end); break;
    case PROP_VISIBLE_BEGIN: g_value_set_int64 (value, self->model.begin); break;
    case PROP_VISIBLE_END: g_value_set_int64 (value, self->model.end); break;
    case PROP_ZOOM_DEPTH: g_value_set_uint (value, self->zoom_history->len); break;
    case PROP_COMPARE_TRACE: g_value_set_object (value, self->compare_trace); break;
    case PROP_COMPARISON: g_value_set_pointer (value, self->comparison); break;
    case PROP_HIDE_PLUMBING: g_value_set_boolean (value, self->hide_plumbing); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_session_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  TideSession *self = TIDE_SESSION (object);

  switch (prop_id)
    {
    case PROP_TRACE: tide_session_set_trace (self, g_value_get_object (value)); break;
    case PROP_PROCESS_ID: tide_session_set_process_id (self, g_value_get_int64 (value)); break;
    case PROP_STEP: tide_session_set_step (self, g_value_get_int (value)); break;
    case PROP_COMPARE_TRACE:
      tide_session_set_compare_trace (self, g_value_get_object (value));
      break;
    case PROP_HIDE_PLUMBING:
      if (self->hide_plumbing != g_value_get_boolean (value))
        {
          self->hide_plumbing = g_value_get_boolean (value);
          notify (self, PROP_HIDE_PLUMBING);
        }
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_session_class_init (TideSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->dispose = tide_session_dispose;
  object_class->finalize = tide_session_finalize;
  object_class->get_property = tide_session_get_property;
  object_class->set_property = tide_session_set_property;

  properties[PROP_TRACE] = g_param_spec_object ("trace", NULL, NULL, TIDE_TYPE_TRACE, rw);
  /* Read when the trace is set, with it. */
  properties[PROP_TABLES] = g_param_spec_object ("tables", NULL, NULL, TIDE_TYPE_TRACE_TABLES,
                                                 ro);
  /* A TideGroup of the tables' suspects, or NULL: tide_session_set_suspect(). */
  properties[PROP_SUSPECT] = g_param_spec_pointer ("suspect", NULL, NULL, ro);
  properties[PROP_PROCESS_ID] = g_param_spec_int64 ("process-id", NULL, NULL,
                                                    0, G_MAXINT64, 0, rw);
  properties[PROP_STEP] = g_param_spec_int ("step", NULL, NULL, 0, G_MAXINT, 0, rw);
  /* Both ends of a range change together: tide_session_set_range(). */
  properties[PROP_RANGE_BEGIN] = g_param_spec_int64 ("range-begin", NULL, NULL,
                                                     -1, G_MAXINT64, -1, ro);
  properties[PROP_RANGE_END] = g_param_spec_int64 ("range-end", NULL, NULL,
                                                   -1, G_MAXINT64, -1, ro);
  properties[PROP_VISIBLE_BEGIN] = g_param_spec_int64 ("visible-begin", NULL, NULL,
                                                       G_MININT64, G_MAXINT64, 0, ro);
  properties[PROP_VISIBLE_END] = g_param_spec_int64 ("visible-end", NULL, NULL,
                                                     G_MININT64, G_MAXINT64, 0, ro);
  properties[PROP_ZOOM_DEPTH] = g_param_spec_uint ("zoom-depth", NULL, NULL,
                                                   0, G_MAXUINT, 0, ro);
  properties[PROP_COMPARE_TRACE] = g_param_spec_object ("compare-trace", NULL, NULL,
                                                        TIDE_TYPE_TRACE, rw);
  /* A TideTraceDiff owned by the session, or NULL: tide_session_get_comparison(). */
  properties[PROP_COMPARISON] = g_param_spec_pointer ("comparison", NULL, NULL, ro);
  properties[PROP_HIDE_PLUMBING] = g_param_spec_boolean ("hide-plumbing", NULL, NULL, TRUE,
                                                         rw | G_PARAM_CONSTRUCT);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
tide_session_init (TideSession *self)
{
  self->zoom_history = g_array_new (FALSE, FALSE, sizeof (Window));
  self->range_begin = self->range_end = -1;
  tide_timeline_model_init (&self->model, 0, 0, 1.0);
}

TideSession *
tide_session_new (void)
{
  return g_object_new (TIDE_TYPE_SESSION, NULL);
}

/**
 * tide_session_get_trace:
 *
 * Returns: (transfer none) (nullable): the trace shown
 */
TideTrace *
tide_session_get_trace (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), NULL);
  return self->trace;
}

static gboolean
same_file (TideTrace *a,
           TideTrace *b)
{
  return a != NULL && b != NULL &&
         g_strcmp0 (tide_trace_get_path (a), tide_trace_get_path (b)) == 0;
}

/* The same capture reopened as it grows keeps the process, the selection
 * and the zoom history; another file starts without them.  Either keeps
 * the window unless the whole trace was shown, in which case the whole
 * new one is, so that a growing capture watched whole stays whole. */
void
tide_session_set_trace (TideSession *self,
                        TideTrace   *trace)
{
  gboolean keep, was_fit;
  Window window = { self->model.begin, self->model.end };

  g_return_if_fail (TIDE_IS_SESSION (self));
  g_return_if_fail (trace == NULL || TIDE_IS_TRACE (trace));

  if (trace == self->trace)
    return;
  keep = same_file (self->trace, trace);
  was_fit = self->trace == NULL ||
            (window.begin == self->model.doc_begin && window.end == self->model.doc_end);
  g_object_freeze_notify (G_OBJECT (self));
  g_set_object (&self->trace, trace);
  g_clear_object (&self->tables);
  if (trace != NULL)
    self->tables = tide_trace_tables_new (trace);
  notify (self, PROP_TABLES);
  if (self->suspect != NULL)
    {
      self->suspect = NULL;
      notify (self, PROP_SUSPECT);
    }
  tide_timeline_model_init (&self->model, 0,
                            trace ? tide_trace_get_end_ns (trace) - tide_trace_get_start_ns (trace)
                                  : 0,
                            1.0);
  if (!was_fit)
    tide_timeline_model_set_range (&self->model, window.begin, window.end);
  if (!keep && self->compare_trace != NULL)
    {
      g_clear_object (&self->compare_trace);
      notify (self, PROP_COMPARE_TRACE);
    }
  if (!keep)
    {
      clear_zoom_history (self);
      clear_step (self);
      clear_range (self);
      if (self->process_id != 0)
        {
          self->process_id = 0;
          notify (self, PROP_PROCESS_ID);
        }
    }
  if (window.begin != self->model.begin || window.end != self->model.end)
    notify_visible (self);
  update_comparison (self);
  notify (self, PROP_TRACE);
  g_object_thaw_notify (G_OBJECT (self));
}

/**
 * tide_session_get_tables:
 *
 * Returns: (transfer none) (nullable): what the views show of the whole
 *   trace, read when it was set
 */
TideTraceTables *
tide_session_get_tables (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), NULL);
  return self->tables;
}

/**
 * tide_session_get_suspect:
 *
 * Returns: (transfer none) (nullable): the leak suspect chosen, one of the
 *   tables' suspects
 */
const TideGroup *
tide_session_get_suspect (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), NULL);
  return self->suspect;
}

/* Chooses @suspect (NULL: none), one of the tables' suspects, and its
 * process. */
void
tide_session_set_suspect (TideSession     *self,
                          const TideGroup *suspect)
{
  g_return_if_fail (TIDE_IS_SESSION (self));

  if (suspect == self->suspect)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  if (suspect != NULL)
    tide_session_set_process_id (self, suspect->process.id);
  self->suspect = suspect;
  notify (self, PROP_SUSPECT);
  g_object_thaw_notify (G_OBJECT (self));
}

gint64
tide_session_get_process_id (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), 0);
  return self->process_id;
}

/* Another process's steps are not this one's: its selection goes. */
void
tide_session_set_process_id (TideSession *self,
                             gint64       process_id)
{
  g_return_if_fail (TIDE_IS_SESSION (self));

  if (self->process_id == process_id)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  self->process_id = process_id;
  clear_step (self);
  clear_range (self);
  update_comparison (self);
  notify (self, PROP_PROCESS_ID);
  g_object_thaw_notify (G_OBJECT (self));
}

gint
tide_session_get_step (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), 0);
  return self->step;
}

/* 0 chooses no step; a step clears the range. */
void
tide_session_set_step (TideSession *self,
                       gint         number)
{
  g_return_if_fail (TIDE_IS_SESSION (self));

  number = MAX (number, 0);
  if (self->step == number)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  self->step = number;
  if (number > 0)
    clear_range (self);
  notify (self, PROP_STEP);
  g_object_thaw_notify (G_OBJECT (self));
}

/* Either end may be NULL when the caller wants only the other. */
static void
get_span (gint64  span_begin,
          gint64  span_end,
          gint64 *begin,
          gint64 *end)
{
  if (begin != NULL)
    *begin = span_begin;
  if (end != NULL)
    *end = span_end;
}

void
tide_session_get_range (TideSession *self,
                        gint64      *begin,
                        gint64      *end)
{
  g_return_if_fail (TIDE_IS_SESSION (self));
  get_span (self->range_begin, self->range_end, begin, end);
}

/* A range of nanoseconds from the trace start, end exclusive; an empty
 * or negative one clears it.  A range clears the step. */
void
tide_session_set_range (TideSession *self,
                        gint64       begin,
                        gint64       end)
{
  g_return_if_fail (TIDE_IS_SESSION (self));

  if (begin < 0 || end <= begin)
    begin = end = -1;
  if (self->range_begin == begin && self->range_end == end)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  self->range_begin = begin;
  self->range_end = end;
  if (begin >= 0)
    clear_step (self);
  notify (self, PROP_RANGE_BEGIN);
  notify (self, PROP_RANGE_END);
  g_object_thaw_notify (G_OBJECT (self));
}

void
tide_session_get_visible (TideSession *self,
                          gint64      *begin,
                          gint64      *end)
{
  g_return_if_fail (TIDE_IS_SESSION (self));
  get_span (self->model.begin, self->model.end, begin, end);
}

/* Clamped to the trace, as the timeline clamps it (tide-timeline-model.c):
 * a window pushed past an edge slides back rather than shrinking. */
void
tide_session_set_visible (TideSession *self,
                          gint64       begin,
                          gint64       end)
{
  g_return_if_fail (TIDE_IS_SESSION (self));

  if (!tide_timeline_model_set_range (&self->model, begin, end))
    return;
  g_object_freeze_notify (G_OBJECT (self));
  notify_visible (self);
  g_object_thaw_notify (G_OBJECT (self));
}

static void
push_zoom_history (TideSession *self,
                   const Window *window)
{
  if (self->zoom_history->len == MAX_ZOOM_HISTORY)
    g_array_remove_index (self->zoom_history, 0);
  g_array_append_val (self->zoom_history, *window);
  notify (self, PROP_ZOOM_DEPTH);
}

/* Every zoom action goes through here: a window that changes is
 * remembered for zoom-back. */
static void
zoom_to (TideSession             *self,
         const TideTimelineModel *zoomed)
{
  Window before = { self->model.begin, self->model.end };

  if (zoomed->begin == before.begin && zoomed->end == before.end)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  self->model = *zoomed;
  push_zoom_history (self, &before);
  notify_visible (self);
  g_object_thaw_notify (G_OBJECT (self));
}

/**
 * tide_session_zoom:
 * @factor: > 1 zooms in, < 1 out
 *
 * Zooms around the middle of the visible window, whatever has the focus,
 * so that a key, a button and a menu item zoom alike.
 */
void
tide_session_zoom (TideSession *self,
                   double       factor)
{
  TideTimelineModel zoomed;

  g_return_if_fail (TIDE_IS_SESSION (self));
  g_return_if_fail (factor > 0);

  zoomed = self->model;
  tide_timeline_model_zoom_around (&zoomed, zoomed.width / 2.0, factor);
  zoom_to (self, &zoomed);
}

void
tide_session_zoom_fit (TideSession *self)
{
  TideTimelineModel zoomed;

  g_return_if_fail (TIDE_IS_SESSION (self));

  zoomed = self->model;
  tide_timeline_model_fit (&zoomed);
  zoom_to (self, &zoomed);
}

/* Returns: FALSE when no zoom is left to undo. */
gboolean
tide_session_zoom_back (TideSession *self)
{
  Window window;

  g_return_val_if_fail (TIDE_IS_SESSION (self), FALSE);

  if (self->zoom_history->len == 0)
    return FALSE;
  window = g_array_index (self->zoom_history, Window, self->zoom_history->len - 1);
  g_object_freeze_notify (G_OBJECT (self));
  g_array_set_size (self->zoom_history, self->zoom_history->len - 1);
  notify (self, PROP_ZOOM_DEPTH);
  tide_session_set_visible (self, window.begin, window.end);
  g_object_thaw_notify (G_OBJECT (self));
  return TRUE;
}

guint
tide_session_get_zoom_depth (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), 0);
  return self->zoom_history->len;
}

/**
 * tide_session_get_compare_trace:
 *
 * Returns: (transfer none) (nullable): the trace compared with the one shown
 */
TideTrace *
tide_session_get_compare_trace (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), NULL);
  return self->compare_trace;
}

/* NULL ends the comparison. */
void
tide_session_set_compare_trace (TideSession *self,
                                TideTrace   *trace)
{
  g_return_if_fail (TIDE_IS_SESSION (self));
  g_return_if_fail (trace == NULL || TIDE_IS_TRACE (trace));

  if (trace == self->compare_trace)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  g_set_object (&self->compare_trace, trace);
  update_comparison (self);
  notify (self, PROP_COMPARE_TRACE);
  g_object_thaw_notify (G_OBJECT (self));
}

/**
 * tide_session_get_comparison:
 *
 * Returns: (transfer none) (nullable): the shown trace's process against
 *   its counterpart in the compared trace; %NULL without a compared trace,
 *   or when they could not be compared (tide_session_get_compare_error())
 */
const TideTraceDiff *
tide_session_get_comparison (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), NULL);
  return self->comparison;
}

/* Returns: (nullable): why the traces could not be compared */
const char *
tide_session_get_compare_error (TideSession *self)
{
  g_return_val_if_fail (TIDE_IS_SESSION (self), NULL);
  return self->compare_error;
}
