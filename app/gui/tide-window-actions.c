/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideWindow's actions: open, compare, record, stop, export, zoom and step
 * moves.
 * Menus, buttons and keys all reach them; which are enabled is decided in
 * one place, _tide_window_actions_update().
 */
#include "config.h"

#include "tide-diff-format.h"
#include "tide-report-format.h"
#include "tide-render.h"
#include "tide-window-private.h"

/* Export sizes when the schema is not installed (the schema's defaults). */
#define EXPORT_WIDTH  1600
#define EXPORT_HEIGHT 900

static void
set_folder_from_settings (TideWindow     *self,
                          GtkFileChooser *chooser)
{
  g_autofree char *dir = self->settings ? g_settings_get_string (self->settings, "last-directory") : NULL;

  if (dir != NULL && *dir != '\0')
    {
      g_autoptr(GFile) folder = g_file_new_for_path (dir);
      gtk_file_chooser_set_current_folder (chooser, folder, NULL);
    }
}

static void
open_response_cb (GtkNativeDialog *dialog,
                  int              response,
                  TideWindow      *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      tide_window_open_file (self, file);
    }
  g_object_unref (dialog);
}

static void
compare_response_cb (GtkNativeDialog *dialog,
                     int              response,
                     TideWindow      *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr(GError) error = NULL;

      if (!_tide_window_compare_file (self, file, &error))
        {
          GtkWidget *alert = adw_message_dialog_new (GTK_WINDOW (self), "Cannot Compare",
                                                     error->message);
          adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (alert), "close", "_Close");
          gtk_window_present (GTK_WINDOW (alert));
        }
    }
  g_object_unref (dialog);
}

