/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define TIDE_TYPE_RECORD_DIALOG (tide_record_dialog_get_type ())

G_DECLARE_FINAL_TYPE (TideRecordDialog, tide_record_dialog, TIDE, RECORD_DIALOG, GtkWindow)

typedef enum
{
  TIDE_SAMPLING_DEFAULT,
  TIDE_SAMPLING_BYTES,
  TIDE_SAMPLING_ALL,
} TideSampling;

TideRecordDialog *tide_record_dialog_new          (GtkWindow        *parent,
                                                   GSettings        *settings);
void              tide_record_dialog_set_command  (TideRecordDialog *self,
                                                   const char       *command);
const char       *tide_record_dialog_get_folder   (TideRecordDialog *self);
void              tide_record_dialog_set_folder   (TideRecordDialog *self,
                                                   const char       *folder);
void              tide_record_dialog_set_sampling (TideRecordDialog *self,
                                                   TideSampling      sampling,
                                                   gint64            sample_bytes);
void              tide_record_dialog_set_torch    (TideRecordDialog *self,
                                                   gboolean          torch);
void              tide_record_dialog_set_error    (TideRecordDialog *self,
                                                   const char       *message);
const char       *tide_record_dialog_get_error    (TideRecordDialog *self);
char            **tide_record_dialog_build_argv   (TideRecordDialog *self,
                                                   const char       *output,
                                                   char            **program_base,
                                                   GError          **error);

G_END_DECLS
