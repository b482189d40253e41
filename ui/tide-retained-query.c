/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideRetainedQuery: what the session's selection retained.  It follows
 * the session: a step (its span in the chosen process, from the session's
 * tables) or a dragged range, and queries the blocks allocated in it and
 * still live at its end (tide_drilldown_retained_async), the one query
 * whose cost follows the selection, on a connection of its own off the
 * main thread, so that a click never freezes the window.  A newer
 * selection cancels the query of an older one, and a result that comes
 * for an older one is dropped.  With a compared run, a step's rows also
 * get what the compared run's aligned step retained of each ("compared").
 *
 * The drill-down tree and the flame graph bind to its "groups", so the
 * two show the same rows; the window reads it for its title, its banner
 * and the drill-down's CSV.  No widget: declared in the window's
 * template beside the session it follows.
 */
#include "config.h"

#include "tide-retained-query.h"

#include "tide-drilldown.h"

struct _TideRetainedQuery
{
  GObject       parent_instance;

  TideSession  *session;
  /* The selection queried: a step (step > 0) or a range, in ns from the
   * trace's start, in one process of one trace. */
  TideTrace    *trace;
  gint64        process_id;
  gint          step;
  gint64        begin;
  gint64        end;
  GPtrArray    *groups;      /* TideGroup*: its rows, or NULL */
  GHashTable   *compared;    /* the compared run's, or NULL */
  char         *error;       /* why the last query failed, or NULL */
  GCancellable *cancellable; /* the running query's */
  guint         serial;      /* the latest query's */
  gboolean      loading;
};

G_DEFINE_FINAL_TYPE (TideRetainedQuery, tide_retained_query, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_SESSION,
  PROP_GROUPS,
  PROP_COMPARED,
  PROP_LOADING,
  PROP_ERROR,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

typedef struct
{
  TideRetainedQuery *self;   /* owned */
  guint              serial;
} Request;

static void
set_error (TideRetainedQuery *self,
           const char        *message)
{
  g_free (self->error);
  self->error = g_strdup (message);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR]);
}

/* What the compared run's aligned step retained of each row: a step's
 * rows, with a comparison, only. */
static void
update_compared (TideRetainedQuery *self)
{
  const TideTraceDiff *diff = tide_session_get_comparison (self->session);
  g_autoptr(GError) error = NULL;
  GHashTable *compared = NULL;

  if (diff != NULL && self->step > 0 && self->groups != NULL)
    compared = tide_trace_diff_step_retained (diff, tide_session_get_compare_trace (self->session),
                                              self->step, &error);
  if (error != NULL)
    set_error (self, error->message);
  if (compared == NULL && self->compared == NULL)
    return;
  g_clear_pointer (&self->compared, g_hash_table_unref);
  self->compared = compared;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPARED]);
}

/* Shows @groups (NULL: none), done loading. */
static void
set_groups (TideRetainedQuery *self,
            GPtrArray         *groups,
            gboolean           loading)
{
  g_object_freeze_notify (G_OBJECT (self));
  g_clear_pointer (&self->groups, g_ptr_array_unref);
  self->groups = groups ? g_ptr_array_ref (groups) : NULL;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GROUPS]);
  if (self->loading != loading)
    {
      self->loading = loading;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
    }
  update_compared (self);
  g_object_thaw_notify (G_OBJECT (self));
}

static void
loaded_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Request *request = user_data;
  TideRetainedQuery *self = request->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) groups = tide_drilldown_retained_finish (TIDE_TRACE (source), result,
                                                                &error);

  if (request->serial == self->serial &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_clear_object (&self->cancellable);
      if (error != NULL)
        set_error (self, error->message);
      set_groups (self, groups, FALSE);
    }
  g_object_unref (request->self);
  g_free (request);
}

static void
cancel (TideRetainedQuery *self)
{
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->serial++;
}

/* Starts the query of the selection, cancelling the one before; until its
 * result comes, there are no rows and it is loading. */
