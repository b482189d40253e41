/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-export-size-dialog.h: the size a timeline PNG is exported at.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define TIDE_TYPE_EXPORT_SIZE_DIALOG (tide_export_size_dialog_get_type ())

G_DECLARE_FINAL_TYPE (TideExportSizeDialog, tide_export_size_dialog, TIDE, EXPORT_SIZE_DIALOG,
                      AdwMessageDialog)

TideExportSizeDialog *tide_export_size_dialog_new              (GtkWindow            *parent,
                                                                int                   width,
                                                                int                   height);
int                   tide_export_size_dialog_get_image_width  (TideExportSizeDialog *self);
int                   tide_export_size_dialog_get_image_height (TideExportSizeDialog *self);

G_END_DECLS