/* A file chooser of traces, for opening one or comparing with one. */
static GtkFileChooserNative *
trace_chooser_new (TideWindow *self,
                   const char *title,
                   const char *accept)
{
  GtkFileChooserNative *dialog;
  g_autoptr(GtkFileFilter) traces = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();

  dialog = gtk_file_chooser_native_new (title, GTK_WINDOW (self),
                                        GTK_FILE_CHOOSER_ACTION_OPEN, accept, "_Cancel");
  gtk_file_filter_set_name (traces, "Tidemark traces");
  gtk_file_filter_add_mime_type (traces, "application/x-tidemark-trace");
  gtk_file_filter_add_suffix (traces, "tide");
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), traces);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), all);
  set_folder_from_settings (self, GTK_FILE_CHOOSER (dialog));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  return dialog;
}

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TideWindow *self = TIDE_WINDOW (widget);
  GtkFileChooserNative *dialog = trace_chooser_new (self, "Open a Trace", "_Open");

  g_signal_connect (dialog, "response", G_CALLBACK (open_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* Compare With… asks for the second trace, drawn over the one shown. */
static void
compare_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  TideWindow *self = TIDE_WINDOW (widget);
  GtkFileChooserNative *dialog;

  if (g_str_equal (action_name, "win.end-compare"))
    {
      tide_session_set_compare_trace (self->session, NULL);
      return;
    }
  dialog = trace_chooser_new (self, "Compare With a Trace", "_Compare");
  g_signal_connect (dialog, "response", G_CALLBACK (compare_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

gboolean
_tide_window_export_png (TideWindow  *self,
                         const char  *path,
                         int          width,
                         int          height,
                         GError     **error)
{
  g_return_val_if_fail (TIDE_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (_tide_window_get_trace (self) != NULL, FALSE);

  /* With a comparison, the overlay as the window draws it. */
  if (tide_session_get_comparison (self->session) != NULL)
    return tide_render_compare_png (_tide_window_get_trace (self),
                                    tide_session_get_process_id (self->session),
                                    tide_session_get_compare_trace (self->session), path, width,
                                    height, error);
  return tide_render_process_png (_tide_window_get_trace (self),
                                  tide_session_get_process_id (self->session), path, width, height,
                                  error);
}

/* The shown trace's process and its counterpart in the compared one: the
 * same step rows as `tidemark diff SHOWN COMPARED --steps --format csv`
 * (or `tidemark export SHOWN --compare COMPARED --csv`). */
gboolean
_tide_window_export_compare_csv (TideWindow  *self,
                                 const char  *path,
                                 GError     **error)
{
  const TideTraceDiff *diff;
  g_autoptr(GString) out = g_string_new (NULL);

  g_return_val_if_fail (TIDE_IS_WINDOW (self), FALSE);
  diff = tide_session_get_comparison (self->session);
  g_return_val_if_fail (diff != NULL, FALSE);

  tide_format_diff (out, diff, TIDE_DIFF_STEPS, TIDE_FORMAT_CSV);
  return g_file_set_contents (path, out->str, out->len, error);
}

gboolean
_tide_window_export_steps_csv (TideWindow  *self,
                               const char  *path,
                               GError     **error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  TideTraceTables *tables;

  g_return_val_if_fail (TIDE_IS_WINDOW (self), FALSE);
  tables = tide_session_get_tables (self->session);
  g_return_val_if_fail (tables != NULL && tide_trace_tables_get_steps (tables) != NULL, FALSE);

  tide_format_steps (out, tide_trace_tables_get_steps (tables), TIDE_FORMAT_CSV);
  return g_file_set_contents (path, out->str, out->len, error);
}

/* A step's rows are tide_report_retained()'s, so the file matches
 * `tidemark report --retained --step N --format csv`; a range has no CLI
 * counterpart and writes the rows shown. */
static GPtrArray *
drilldown_export_groups (TideWindow  *self,
                         GError     **error)
{
  g_autoptr(GPtrArray) groups = NULL;
  gint step = tide_retained_query_get_step (self->retained);
  gint64 process_id = tide_retained_query_get_process_id (self->retained);

  if (step == 0)
    return g_ptr_array_ref (tide_retained_query_get_groups (self->retained));
  groups = tide_report_retained (tide_retained_query_get_trace (self->retained), step,
                                 TIDE_GROUP_BY_STACK, error);
  if (groups != NULL)
    {
      g_autoptr(GHashTable) ids = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

      g_hash_table_add (ids, g_memdup2 (&process_id, sizeof process_id));
      tide_report_keep_groups (groups, ids);
    }
  return g_steal_pointer (&groups);
}

gboolean
_tide_window_export_drilldown_csv (TideWindow  *self,
                                   const char  *path,
                                   GError     **error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GPtrArray) groups = NULL;

  g_return_val_if_fail (TIDE_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (tide_retained_query_get_groups (self->retained) != NULL, FALSE);

  groups = drilldown_export_groups (self, error);
  if (groups == NULL)
    return FALSE;
  tide_format_groups (out, groups, TIDE_GROUPS_RETAINED, TIDE_GROUP_BY_STACK,
                      tide_retained_query_get_step (self->retained),
                      TIDE_FORMAT_CSV);
  return g_file_set_contents (path, out->str, out->len, error);
}

typedef enum
{
  EXPORT_PNG,
  EXPORT_STEPS_CSV,
  EXPORT_DRILLDOWN_CSV,
  EXPORT_COMPARE_CSV,
} ExportKind;

/* What the export file chooser does with the file chosen: writes it with
 * the kind and size asked for, or says why it could not. */
void
_tide_window_export_chosen (TideWindow *self,
                            GFile      *file)
{
  ExportKind kind = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (self->export_chooser),
                                                        "tide-export-kind"));
  g_autofree char *path = g_file_get_path (file);
  g_autoptr(GError) error = NULL;
  gboolean ok;

  if (kind == EXPORT_PNG)
    ok = _tide_window_export_png (self, path, self->export_width, self->export_height, &error);
  else if (kind == EXPORT_STEPS_CSV)
    ok = _tide_window_export_steps_csv (self, path, &error);
  else if (kind == EXPORT_COMPARE_CSV)
    ok = _tide_window_export_compare_csv (self, path, &error);
  else
    ok = _tide_window_export_drilldown_csv (self, path, &error);
  if (!ok)
    {
      GtkWidget *alert = adw_message_dialog_new (GTK_WINDOW (self), "Export Failed",
                                                 error->message);
      adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (alert), "close", "_Close");
      gtk_window_present (GTK_WINDOW (alert));
    }
  g_clear_pointer (&self->export_chooser, g_object_unref);
}

static void
export_response_cb (GtkNativeDialog *dialog,
                    int              response,
                    TideWindow      *self)
{
  g_autoptr(GFile) file = response == GTK_RESPONSE_ACCEPT
                          ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)) : NULL;

  if (dialog != self->export_chooser)
    return;
  if (file != NULL)
    _tide_window_export_chosen (self, file);
  else
    g_clear_pointer (&self->export_chooser, g_object_unref);
}