static void
load (TideRetainedQuery *self)
{
  Request *request;

  cancel (self);
  if (self->trace == NULL || self->end <= self->begin)
    {
      set_groups (self, NULL, FALSE);
      return;
    }
  set_groups (self, NULL, TRUE);
  self->cancellable = g_cancellable_new ();
  request = g_new (Request, 1);
  *request = (Request) { g_object_ref (self), self->serial };
  tide_drilldown_retained_async (self->trace, self->process_id, self->begin, self->end,
                                 self->cancellable, loaded_cb, request);
}

/* A selection shown or loading already is not queried again: several of
 * the session's properties change at once. */
static void
session_selection_cb (TideRetainedQuery *self)
{
  TideSession *session = self->session;
  gint64 process_id = tide_session_get_process_id (session);
  gint step = tide_session_get_step (session);
  TideTraceTables *tables = tide_session_get_tables (session);
  const TideStepRow *row = step > 0 && tables != NULL
                           ? tide_trace_tables_find_step (tables, process_id, step) : NULL;
  TideTrace *trace = tide_session_get_trace (session);
  gint64 begin, end;

  if (row != NULL)
    {
      begin = row->start_ns;
      end = row->start_ns + row->duration_ns;
    }
  else
    tide_session_get_range (session, &begin, &end);
  if (trace == self->trace && process_id == self->process_id &&
      (row ? step : 0) == self->step && begin == self->begin && end == self->end)
    return;
  g_set_object (&self->trace, trace);
  self->process_id = process_id;
  self->step = row ? step : 0;
  self->begin = begin;
  self->end = end;
  load (self);
}

static void
session_comparison_cb (TideRetainedQuery *self)
{
  update_compared (self);
}

static void
follow_session (TideRetainedQuery *self)
{
  static const char *const selection[] = {
    "notify::tables", "notify::process-id", "notify::step", "notify::range-begin",
    "notify::range-end",
  };

  for (guint i = 0; i < G_N_ELEMENTS (selection); i++)
    g_signal_connect_object (self->session, selection[i], G_CALLBACK (session_selection_cb),
                             self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->session, "notify::comparison",
                           G_CALLBACK (session_comparison_cb), self, G_CONNECT_SWAPPED);
  session_selection_cb (self);
}

static void
tide_retained_query_dispose (GObject *object)
{
  TideRetainedQuery *self = TIDE_RETAINED_QUERY (object);

  cancel (self);
  g_clear_object (&self->session);
  g_clear_object (&self->trace);
  g_clear_pointer (&self->groups, g_ptr_array_unref);
  g_clear_pointer (&self->compared, g_hash_table_unref);
  G_OBJECT_CLASS (tide_retained_query_parent_class)->dispose (object);
}

static void
tide_retained_query_finalize (GObject *object)
{
  TideRetainedQuery *self = TIDE_RETAINED_QUERY (object);

  g_free (self->error);
  G_OBJECT_CLASS (tide_retained_query_parent_class)->finalize (object);
}

