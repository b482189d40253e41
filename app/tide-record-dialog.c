/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideRecordDialog: what to record and how.  It only gathers the choice
 * and turns it into `tidemark record` arguments; the window runs the
 * recorder.  Sampling choices are remembered in GSettings.
 */
#include "config.h"

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

  /* Owned references */
  GSettings      *settings;     /* nullable */
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
  g_settings_set_boolean (self->settings, "torch", gtk_check_button_get_active (self->torch_check));
}

static void
load_settings (TideRecordDialog *self)
{
  if (self->settings == NULL)
    return;
  tide_record_dialog_set_sampling (self, g_settings_get_enum (self->settings, "sampling"),
                                   g_settings_get_int64 (self->settings, "sample-bytes"));
  tide_record_dialog_set_torch (self, g_settings_get_boolean (self->settings, "torch"));
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

static void
tide_record_dialog_dispose (GObject *object)
{
  TideRecordDialog *self = TIDE_RECORD_DIALOG (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), TIDE_TYPE_RECORD_DIALOG);
  g_clear_object (&self->settings);
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
  gtk_widget_class_bind_template_callback (widget_class, tide_record_dialog_sampling_changed_cb);

  gtk_widget_class_install_action (widget_class, "record.start", NULL, start_action);
  gtk_widget_class_install_action (widget_class, "record.choose-folder", NULL, choose_folder_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
tide_record_dialog_init (TideRecordDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
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

void
tide_record_dialog_set_torch (TideRecordDialog *self,
                              gboolean          torch)
{
  g_return_if_fail (TIDE_IS_RECORD_DIALOG (self));
  gtk_check_button_set_active (self->torch_check, torch);
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

/**
 * tide_record_dialog_build_argv:
 * @output: the trace to write
 * @program_base: (out) (optional): the program's base name, for naming
 *
 * Returns: (transfer full) (nullable): `record ... -- CMD ARGS`, the
 *   arguments after the tidemark binary, or %NULL with @error set
 */
char **
tide_record_dialog_build_argv (TideRecordDialog  *self,
                               const char        *output,
                               char             **program_base,
                               GError           **error)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) command = NULL;
  g_autofree char *text = NULL;
  guint sampling;

  g_return_val_if_fail (TIDE_IS_RECORD_DIALOG (self), NULL);

  text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->command_entry))));
  if (*text == '\0')
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "Enter the command line of the program to record.");
      return NULL;
    }
  if (!g_shell_parse_argv (text, NULL, &command, error))
    return NULL;
  if (!g_file_test (tide_record_dialog_get_folder (self), G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY, "The working folder %s does not exist.",
                   tide_record_dialog_get_folder (self));
      return NULL;
    }

  g_strv_builder_add_many (builder, "record", "-q", "-o", output, NULL);
  sampling = gtk_drop_down_get_selected (self->sampling_dropdown);
  if (sampling == TIDE_SAMPLING_ALL)
    g_strv_builder_add (builder, "--all");
  else if (sampling == TIDE_SAMPLING_BYTES)
    {
      g_autofree char *bytes = g_strdup_printf ("%" G_GINT64_FORMAT,
                                                (gint64) gtk_spin_button_get_value (self->bytes_spin));
      g_strv_builder_add_many (builder, "--sample-bytes", bytes, NULL);
    }
  if (gtk_check_button_get_active (self->torch_check))
    g_strv_builder_add (builder, "--torch");
  g_strv_builder_add (builder, "--");
  g_strv_builder_addv (builder, (const char **) command);
  if (program_base != NULL)
    *program_base = g_path_get_basename (command[0]);
  return g_strv_builder_end (builder);
}
