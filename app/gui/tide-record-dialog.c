/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideRecordDialog: what to record and how.  It only gathers the choice
 * into a TideRecordRequest (tide-record-request.c turns that into the
 * command line); the window runs the recorder.  Sampling choices are
 * remembered in GSettings.
 *
 * "Hook PyTorch" follows the command until the user sets it: on when the
 * command runs Python, as a training script without it records no steps
 * and no modules, which a user who has not read the manual would miss.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "tide-record-dialog.h"

struct _TideRecordDialog
{
  GtkWindow       parent_instance;

  /* Template widgets */
  GtkEntry       *command_entry;
  GtkEntry       *folder_entry;
  GtkDropDown    *sampling_dropdown;
  GtkSpinButton  *bytes_spin;
  GtkCheckButton *torch_check;
  GtkLabel       *error_label;
  GtkStack       *mode_stack;
  GtkSearchEntry *process_search;
  GtkListView    *process_view;
  GtkSpinButton  *duration_spin;
  GtkLabel       *privilege_label;

  gboolean        torch_chosen;   /* the user set "Hook PyTorch" */
  gboolean        torch_following; /* the command is setting it */

  /* Owned references */
  GSettings      *settings;     /* nullable */
  GListStore     *processes;    /* TideProcessListItem, read when attach mode is shown */
  GtkCustomFilter *process_filter;
  GtkSingleSelection *process_selection;
};

G_DEFINE_FINAL_TYPE (TideRecordDialog, tide_record_dialog, GTK_TYPE_WINDOW)

enum {
  START,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
tide_record_dialog_sampling_changed_cb (TideRecordDialog *self)
{
  g_assert (TIDE_IS_RECORD_DIALOG (self));
  gtk_widget_set_sensitive (GTK_WIDGET (self->bytes_spin),
                            gtk_drop_down_get_selected (self->sampling_dropdown) == TIDE_SAMPLING_BYTES);
}

static void
save_settings (TideRecordDialog *self)
{
  if (self->settings == NULL)
    return;
  g_settings_set_enum (self->settings, "sampling", gtk_drop_down_get_selected (self->sampling_dropdown));
  g_settings_set_int64 (self->settings, "sample-bytes", (gint64) gtk_spin_button_get_value (self->bytes_spin));
}

static void
load_settings (TideRecordDialog *self)
{
  if (self->settings == NULL)
    return;
  tide_record_dialog_set_sampling (self, g_settings_get_enum (self->settings, "sampling"),
                                   g_settings_get_int64 (self->settings, "sample-bytes"));
}

static void
tide_record_dialog_command_changed_cb (TideRecordDialog *self)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) argv = NULL;

  g_assert (TIDE_IS_RECORD_DIALOG (self));
  if (self->torch_chosen)
    return;
  text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->command_entry))));
  if (*text != '\0' && !g_shell_parse_argv (text, NULL, &argv, NULL))
    return;   /* an unfinished quote: wait for the rest */
  self->torch_following = TRUE;
  gtk_check_button_set_active (self->torch_check, tide_record_command_runs_python ((const char * const *) argv));
  self->torch_following = FALSE;
}

static void
tide_record_dialog_torch_toggled_cb (TideRecordDialog *self)
{
  g_assert (TIDE_IS_RECORD_DIALOG (self));
  if (!self->torch_following)
    self->torch_chosen = TRUE;
}

static void
start_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  TideRecordDialog *self = TIDE_RECORD_DIALOG (widget);

  tide_record_dialog_set_error (self, NULL);
  save_settings (self);
  g_signal_emit (self, signals[START], 0);
}

static void
choose_folder_response_cb (GtkNativeDialog  *chooser,
                           int               response,
                           TideRecordDialog *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) folder = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
      g_autofree char *path = g_file_get_path (folder);
      tide_record_dialog_set_folder (self, path);
    }
  g_object_unref (chooser);
}

static void
choose_folder_action (GtkWidget  *widget,
                      const char *action_name,
                      GVariant   *parameter)
{
  GtkFileChooserNative *chooser;

  chooser = gtk_file_chooser_native_new ("Working Folder", GTK_WINDOW (widget),
                                         GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, "_Select", "_Cancel");
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (choose_folder_response_cb), widget);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* ---- attach mode ---------------------------------------------------------- */

