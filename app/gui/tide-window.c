/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideWindow: one trace.  What the user looks at lives in a TideSession
 * (ui/tide-session.c): the process, a step (from the timeline or the
 * table) or a time range (dragged on the timeline), the visible window,
 * and the trace's tables (steps, suspects, processes).  The timeline, the
 * steps table, the suspects, the process picker and the drill-down each
 * bind to the session, never to each other; the drill-down tree, the
 * flame graph and the drill-down CSV all show the rows of the retained
 * query (ui/tide-retained-query.c) that follows the session's selection.
 * A compared trace ("Compare with…") is the session's too: the timeline
 * draws its lanes over the shown ones and the steps table adds the
 * differences, from the session's comparison.
 *
 * Queries run on the main thread: the trace's SQLite connection is
 * single-threaded and shared with the timeline (see tide-timeline-view.c).
 * Two run off it: live capture reopens the growing file, and the retained
 * query, the one whose cost follows the selection (the rows allocated in
 * it), runs on a second connection of its own, so a click never freezes
 * the window.
 */
#include "config.h"

#include "tide-window.h"

#include "tide-drilldown.h"
#include "tide-processes.h"
#include "tide-report-format.h"
#include "tide-report.h"
#include "tide-report-rss.h"
#include "tide-storage-error.h"
#include "tide-timeline-data.h"
#include "tide-window-private.h"

G_DEFINE_FINAL_TYPE (TideWindow, tide_window, ADW_TYPE_APPLICATION_WINDOW)

static void
set_banner (TideWindow *self,
            const char *message)
{
  g_free (self->banner_message);
  self->banner_message = g_strdup (message);
  gtk_label_set_text (self->banner_label, message ? message : "");
  gtk_info_bar_set_revealed (self->banner, message != NULL);
}

static void
set_subtitle (TideWindow *self)
{
  TideTrace *trace = tide_session_get_trace (self->session);
  TideTrace *compared = tide_session_get_compare_trace (self->session);
  g_autofree char *shown = trace ? g_path_get_basename (tide_trace_get_path (trace)) : NULL;
  g_autofree char *other = compared ? g_path_get_basename (tide_trace_get_path (compared)) : NULL;
  g_autofree char *both = other ? g_strdup_printf ("%s compared with %s", shown, other) : NULL;

  adw_window_title_set_subtitle (self->title, both ? both : shown);
}

static void
tide_window_banner_response_cb (TideWindow *self,
                                int         response)
{
  set_banner (self, NULL);
}

/* The drill-down's title says what the retained query shows: the step or
 * range and the bytes the flame graph counts (which has its rows already:
 * its binding came with the template, before this handler), or that it
 * is loading. */
static void
tide_window_retained_cb (TideWindow *self)
{
  g_autofree char *title = NULL;
  g_autofree char *total = NULL;
  gint step = tide_retained_query_get_step (self->retained);
  gint64 begin, end;

  g_assert (TIDE_IS_WINDOW (self));

  tide_retained_query_get_range (self->retained, &begin, &end);
  total = tide_format_bytes (tide_flame_graph_get_total_bytes (self->flame_graph));
  if (tide_retained_query_get_loading (self->retained))
    title = g_strdup ("Loading…");
  else if (step > 0)
    title = g_strdup_printf ("Retained by step %d: %s", step, total);
  else if (tide_retained_query_get_groups (self->retained) != NULL)
    title = g_strdup_printf ("Retained in %.1f–%.1f ms: %s", begin / 1e6, end / 1e6, total);
  else
    title = g_strdup ("Choose a step or drag a range on the timeline");
  gtk_label_set_text (self->drilldown_title, title);
  _tide_window_actions_update (self);
}

static void
tide_window_retained_error_cb (TideWindow *self)
{
  set_banner (self, tide_retained_query_get_error (self->retained));
}

