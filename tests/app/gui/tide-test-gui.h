/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-test-gui.h: what the window tests share: a temporary folder of
 * the program's own, the trace `tidemark record --all` writes there from
 * tests/targets/leaky-steps once per program, and windows opened on it.
 */
#pragma once

#include "tide-window-private.h"

G_BEGIN_DECLS

extern char *tide_test_gui_dir;    /* the program's temporary folder */
extern char *tide_test_gui_trace;  /* the leaky-steps trace in it */

void        tide_test_gui_init               (int          *argc,
                                              char       ***argv);
void        tide_test_gui_finish             (void);
char       *tide_test_gui_build_path         (const char   *first,
                                              ...) G_GNUC_NULL_TERMINATED;
char       *tide_test_gui_run_cli            (const char * const *args);
TideWindow *tide_test_gui_window_new         (void);
TideWindow *tide_test_gui_window_open        (const char   *path);
gboolean    tide_test_gui_action_enabled     (TideWindow   *window,
                                              const char   *action);
void        tide_test_gui_wait_for_drilldown (TideWindow   *window);

G_END_DECLS