static gboolean
process_filter_func (gpointer item,
                     gpointer data)
{
  TideRecordDialog *self = data;

  return tide_process_list_item_matches (item, gtk_editable_get_text (GTK_EDITABLE (self->process_search)));
}

static void
tide_record_dialog_search_changed_cb (TideRecordDialog *self)
{
  gtk_filter_changed (GTK_FILTER (self->process_filter), GTK_FILTER_CHANGE_DIFFERENT);
}

static void
reload_processes (TideRecordDialog *self)
{
  g_autoptr(GListStore) fresh = tide_process_list_load ();
  guint n = g_list_model_get_n_items (G_LIST_MODEL (fresh));
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < n; i++)
    g_ptr_array_add (items, g_list_model_get_item (G_LIST_MODEL (fresh), i));
  g_list_store_splice (self->processes, 0, g_list_model_get_n_items (G_LIST_MODEL (self->processes)),
                       items->pdata, items->len);
}

/* Without root, `tidemark attach` runs under pkexec; without pkexec the
 * dialog says what is needed before the user tries. */
static void
update_privilege_label (TideRecordDialog *self)
{
  g_autofree char *pkexec = NULL;

  if (geteuid () == 0)
    {
      gtk_widget_set_visible (GTK_WIDGET (self->privilege_label), FALSE);
      return;
    }
  pkexec = g_find_program_in_path ("pkexec");
  gtk_label_set_text (self->privilege_label,
                      pkexec != NULL
                      ? "Attaching asks for an administrator password (pkexec)."
                      : "Attaching needs root or CAP_BPF and CAP_PERFMON; pkexec was not found.");
  gtk_widget_set_visible (GTK_WIDGET (self->privilege_label), TRUE);
}

static void
tide_record_dialog_mode_changed_cb (TideRecordDialog *self)
{
  if (tide_record_dialog_get_mode (self) != TIDE_RECORD_MODE_ATTACH)
    return;
  reload_processes (self);
  update_privilege_label (self);
}

static void
refresh_processes_action (GtkWidget  *widget,
                          const char *action_name,
                          GVariant   *parameter)
{
  reload_processes (TIDE_RECORD_DIALOG (widget));
}

static void
process_row_setup_cb (GtkSignalListItemFactory *factory,
                      GtkListItem              *list_item)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);

  for (guint i = 0; i < 3; i++)
    {
      GtkWidget *label = gtk_label_new (NULL);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
      gtk_label_set_width_chars (GTK_LABEL (label), i == 2 ? 10 : 7);
      gtk_widget_set_hexpand (label, i == 1);
      if (i == 0)
        gtk_widget_add_css_class (label, "numeric");
      gtk_box_append (GTK_BOX (box), label);
    }
  gtk_list_item_set_child (list_item, box);
}

static void
process_row_bind_cb (GtkSignalListItemFactory *factory,
                     GtkListItem              *list_item)
{
  TideProcessListItem *item = gtk_list_item_get_item (list_item);
  GtkWidget *pid = gtk_widget_get_first_child (gtk_list_item_get_child (list_item));
  GtkWidget *command = gtk_widget_get_next_sibling (pid);
  GtkWidget *user = gtk_widget_get_next_sibling (command);
  g_autofree char *pid_text = g_strdup_printf ("%d", tide_process_list_item_get_pid (item));

  gtk_label_set_text (GTK_LABEL (pid), pid_text);
  gtk_label_set_text (GTK_LABEL (command), tide_process_list_item_get_command (item));
  gtk_widget_set_tooltip_text (command, tide_process_list_item_get_command (item));
  gtk_label_set_text (GTK_LABEL (user), tide_process_list_item_get_user (item));
}

static void
init_process_list (TideRecordDialog *self)
{
  GtkFilterListModel *filtered;
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();

  self->processes = g_list_store_new (TIDE_TYPE_PROCESS_LIST_ITEM);
  self->process_filter = gtk_custom_filter_new (process_filter_func, self, NULL);
  filtered = gtk_filter_list_model_new (g_object_ref (G_LIST_MODEL (self->processes)),
                                        g_object_ref (GTK_FILTER (self->process_filter)));
  self->process_selection = gtk_single_selection_new (G_LIST_MODEL (filtered));
  /* Nothing is attached to by accident: the user picks a row. */
  gtk_single_selection_set_autoselect (self->process_selection, FALSE);
  gtk_single_selection_set_can_unselect (self->process_selection, TRUE);
  gtk_single_selection_set_selected (self->process_selection, GTK_INVALID_LIST_POSITION);
  g_signal_connect (factory, "setup", G_CALLBACK (process_row_setup_cb), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (process_row_bind_cb), NULL);
  gtk_list_view_set_factory (self->process_view, factory);
  g_object_unref (factory);
  gtk_list_view_set_model (self->process_view, GTK_SELECTION_MODEL (self->process_selection));
}