static void
tide_window_flame_search_cb (TideWindow *self)
{
  g_assert (TIDE_IS_WINDOW (self));
  tide_flame_graph_set_search (self->flame_graph,
                               gtk_editable_get_text (GTK_EDITABLE (self->flame_search)));
}

static void
tide_window_flame_selected_cb (TideWindow *self)
{
  const TideFrame *frame = tide_flame_graph_get_selected_frame (self->flame_graph);
  g_autofree char *bytes = NULL;
  g_autofree char *text = NULL;

  g_assert (TIDE_IS_WINDOW (self));

  if (frame == NULL)
    {
      gtk_label_set_text (self->frame_detail, "Click a frame to zoom to it and see where it is.");
      return;
    }
  bytes = tide_format_bytes (tide_flame_graph_get_selected_bytes (self->flame_graph));
  if (frame->file != NULL && frame->line > 0)
    text = g_strdup_printf ("%s — %s:%d — %s — %s retained", frame->function ? frame->function : "??",
                            frame->file, frame->line, frame->module ? frame->module : "?", bytes);
  else
    text = g_strdup_printf ("%s — %s+0x%" G_GINT64_MODIFIER "x — %s retained",
                            frame->function ? frame->function : "??",
                            frame->module ? frame->module : "?", frame->module_offset, bytes);
  gtk_label_set_text (self->frame_detail, text);
}

/* The suspect chosen is the session's: the timeline draws its growth. */
static void
tide_window_suspect_selected_cb (TideWindow *self)
{
  g_assert (TIDE_IS_WINDOW (self));
  tide_session_set_suspect (self->session, tide_suspects_view_get_selected (self->suspects_view));
}

/* The process picker's rows are the trace's processes: its binding to the
 * session is made for each list, so that replacing the list (which
 * selects its first row) says nothing about the chosen process. */
static gboolean
process_id_to_row (GBinding     *binding,
                   const GValue *from,
                   GValue       *to,
                   gpointer      data)
{
  TideWindow *self = data;
  gint64 process_id = g_value_get_int64 (from);

  for (guint i = 0; self->process_ids != NULL && i < self->process_ids->len; i++)
    if (g_array_index (self->process_ids, gint64, i) == process_id)
      {
        g_value_set_uint (to, i);
        return TRUE;
      }
  return FALSE;
}

static gboolean
row_to_process_id (GBinding     *binding,
                   const GValue *from,
                   GValue       *to,
                   gpointer      data)
{
  TideWindow *self = data;
  guint row = g_value_get_uint (from);

  if (self->process_ids == NULL || row >= self->process_ids->len)
    return FALSE;
  g_value_set_int64 (to, g_array_index (self->process_ids, gint64, row));
  return TRUE;
}

static void
bind_process_dropdown (TideWindow *self,
                       GListModel *names)
{
  if (self->process_binding != NULL)
    g_binding_unbind (self->process_binding);
  gtk_drop_down_set_model (self->process_dropdown, names);
  self->process_binding = g_object_bind_property_full (self->session, "process-id",
                                                       self->process_dropdown, "selected",
                                                       G_BINDING_BIDIRECTIONAL |
                                                       G_BINDING_SYNC_CREATE,
                                                       process_id_to_row, row_to_process_id,
                                                       self, NULL);
}

static guint
count_suspects (GPtrArray *suspects,
                gint64     process_id)
{
  guint n = 0;

  for (guint i = 0; suspects != NULL && i < suspects->len; i++)
    n += ((TideGroup *) g_ptr_array_index (suspects, i))->process.id == process_id;
  return n;
}

/* Every process of the job, named by role and command; those with leak
 * suspects say so.  In the order they started, host by host in a merged
 * trace (each name says its host), as `report --processes` lists them. */
