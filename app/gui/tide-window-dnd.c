/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Dropping a trace on the window opens it.
 */
#include "config.h"

#include "tide-window-private.h"

static gboolean
tide_window_drop_cb (TideWindow   *self,
                     const GValue *value,
                     double        x,
                     double        y)
{
  GFile *file = NULL;

  g_assert (TIDE_IS_WINDOW (self));

  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      GSList *files = g_value_get_boxed (value);
      file = files ? files->data : NULL;
    }
  else if (G_VALUE_HOLDS (value, G_TYPE_FILE))
    file = g_value_get_object (value);
  if (file == NULL || _tide_window_is_recording (self))
    return FALSE;
  tide_window_open_file (self, file);
  return TRUE;
}

void
_tide_window_dnd_init (TideWindow *self)
{
  GtkDropTarget *target = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE };

  gtk_drop_target_set_gtypes (target, types, G_N_ELEMENTS (types));
  g_signal_connect_object (target, "drop", G_CALLBACK (tide_window_drop_cb), self,
                           G_CONNECT_SWAPPED);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (target));
}