static void
tide_record_dialog_dispose (GObject *object)
{
  TideRecordDialog *self = TIDE_RECORD_DIALOG (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), TIDE_TYPE_RECORD_DIALOG);
  g_clear_object (&self->settings);
  g_clear_object (&self->process_selection);
  g_clear_object (&self->process_filter);
  g_clear_object (&self->processes);
  G_OBJECT_CLASS (tide_record_dialog_parent_class)->dispose (object);
}

static void
tide_record_dialog_class_init (TideRecordDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tide_record_dialog_dispose;

  /**
   * TideRecordDialog::start:
   *
   * The user asked to record; the handler calls
   * tide_record_dialog_build_argv() and closes the dialog, or shows an error.
   */
  signals[START] = g_signal_new ("start", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                 0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class, "/dev/tidemark/Tidemark/tide-record-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, command_entry);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, folder_entry);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, sampling_dropdown);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, bytes_spin);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, torch_check);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, error_label);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, mode_stack);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, process_search);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, process_view);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, duration_spin);
  gtk_widget_class_bind_template_child (widget_class, TideRecordDialog, privilege_label);
  gtk_widget_class_bind_template_callback (widget_class, tide_record_dialog_sampling_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_record_dialog_search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_record_dialog_mode_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_record_dialog_command_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_record_dialog_torch_toggled_cb);

  gtk_widget_class_install_action (widget_class, "record.start", NULL, start_action);
  gtk_widget_class_install_action (widget_class, "record.choose-folder", NULL, choose_folder_action);
  gtk_widget_class_install_action (widget_class, "record.refresh-processes", NULL, refresh_processes_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
tide_record_dialog_init (TideRecordDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  init_process_list (self);
  gtk_editable_set_text (GTK_EDITABLE (self->folder_entry), g_get_home_dir ());
}

TideRecordDialog *
tide_record_dialog_new (GtkWindow *parent,
                        GSettings *settings)
{
  TideRecordDialog *self = g_object_new (TIDE_TYPE_RECORD_DIALOG, "transient-for", parent, NULL);

  g_set_object (&self->settings, settings);
  load_settings (self);
  return self;
}

void
tide_record_dialog_set_command (TideRecordDialog *self,
                                const char       *command)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  gtk_editable_set_text (GTK_EDITABLE (self->command_entry), command ? command : "");
}

const char *
tide_record_dialog_get_folder (TideRecordDialog *self)
{
  g_return_val_if_fail (TIDE_IS_RECORD_DIALOG (self), NULL);
  return gtk_editable_get_text (GTK_EDITABLE (self->folder_entry));
}

void
tide_record_dialog_set_folder (TideRecordDialog *self,
                               const char       *folder)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  gtk_editable_set_text (GTK_EDITABLE (self->folder_entry), folder ? folder : "");
}

void
tide_record_dialog_set_sampling (TideRecordDialog *self,
                                 TideSampling      sampling,
                                 gint64            sample_bytes)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  g_return_if_fail (sampling <= TIDE_SAMPLING_ALL);

  gtk_drop_down_set_selected (self->sampling_dropdown, sampling);
  if (sample_bytes > 0)
    gtk_spin_button_set_value (self->bytes_spin, (double) sample_bytes);
}

/* As the user's own choice: the command no longer sets it. */
void
tide_record_dialog_set_torch (TideRecordDialog *self,
                              gboolean          torch)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  self->torch_chosen = TRUE;
  gtk_check_button_set_active (self->torch_check, torch);
}

gboolean
tide_record_dialog_get_torch (TideRecordDialog *self)
{
  g_return_val_if_fail (TIDE_IS_RECORD_DIALOG (self), FALSE);
  return gtk_check_button_get_active (self->torch_check);
}