static void
load_processes (TideWindow *self,
                GPtrArray  *processes,
                GPtrArray  *suspects)
{
  g_autoptr(GtkStringList) names = gtk_string_list_new (NULL);

  g_clear_pointer (&self->process_ids, g_array_unref);
  self->process_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; processes != NULL && i < processes->len; i++)
    {
      const TideProcess *p = g_ptr_array_index (processes, i);
      g_autofree char *name = NULL;

      g_array_append_val (self->process_ids, p->id);
      name = tide_process_picker_name (p, count_suspects (suspects, p->id));
      gtk_string_list_append (names, name);
    }
  bind_process_dropdown (self, G_LIST_MODEL (names));
  gtk_widget_set_visible (GTK_WIDGET (self->process_bar), self->process_ids->len > 1);
}

/* The session's tables are the trace's: the process picker lists its
 * processes, and steps that could not be read say why. */
static void
tide_window_session_tables_cb (TideWindow *self)
{
  TideTraceTables *tables = tide_session_get_tables (self->session);

  g_assert (TIDE_IS_WINDOW (self));

  load_processes (self, tables ? tide_trace_tables_get_processes (tables) : NULL,
                  tables ? tide_trace_tables_get_suspects (tables) : NULL);
  if (tables != NULL && tide_trace_tables_get_error (tables) != NULL)
    set_banner (self, tide_trace_tables_get_error (tables));
}

static gboolean
has_process (TideWindow *self,
             gint64      process_id)
{
  for (guint i = 0; i < self->process_ids->len; i++)
    if (g_array_index (self->process_ids, gint64, i) == process_id)
      return TRUE;
  return FALSE;
}

/* A trace opened afresh opens on its answer: the suspects, with the top
 * one chosen, which draws its growth on the timeline from the step where
 * it began; a trace without suspects opens on the drill-down. */
static void
show_first_answer (TideWindow *self)
{
  gboolean any = tide_suspects_view_get_n_rows (self->suspects_view) > 0;

  gtk_stack_set_visible_child_name (self->detail_stack, any ? "suspects" : "drilldown");
  if (any)
    tide_suspects_view_select (self->suspects_view, 0);
}

/* Shows @trace; the same capture reopened while it grows keeps the process
 * and the selection (the session's rule), as long as the process is still
 * in it; otherwise the window opens on the process with the top suspect,
 * and on that suspect. */
void
_tide_window_set_trace (TideWindow *self,
                        TideTrace  *trace)
{
  g_autofree char *early_end = NULL;
  const char *death_message;

  g_return_if_fail (TIDE_IS_WINDOW (self));
  g_return_if_fail (TIDE_IS_TRACE (trace));

  tide_session_set_trace (self->session, trace);
  if (!has_process (self, tide_session_get_process_id (self->session)))
    {
      tide_session_set_process_id (self->session, tide_report_pick_process (trace, NULL, NULL));
      show_first_answer (self);
    }
  set_subtitle (self);
  self->state = TIDE_WINDOW_TRACE;
  gtk_stack_set_visible_child_name (self->stack, "trace");
  early_end = tide_trace_describe_early_end (trace);
  death_message = tide_trace_tables_get_death_message (tide_session_get_tables (self->session));
  if (early_end != NULL && self->recorder == NULL)
    {
      g_autofree char *text = g_strdup_printf ("This trace ends early: its recording stopped "
                                               "writing it (%s). It shows what was written "
                                               "before.", early_end);
      set_banner (self, text);
    }
  else if (!tide_trace_is_complete (trace) && self->recorder == NULL)
    set_banner (self, "This trace is incomplete: it is still being recorded, or its recording "
                      "stopped early. It shows what was written so far.");
  else if (death_message != NULL)
    set_banner (self, death_message);
  else if (self->recorder == NULL)
    set_banner (self, NULL);
  _tide_window_actions_update (self);
}

void
_tide_window_show_error (TideWindow *self,
                         const char *title,
                         const char *message)
{
  g_return_if_fail (TIDE_IS_WINDOW (self));

  tide_session_set_trace (self->session, NULL);
  g_free (self->error_title);
  g_free (self->error_message);
  self->error_title = g_strdup (title);
  self->error_message = g_strdup (message);
  adw_status_page_set_title (self->error_page, title);
  adw_status_page_set_description (self->error_page, message);
  adw_window_title_set_subtitle (self->title, NULL);
  set_banner (self, NULL);
  self->state = TIDE_WINDOW_ERROR;
  gtk_stack_set_visible_child_name (self->stack, "error");
  _tide_window_actions_update (self);
}

