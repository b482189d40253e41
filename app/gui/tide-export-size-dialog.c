/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideExportSizeDialog: Export → Timeline as PNG asks for the image's
 * size before the file.  It only holds the two sizes; the window reads
 * them on the "export" response, remembers them and asks for the file.
 */
#include "config.h"

#include "tide-export-size-dialog.h"

struct _TideExportSizeDialog
{
  AdwMessageDialog  parent_instance;

  /* Template widgets */
  GtkSpinButton    *width_spin;
  GtkSpinButton    *height_spin;
};

G_DEFINE_FINAL_TYPE (TideExportSizeDialog, tide_export_size_dialog, ADW_TYPE_MESSAGE_DIALOG)

static void
tide_export_size_dialog_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), TIDE_TYPE_EXPORT_SIZE_DIALOG);
  G_OBJECT_CLASS (tide_export_size_dialog_parent_class)->dispose (object);
}

static void
tide_export_size_dialog_class_init (TideExportSizeDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tide_export_size_dialog_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/tidemark/Tidemark/tide-export-size-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, TideExportSizeDialog, width_spin);
  gtk_widget_class_bind_template_child (widget_class, TideExportSizeDialog, height_spin);
}

static void
tide_export_size_dialog_init (TideExportSizeDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/* @width and @height: the size asked for last, shown to be changed. */
TideExportSizeDialog *
tide_export_size_dialog_new (GtkWindow *parent,
                             int        width,
                             int        height)
{
  TideExportSizeDialog *self;

  g_return_val_if_fail (parent == NULL || GTK_IS_WINDOW (parent), NULL);

  self = g_object_new (TIDE_TYPE_EXPORT_SIZE_DIALOG, "transient-for", parent, NULL);
  gtk_spin_button_set_value (self->width_spin, width);
  gtk_spin_button_set_value (self->height_spin, height);
  return self;
}

int
tide_export_size_dialog_get_image_width (TideExportSizeDialog *self)
{
  g_return_val_if_fail (TIDE_IS_EXPORT_SIZE_DIALOG (self), 0);
  return gtk_spin_button_get_value_as_int (self->width_spin);
}

int
tide_export_size_dialog_get_image_height (TideExportSizeDialog *self)
{
  g_return_val_if_fail (TIDE_IS_EXPORT_SIZE_DIALOG (self), 0);
  return gtk_spin_button_get_value_as_int (self->height_spin);
}