void
tide_record_dialog_set_error (TideRecordDialog *self,
                              const char       *message)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  gtk_label_set_text (self->error_label, message ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), message != NULL);
}

const char *
tide_record_dialog_get_error (TideRecordDialog *self)
{
  g_return_val_if_fail (TIDE_IS_RECORD_DIALOG (self), NULL);
  return gtk_widget_get_visible (GTK_WIDGET (self->error_label))
         ? gtk_label_get_text (self->error_label) : NULL;
}

static gboolean
fill_program_request (TideRecordDialog   *self,
                      TideRecordRequest  *request,
                      GError            **error)
{
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->command_entry))));

  if (*text != '\0' && !g_shell_parse_argv (text, NULL, &request->command, error))
    return FALSE;
  request->sampling = gtk_drop_down_get_selected (self->sampling_dropdown);
  request->sample_bytes = (gint64) gtk_spin_button_get_value (self->bytes_spin);
  request->torch = gtk_check_button_get_active (self->torch_check);
  return TRUE;
}

static void
fill_attach_request (TideRecordDialog  *self,
                     TideRecordRequest *request)
{
  TideProcessListItem *item = gtk_single_selection_get_selected_item (self->process_selection);

  if (item != NULL)
    {
      request->pid = tide_process_list_item_get_pid (item);
      request->process_name = g_strdup (tide_process_list_item_get_name (item));
    }
  request->duration_s = gtk_spin_button_get_value (self->duration_spin);
  request->privileged = geteuid () == 0;
  if (!request->privileged)
    request->pkexec = g_find_program_in_path ("pkexec");
}

/**
 * tide_record_dialog_get_request:
 * @request: (out caller-allocates): filled with the dialog's choice; the
 *   caller adds the recorder and the output, and clears it
 *
 * Reads the dialog's choice; what makes a request unrunnable (no command,
 * no process) is for tide_record_request_to_argv() to say.
 *
 * Returns: FALSE with @error set when the command line does not parse or
 *   the working folder is missing
 */
gboolean
tide_record_dialog_get_request (TideRecordDialog   *self,
                                TideRecordRequest  *request,
                                GError            **error)
{
  g_return_val_if_fail (TIDE_IS_RECORD_DIALOG (self), FALSE);

  memset (request, 0, sizeof *request);
  request->mode = tide_record_dialog_get_mode (self);
  request->folder = g_strdup (tide_record_dialog_get_folder (self));
  if (request->mode == TIDE_RECORD_MODE_ATTACH)
    fill_attach_request (self, request);
  else if (!fill_program_request (self, request, error))
    return FALSE;
  if (!g_file_test (request->folder, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY, "The working folder %s does not exist.",
                   request->folder);
      return FALSE;
    }
  return TRUE;
}

void
tide_record_dialog_set_mode (TideRecordDialog *self,
                             TideRecordMode    mode)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  gtk_stack_set_visible_child_name (self->mode_stack, mode == TIDE_RECORD_MODE_ATTACH ? "attach" : "program");
}

TideRecordMode
tide_record_dialog_get_mode (TideRecordDialog *self)
{
  g_return_val_if_fail (TIDE_IS_RECORD_DIALOG (self), TIDE_RECORD_MODE_PROGRAM);
  return g_strcmp0 (gtk_stack_get_visible_child_name (self->mode_stack), "attach") == 0
         ? TIDE_RECORD_MODE_ATTACH : TIDE_RECORD_MODE_PROGRAM;
}

/* Filters at once, without the search entry's typing delay. */
void
tide_record_dialog_set_search (TideRecordDialog *self,
                               const char       *search)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  gtk_editable_set_text (GTK_EDITABLE (self->process_search), search ? search : "");
  tide_record_dialog_search_changed_cb (self);
}

/**
 * tide_record_dialog_get_processes:
 *
 * Returns: (transfer none): the attach list as shown: filtered by the
 *   search, with the chosen process selected
 */
GtkSelectionModel *
tide_record_dialog_get_processes (TideRecordDialog *self)
{
  g_return_val_if_fail (TIDE_IS_RECORD_DIALOG (self), NULL);
  return GTK_SELECTION_MODEL (self->process_selection);
}

void
tide_record_dialog_set_duration (TideRecordDialog *self,
                                 double            seconds)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  gtk_spin_button_set_value (self->duration_spin, seconds);
}