static void
choose_export_file (TideWindow *self,
                    ExportKind  kind)
{
  static const char *suffixes[] = { "timeline.png", "steps.csv", "drilldown.csv",
                                    "comparison.csv" };
  g_autofree char *base = g_path_get_basename (tide_trace_get_path (_tide_window_get_trace (self)));
  g_autofree char *name = NULL;
  GtkFileChooserNative *dialog;

  if (g_str_has_suffix (base, ".tide"))
    base[strlen (base) - 5] = '\0';
  name = g_strdup_printf ("%s-%s", base, suffixes[kind]);
  dialog = gtk_file_chooser_native_new ("Export", GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE,
                                        "_Export", "_Cancel");
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), name);
  set_folder_from_settings (self, GTK_FILE_CHOOSER (dialog));
  g_object_set_data (G_OBJECT (dialog), "tide-export-kind", GINT_TO_POINTER (kind));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect_object (dialog, "response", G_CALLBACK (export_response_cb), self, 0);
  g_clear_pointer (&self->export_chooser, g_object_unref);
  self->export_chooser = GTK_NATIVE_DIALOG (dialog);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* The size asked for is remembered for the next export. */
static void
export_size_response_cb (TideExportSizeDialog *dialog,
                         const char           *response,
                         TideWindow           *self)
{
  if (!g_str_equal (response, "export") || _tide_window_get_trace (self) == NULL)
    return;
  self->export_width = tide_export_size_dialog_get_image_width (dialog);
  self->export_height = tide_export_size_dialog_get_image_height (dialog);
  if (self->settings != NULL)
    {
      g_settings_set_int (self->settings, "export-width", self->export_width);
      g_settings_set_int (self->settings, "export-height", self->export_height);
    }
  choose_export_file (self, EXPORT_PNG);
}

/* Export → Timeline as PNG asks for the image size first, then the file. */
AdwMessageDialog *
_tide_window_present_export_size_dialog (TideWindow *self)
{
  TideExportSizeDialog *dialog;
  int width = EXPORT_WIDTH, height = EXPORT_HEIGHT;

  if (self->settings != NULL)
    {
      width = g_settings_get_int (self->settings, "export-width");
      height = g_settings_get_int (self->settings, "export-height");
    }
  dialog = tide_export_size_dialog_new (GTK_WINDOW (self), width, height);
  g_signal_connect_object (dialog, "response", G_CALLBACK (export_size_response_cb), self, 0);
  gtk_window_present (GTK_WINDOW (dialog));
  return ADW_MESSAGE_DIALOG (dialog);
}

static void
export_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  TideWindow *self = TIDE_WINDOW (widget);

  if (g_str_equal (action_name, "win.export-png"))
    _tide_window_present_export_size_dialog (self);
  else if (g_str_equal (action_name, "win.export-steps-csv"))
    choose_export_file (self, EXPORT_STEPS_CSV);
  else if (g_str_equal (action_name, "win.export-compare-csv"))
    choose_export_file (self, EXPORT_COMPARE_CSV);
  else
    choose_export_file (self, EXPORT_DRILLDOWN_CSV);
}

static void
export_menu_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  gtk_menu_button_popup (TIDE_WINDOW (widget)->export_button);
}

static void
record_dialog_start_cb (TideWindow       *self,
                        TideRecordDialog *dialog)
{
  g_autoptr(GError) error = NULL;

  if (_tide_window_start_recording (self, dialog, &error))
    gtk_window_destroy (GTK_WINDOW (dialog));
  else
    tide_record_dialog_set_error (dialog, error->message);
}

/* Returns: (transfer none): the dialog, presented; it closes itself */
TideRecordDialog *
_tide_window_present_record_dialog (TideWindow *self)
{
  TideRecordDialog *dialog = tide_record_dialog_new (GTK_WINDOW (self), self->settings);

  g_signal_connect_object (dialog, "start", G_CALLBACK (record_dialog_start_cb), self,
                           G_CONNECT_SWAPPED);
  gtk_window_present (GTK_WINDOW (dialog));
  return dialog;
}

static void
record_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  _tide_window_present_record_dialog (TIDE_WINDOW (widget));
}

