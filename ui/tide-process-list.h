/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-process-list.h: the running processes that attach can pick from.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define TIDE_TYPE_PROCESS_LIST_ITEM (tide_process_list_item_get_type ())

G_DECLARE_FINAL_TYPE (TideProcessListItem, tide_process_list_item, TIDE, PROCESS_LIST_ITEM, GObject)

int         tide_process_list_item_get_pid     (TideProcessListItem *self);
const char *tide_process_list_item_get_command (TideProcessListItem *self);
const char *tide_process_list_item_get_user    (TideProcessListItem *self);
const char *tide_process_list_item_get_name    (TideProcessListItem *self);
gboolean    tide_process_list_item_matches     (TideProcessListItem *self,
                                                const char          *search);

GListStore *tide_process_list_load             (void);

G_END_DECLS