static void
tide_retained_query_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  TideRetainedQuery *self = TIDE_RETAINED_QUERY (object);

  switch (prop_id)
    {
    case PROP_SESSION: g_value_set_object (value, self->session); break;
    case PROP_GROUPS: g_value_set_boxed (value, self->groups); break;
    case PROP_COMPARED: g_value_set_boxed (value, self->compared); break;
    case PROP_LOADING: g_value_set_boolean (value, self->loading); break;
    case PROP_ERROR: g_value_set_string (value, self->error); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_retained_query_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  TideRetainedQuery *self = TIDE_RETAINED_QUERY (object);

  switch (prop_id)
    {
    case PROP_SESSION: self->session = g_value_dup_object (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_retained_query_constructed (GObject *object)
{
  TideRetainedQuery *self = TIDE_RETAINED_QUERY (object);

  G_OBJECT_CLASS (tide_retained_query_parent_class)->constructed (object);
  g_return_if_fail (TIDE_IS_SESSION (self->session));
  follow_session (self);
}

static void
tide_retained_query_class_init (TideRetainedQueryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->constructed = tide_retained_query_constructed;
  object_class->dispose = tide_retained_query_dispose;
  object_class->finalize = tide_retained_query_finalize;
  object_class->get_property = tide_retained_query_get_property;
  object_class->set_property = tide_retained_query_set_property;

  properties[PROP_SESSION] =
    g_param_spec_object ("session", NULL, NULL, TIDE_TYPE_SESSION,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /* TideGroup*: what the selection retained, or NULL (none, or loading). */
  properties[PROP_GROUPS] = g_param_spec_boxed ("groups", NULL, NULL, G_TYPE_PTR_ARRAY, ro);
  /* tide_trace_diff_step_retained() of a step's rows, or NULL. */
  properties[PROP_COMPARED] = g_param_spec_boxed ("compared", NULL, NULL, G_TYPE_HASH_TABLE, ro);
  properties[PROP_LOADING] = g_param_spec_boolean ("loading", NULL, NULL, FALSE, ro);
  /* Why a query failed: notified at each failure. */
  properties[PROP_ERROR] = g_param_spec_string ("error", NULL, NULL, NULL, ro);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
tide_retained_query_init (TideRetainedQuery *self)
{
}

TideRetainedQuery *
tide_retained_query_new (TideSession *session)
{
  g_return_val_if_fail (TIDE_IS_SESSION (session), NULL);
  return g_object_new (TIDE_TYPE_RETAINED_QUERY, "session", session, NULL);
}

/* Returns: (transfer none) (nullable) (element-type TideGroup) */
GPtrArray *
tide_retained_query_get_groups (TideRetainedQuery *self)
{
  g_return_val_if_fail (TIDE_IS_RETAINED_QUERY (self), NULL);
  return self->groups;
}

/* Returns: (transfer none) (nullable) */
GHashTable *
tide_retained_query_get_compared (TideRetainedQuery *self)
{
  g_return_val_if_fail (TIDE_IS_RETAINED_QUERY (self), NULL);
  return self->compared;
}

gboolean
tide_retained_query_get_loading (TideRetainedQuery *self)
{
  g_return_val_if_fail (TIDE_IS_RETAINED_QUERY (self), FALSE);
  return self->loading;
}

const char *
tide_retained_query_get_error (TideRetainedQuery *self)
{
  g_return_val_if_fail (TIDE_IS_RETAINED_QUERY (self), NULL);
  return self->error;
}

/* Returns: (transfer none) (nullable): the trace of the selection queried */
TideTrace *
tide_retained_query_get_trace (TideRetainedQuery *self)
{
  g_return_val_if_fail (TIDE_IS_RETAINED_QUERY (self), NULL);
  return self->trace;
}

gint64
tide_retained_query_get_process_id (TideRetainedQuery *self)
{
  g_return_val_if_fail (TIDE_IS_RETAINED_QUERY (self), 0);
  return self->process_id;
}

/* The step queried, or 0 for a range (or nothing). */
gint
tide_retained_query_get_step (TideRetainedQuery *self)
{
  g_return_val_if_fail (TIDE_IS_RETAINED_QUERY (self), 0);
  return self->step;
}

/* The span queried, in ns from the trace's start: a step's, or the range. */
void
tide_retained_query_get_range (TideRetainedQuery *self,
                               gint64            *begin,
                               gint64            *end)
{
  g_return_if_fail (TIDE_IS_RETAINED_QUERY (self));
  *begin = self->begin;
  *end = self->end;
}

GCancellable *
_tide_retained_query_get_cancellable (TideRetainedQuery *self)
{
  g_return_val_if_fail (TIDE_IS_RETAINED_QUERY (self), NULL);
  return self->cancellable;
}
