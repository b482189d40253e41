/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-record-dialog.h: the Record dialog: what to record and how.
 */
#pragma once

#include <adwaita.h>

#include "tide-process-list.h"
#include "tide-record-request.h"

G_BEGIN_DECLS

#define TIDE_TYPE_RECORD_DIALOG (tide_record_dialog_get_type ())

G_DECLARE_FINAL_TYPE (TideRecordDialog, tide_record_dialog, TIDE, RECORD_DIALOG, GtkWindow)

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
gboolean          tide_record_dialog_get_torch    (TideRecordDialog *self);
void              tide_record_dialog_set_error    (TideRecordDialog *self,
                                                   const char       *message);
const char       *tide_record_dialog_get_error    (TideRecordDialog *self);
gboolean          tide_record_dialog_get_request  (TideRecordDialog  *self,
                                                   TideRecordRequest *request,
                                                   GError           **error);
void              tide_record_dialog_set_mode     (TideRecordDialog *self,
                                                   TideRecordMode    mode);
TideRecordMode    tide_record_dialog_get_mode     (TideRecordDialog *self);
void              tide_record_dialog_set_search   (TideRecordDialog *self,
                                                   const char       *search);
GtkSelectionModel *tide_record_dialog_get_processes (TideRecordDialog *self);
void              tide_record_dialog_set_duration (TideRecordDialog *self,
                                                   double            seconds);

G_END_DECLS