static const char *
error_title (const GError *error)
{
  if (error->domain != TIDE_STORAGE_ERROR)
    return "Cannot Open This File";
  switch (error->code)
    {
    case TIDE_STORAGE_ERROR_NOT_SQLITE:
    case TIDE_STORAGE_ERROR_FOREIGN:
      return "Not a Tidemark Trace";
    case TIDE_STORAGE_ERROR_TRUNCATED:
    case TIDE_STORAGE_ERROR_CORRUPT:
    case TIDE_STORAGE_ERROR_DAMAGED:
      return "Damaged Trace";
    case TIDE_STORAGE_ERROR_NEWER_SCHEMA:
      return "Trace From a Newer Tidemark";
    default:
      return "Cannot Open This File";
    }
}

void
tide_window_open_file (TideWindow *self,
                       GFile      *file)
{
  g_autoptr(TideTrace) trace = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *uri = NULL;

  g_return_if_fail (TIDE_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  path = g_file_get_path (file);
  if (path == NULL)
    {
      _tide_window_show_error (self, "Cannot Open This File", "Only local files can be opened.");
      return;
    }
  trace = tide_trace_open (path, &error);
  if (trace == NULL)
    {
      _tide_window_show_error (self, error_title (error), error->message);
      return;
    }
  _tide_window_set_trace (self, trace);
  uri = g_file_get_uri (file);
  gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
  if (self->settings != NULL)
    {
      g_autoptr(GFile) parent = g_file_get_parent (file);
      g_autofree char *dir = parent ? g_file_get_path (parent) : NULL;
      if (dir != NULL)
        g_settings_set_string (self->settings, "last-directory", dir);
    }
}

TideWindowState
_tide_window_get_state (TideWindow *self)
{
  g_return_val_if_fail (TIDE_IS_WINDOW (self), TIDE_WINDOW_EMPTY);
  return self->state;
}

/* The views follow the session's comparison by themselves: the timeline
 * draws the compared run over the shown one, the steps table adds its
 * differences.  The drill-down's differences come with its query, and
 * the banner and title are the window's. */
static void
tide_window_session_comparison_cb (TideWindow *self)
{
  const char *error = tide_session_get_compare_error (self->session);

  if (error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("Cannot compare the traces: %s", error);
      set_banner (self, text);
    }
  if (_tide_window_get_trace (self) != NULL)
    set_subtitle (self);
  _tide_window_actions_update (self);
}

/**
 * _tide_window_compare_file:
 *
 * Opens @file and compares the shown trace with it.
 *
 * Returns: FALSE with @error set when @file is not a trace that opens
 */
gboolean
_tide_window_compare_file (TideWindow  *self,
                           GFile       *file,
                           GError     **error)
{
  g_autofree char *path = g_file_get_path (file);
  g_autoptr(TideTrace) trace = NULL;

  g_return_val_if_fail (TIDE_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (_tide_window_get_trace (self) != NULL, FALSE);

  if (path == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "Only local files can be compared.");
      return FALSE;
    }
  if ((trace = tide_trace_open (path, error)) == NULL)
    return FALSE;
  tide_session_set_compare_trace (self->session, trace);
  return TRUE;
}

static void
connect_session (TideWindow *self,
                 const char *signal,
                 GCallback   callback)
{
  g_signal_connect_object (self->session, signal, callback, self, G_CONNECT_SWAPPED);
}

/* Every view binds to the session, none to another: the timeline reads
 * it and writes to it, the tables and the suspects bind to its tables,
 * the drill-down and the flame graph to the retained query that follows
 * it, all in the template.  What is left here is what the window itself
 * shows when they change: the process picker, the zoom actions' state,
 * the drill-down's title, the comparison's banner and title. */
static void
bind_session (TideWindow *self)
{
  connect_session (self, "notify::tables", G_CALLBACK (tide_window_session_tables_cb));
  g_signal_connect_object (self->retained, "notify::groups",
                           G_CALLBACK (tide_window_retained_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->retained, "notify::loading",
                           G_CALLBACK (tide_window_retained_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->retained, "notify::error",
                           G_CALLBACK (tide_window_retained_error_cb), self, G_CONNECT_SWAPPED);
  connect_session (self, "notify::zoom-depth", G_CALLBACK (_tide_window_actions_update));
  connect_session (self, "notify::comparison", G_CALLBACK (tide_window_session_comparison_cb));

  bind_process_dropdown (self, NULL);
}

static GSettings *
settings_new_if_installed (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, TIDE_APP_ID, TRUE);
  return schema ? g_settings_new (TIDE_APP_ID) : NULL;
}

static void
tide_window_dispose (GObject *object)
{
  TideWindow *self = TIDE_WINDOW (object);

  _tide_window_record_dispose (self);
  /* The views, which hold the session, may outlive the template's
   * reference to it: nothing they do to it reaches the window now. */
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  gtk_widget_dispose_template (GTK_WIDGET (self), TIDE_TYPE_WINDOW);
  self->process_binding = NULL;
  g_clear_object (&self->settings);
  g_clear_pointer (&self->export_chooser, g_object_unref);
  g_clear_pointer (&self->process_ids, g_array_unref);
  G_OBJECT_CLASS (tide_window_parent_class)->dispose (object);
}

static void
tide_window_finalize (GObject *object)
{
  TideWindow *self = TIDE_WINDOW (object);

  g_free (self->error_title);
  g_free (self->error_message);
  g_free (self->banner_message);
  g_free (self->live_path);
  G_OBJECT_CLASS (tide_window_parent_class)->finalize (object);
}

static void
tide_window_class_init (TideWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tide_window_dispose;
  object_class->finalize = tide_window_finalize;

  g_type_ensure (TIDE_TYPE_SESSION);
  g_type_ensure (TIDE_TYPE_RETAINED_QUERY);
  g_type_ensure (TIDE_TYPE_STEPS_VIEW);
  g_type_ensure (TIDE_TYPE_DRILLDOWN_VIEW);
  g_type_ensure (TIDE_TYPE_FLAME_GRAPH);
  g_type_ensure (TIDE_TYPE_SUSPECTS_VIEW);
  g_type_ensure (TIDE_TYPE_TIMELINE_VIEW);

  gtk_widget_class_set_template_from_resource (widget_class, "/dev/tidemark/Tidemark/tide-window.ui");
  gtk_widget_class_bind_template_child (widget_class, TideWindow, session);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, retained);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, title);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, detail_stack);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, error_page);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, banner);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, banner_label);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, export_button);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, stop_button);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, record_button);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, process_bar);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, process_dropdown);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, timeline_slot);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, timeline);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, steps_view);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, drilldown_view);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, flame_graph);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, flame_search);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, frame_detail);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, drilldown_title);
  gtk_widget_class_bind_template_child (widget_class, TideWindow, suspects_view);
  gtk_widget_class_bind_template_callback (widget_class, tide_window_banner_response_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_window_flame_search_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_window_flame_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_window_suspect_selected_cb);

  _tide_window_class_actions_init (widget_class);
}

static void
tide_window_init (TideWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->settings = settings_new_if_installed ();
  self->state = TIDE_WINDOW_EMPTY;
  self->export_width = 1600;
  self->export_height = 900;
  bind_session (self);
  _tide_window_dnd_init (self);
  tide_window_retained_cb (self);
  _tide_window_actions_update (self);
}

TideWindow *
tide_window_new (GtkApplication *application)
{
  return g_object_new (TIDE_TYPE_WINDOW, "application", application, NULL);
}