static void
stop_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  _tide_window_stop_recording (TIDE_WINDOW (widget));
}

/* The one set of zoom actions, whichever widget has the focus: each
 * goes through the session, which keeps the history zoom-back undoes. */
static void
zoom_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TideWindow *self = TIDE_WINDOW (widget);

  if (g_str_equal (action_name, "win.zoom-in"))
    tide_session_zoom (self->session, TIDE_SESSION_ZOOM_FACTOR);
  else if (g_str_equal (action_name, "win.zoom-out"))
    tide_session_zoom (self->session, 1.0 / TIDE_SESSION_ZOOM_FACTOR);
  else if (g_str_equal (action_name, "win.zoom-back"))
    tide_session_zoom_back (self->session);
  else
    tide_session_zoom_fit (self->session);
}

static void
step_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TideWindow *self = TIDE_WINDOW (widget);

  tide_timeline_view_move_step (self->timeline, g_str_equal (action_name, "win.next-step") ? 1 : -1);
}

void
_tide_window_class_actions_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.record", NULL, record_action);
  gtk_widget_class_install_action (widget_class, "win.stop-recording", NULL, stop_action);
  gtk_widget_class_install_action (widget_class, "win.export", NULL, export_menu_action);
  gtk_widget_class_install_action (widget_class, "win.export-png", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.export-steps-csv", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.export-drilldown-csv", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.export-compare-csv", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.compare", NULL, compare_action);
  gtk_widget_class_install_action (widget_class, "win.end-compare", NULL, compare_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-back", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.previous-step", NULL, step_action);
  gtk_widget_class_install_action (widget_class, "win.next-step", NULL, step_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "win.record", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK, "win.export", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, GDK_CONTROL_MASK, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK, "win.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, GDK_CONTROL_MASK, "win.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK, "win.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_BackSpace, GDK_CONTROL_MASK, "win.zoom-back", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, GDK_ALT_MASK, "win.previous-step", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, GDK_ALT_MASK, "win.next-step", NULL);
}

void
_tide_window_actions_update (TideWindow *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  gboolean recording = _tide_window_is_recording (self);
  gboolean has_trace = _tide_window_get_trace (self) != NULL;
  TideTraceTables *tables = tide_session_get_tables (self->session);
  gboolean has_steps = tables != NULL && tide_trace_tables_get_steps (tables) != NULL;
  gboolean has_drilldown = tide_retained_query_get_groups (self->retained) != NULL;
  gboolean has_comparison = tide_session_get_comparison (self->session) != NULL;

  g_return_if_fail (TIDE_IS_WINDOW (self));

  gtk_widget_action_set_enabled (widget, "win.open", !recording);
  gtk_widget_action_set_enabled (widget, "win.record", !recording);
  gtk_widget_action_set_enabled (widget, "win.stop-recording", recording);
  gtk_widget_action_set_enabled (widget, "win.export", has_trace);
  gtk_widget_action_set_enabled (widget, "win.export-png", has_trace);
  gtk_widget_action_set_enabled (widget, "win.export-steps-csv", has_trace && has_steps);
  gtk_widget_action_set_enabled (widget, "win.export-drilldown-csv", has_drilldown);
  gtk_widget_action_set_enabled (widget, "win.export-compare-csv", has_comparison);
  gtk_widget_action_set_enabled (widget, "win.compare", has_trace && !recording);
  gtk_widget_action_set_enabled (widget, "win.end-compare",
                                 tide_session_get_compare_trace (self->session) != NULL);
  gtk_widget_action_set_enabled (widget, "win.zoom-in", has_trace);
  gtk_widget_action_set_enabled (widget, "win.zoom-out", has_trace);
  gtk_widget_action_set_enabled (widget, "win.zoom-fit", has_trace);
  gtk_widget_action_set_enabled (widget, "win.zoom-back",
                                 has_trace && tide_session_get_zoom_depth (self->session) > 0);
  gtk_widget_action_set_enabled (widget, "win.previous-step", has_trace);
  gtk_widget_action_set_enabled (widget, "win.next-step", has_trace);
  gtk_widget_set_visible (GTK_WIDGET (self->stop_button), recording);
  gtk_widget_set_visible (GTK_WIDGET (self->record_button), !recording);
  gtk_widget_set_sensitive (GTK_WIDGET (self->export_button), has_trace);
}
