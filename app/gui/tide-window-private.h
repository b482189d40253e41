/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideWindow's instance, shared by its partial-class files
 * (tide-window-actions.c, tide-window-dnd.c, tide-window-record.c) and by
 * the UI tests, which drive the window through the _tide_window_* calls.
 */
#pragma once

#include "tide-drilldown-view.h"
#include "tide-export-size-dialog.h"
#include "tide-flame-graph.h"
#include "tide-record-dialog.h"
#include "tide-retained-query.h"
#include "tide-session.h"
#include "tide-steps-view.h"
#include "tide-suspects-view.h"
#include "tide-timeline-view.h"
#include "tide-trace.h"
#include "tide-window.h"

G_BEGIN_DECLS

typedef enum
{
  TIDE_WINDOW_EMPTY,
  TIDE_WINDOW_ERROR,
  TIDE_WINDOW_TRACE,
} TideWindowState;

struct _TideWindow
{
  AdwApplicationWindow  parent_instance;

  /* Template children */
  TideSession          *session;        /* the trace, process, selection and window,
                                         * which every view reads */
  TideRetainedQuery    *retained;       /* what the session's selection retained */
  AdwWindowTitle       *title;
  GtkStack             *stack;
  GtkStack             *detail_stack;
  AdwStatusPage        *error_page;
  GtkInfoBar           *banner;
  GtkLabel             *banner_label;
  GtkMenuButton        *export_button;
  GtkButton            *stop_button;
  GtkButton            *record_button;
  GtkBox               *process_bar;
  GtkDropDown          *process_dropdown;
  GtkBox               *timeline_slot;
  TideTimelineView     *timeline;
  TideStepsView        *steps_view;
  TideDrilldownView    *drilldown_view;
  TideFlameGraph       *flame_graph;
  GtkSearchEntry       *flame_search;
  GtkLabel             *frame_detail;
  GtkLabel             *drilldown_title;
  TideSuspectsView     *suspects_view;

  /* Owned references */
  GBinding             *process_binding; /* session <-> process_dropdown, per list */
  GArray               *process_ids;    /* gint64, as in process_dropdown */
  GSettings            *settings;       /* nullable: schema not installed */
  GtkNativeDialog      *export_chooser; /* the export file chooser while shown; owned */
  char                 *error_title;
  char                 *error_message;
  char                 *banner_message;


  /* Live capture */
  GSubprocess          *recorder;
  GCancellable         *live_cancellable;
  char                 *live_path;
  guint                 live_timeout;
  guint                 live_generation;
  guint                 live_refreshes;
  gint64                live_steps;
  gint64                live_known[3];  /* steps, allocations, last time */
  int                   recorder_status;

  int                   export_width;   /* the PNG size last asked for */
  int                   export_height;
  TideWindowState       state;
  guint                 live_in_flight : 1;
};

/* tide-window.c */
void             _tide_window_set_trace            (TideWindow   *self,
                                                    TideTrace    *trace);
void             _tide_window_show_error           (TideWindow   *self,
                                                    const char   *title,
                                                    const char   *message);
TideWindowState  _tide_window_get_state            (TideWindow   *self);

/* (transfer none) (nullable): the trace shown, the session's */
static inline TideTrace *
_tide_window_get_trace (TideWindow *self)
{
  return tide_session_get_trace (self->session);
}

/* tide-window-actions.c */
void             _tide_window_class_actions_init   (GtkWidgetClass *widget_class);
void             _tide_window_actions_update       (TideWindow   *self);
gboolean         _tide_window_export_png           (TideWindow   *self,
                                                    const char   *path,
                                                    int           width,
                                                    int           height,
                                                    GError      **error);
gboolean         _tide_window_export_steps_csv     (TideWindow   *self,
                                                    const char   *path,
                                                    GError      **error);
gboolean         _tide_window_export_drilldown_csv (TideWindow   *self,
                                                    const char   *path,
                                                    GError      **error);
gboolean         _tide_window_export_compare_csv   (TideWindow   *self,
                                                    const char   *path,
                                                    GError      **error);
gboolean         _tide_window_compare_file         (TideWindow   *self,
                                                    GFile        *file,
                                                    GError      **error);
TideRecordDialog *_tide_window_present_record_dialog (TideWindow *self);
AdwMessageDialog *_tide_window_present_export_size_dialog (TideWindow *self);
void             _tide_window_export_chosen        (TideWindow   *self,
                                                    GFile        *file);

/* tide-window-dnd.c */
void             _tide_window_dnd_init             (TideWindow   *self);

/* tide-window-record.c */
char            *_tide_window_find_recorder        (void);
gboolean         _tide_window_start_recording      (TideWindow   *self,
                                                    TideRecordDialog *dialog,
                                                    GError      **error);
void             _tide_window_stop_recording       (TideWindow   *self);
gboolean         _tide_window_is_recording         (TideWindow   *self);
void             _tide_window_record_dispose       (TideWindow   *self);

G_END_DECLS
