/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The window names stacks by their headline (tide-plumbing.h), on a trace
 * recorded here with `tidemark record --torch --sample-bytes 4096` from
 * tests/python/train-leaky.py (Debian's /usr/bin/python3 and
 * python3-torch; skipped without them): the suspect row, the drill-down's
 * stack row and the flame graph's first focus show the leaking Python line,
 * not c10::alloc_cpu; the frame list dims plumbing and can hide it.  The
 * flame graph of those 40-odd frames opens with the headline in view, in
 * the Python frames' colour.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "tide-plumbing.h"
#include "tide-schema.h"
#include "tide-test-util.h"
#include "tide-test-widget.h"
#include "tide-window-private.h"

#define PYTHON "/usr/bin/python3"
#define STEPS  "8"

static char *tmp_dir;
static char *trace_path;

static void
record_trace (void)
{
  const char *root = g_getenv ("TIDEMARK_BUILD_ROOT");
  g_autofree char *tidemark = g_build_filename (root ? root : TIDE_BUILD_ROOT, "app", "tidemark",
                                                NULL);
  g_autofree char *script = g_build_filename (TIDE_PYTHON_TESTS_DIR, "train-leaky.py", NULL);
  const char *argv[] = { tidemark, "record", "--force", "-q", "--torch", "--sample-bytes", "4096",
                         "-o", trace_path, "--", PYTHON, script, "leak", STEPS, NULL };
  g_autoptr(GError) error = NULL;
  int status = -1;

  g_spawn_sync (tmp_dir, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

/* The line of train-leaky.py that carries "# LEAK-LINE". */
static int
leak_line (void)
{
  g_autofree char *path = g_build_filename (TIDE_PYTHON_TESTS_DIR, "train-leaky.py", NULL);

  return tide_test_source_line (path, "# LEAK-LINE");
}

static TideWindow *
window_open (void)
{
  TideWindow *window = tide_window_new (NULL);
  g_autoptr(GFile) file = g_file_new_for_path (trace_path);

  gtk_window_present (GTK_WINDOW (window));
  tide_window_open_file (window, file);
  g_assert_cmpint (_tide_window_get_state (window), ==, TIDE_WINDOW_TRACE);
  return window;
}

static GtkWidget *
find_descendant (GtkWidget *widget,
                 GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_descendant (child, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The text of the suspects list's first row, as the label shows it. */
static char *
first_suspect_row_text (TideWindow *window)
{
  GtkWidget *list = find_descendant (GTK_WIDGET (window->suspects_view), GTK_TYPE_LIST_BOX);
  GtkListBoxRow *row;
  GtkWidget *label;

  g_assert_nonnull (list);
  row = gtk_list_box_get_row_at_index (GTK_LIST_BOX (list), 0);
  g_assert_nonnull (row);
  label = gtk_list_box_row_get_child (row);
  g_assert_true (GTK_IS_LABEL (label));
  return g_strdup (gtk_label_get_text (GTK_LABEL (label)));
}

static void
test_suspect_row (void)
{
  TideWindow *window = window_open ();
  g_autofree char *text = first_suspect_row_text (window);
  g_autofree char *expected = g_strdup_printf ("train-leaky.py:%d Block.forward\n", leak_line ());

  g_assert_true (g_str_has_prefix (text, expected));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A trace opens on its answer: the suspects page, the top suspect chosen
 * and its growth drawn on the timeline from the step where it began; its
 * row says the line, the process and the module, as the text report
 * does. */
static void
test_opens_on_answer (void)
{
  TideWindow *window = window_open ();
  const TideGroup *top = tide_suspects_view_get_selected (window->suspects_view);
  g_autofree char *text = first_suspect_row_text (window);
  g_autofree char *pattern = g_strdup_printf (
    "^train-leaky\\.py:%d Block\\.forward\n"
    "\\+[0-9.]+ KiB/step since step %d, [0-9.]+ [KM]iB live at the last step, "
    "in python3 train-leaky\\.py [^\n]* \\(pid [0-9]+\\) on host\n"
    "scope Net\\.encoder\\.layers\\.2$", leak_line (), top ? top->growth_step : -1);

  g_assert_cmpstr (gtk_stack_get_visible_child_name (window->detail_stack), ==, "suspects");
  g_assert_nonnull (top);
  g_assert_cmpint (tide_group_get_headline (top)->line, ==, leak_line ());
  g_assert_cmpint (top->growth_step, >=, 1);
  g_assert_cmpint (tide_timeline_view_get_highlight_step (window->timeline), ==, top->growth_step);
  g_assert_cmpint (tide_session_get_process_id (window->session), ==, top->process.id);
  if (!g_regex_match_simple (pattern, text, 0, 0))
    g_error ("the top suspect's row reads \"%s\"", text);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The plumbing-patterns key extends the list for the window as for the
 * CLI: with train-leaky.py's frames plumbing, torch's own Python frame
 * that called Block.forward is the headline, named with its package. */
static void
test_settings_pattern (void)
{
  g_autoptr(GSettings) settings = g_settings_new ("dev.tidemark.Tidemark");
  const char *patterns[] = { "file:*/train-leaky.py", NULL };
  TideWindow *window;
  g_autofree char *text = NULL;

  g_settings_set_strv (settings, "plumbing-patterns", patterns);
  window = window_open ();
  text = first_suspect_row_text (window);
  g_assert_true (g_regex_match_simple ("^torch/nn/modules/module\\.py:[0-9]+ Module\\._call_impl\n",
                                       text, 0, 0));
  gtk_window_destroy (GTK_WINDOW (window));
  g_settings_reset (settings, "plumbing-patterns");
}

/* Opens every scope row, so that the stack rows are in the model. */
static void
expand_scopes (GListModel *model)
{
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (model, i);
      g_autoptr(TideDrilldownNode) node = gtk_tree_list_row_get_item (row);

      if (tide_drilldown_node_get_kind (node) == TIDE_DRILLDOWN_SCOPE)
        gtk_tree_list_row_set_expanded (row, TRUE);
    }
}

/* The position of the stack row labelled @label, or -1. */
static gint
find_stack_row (GListModel *model,
                const char *label)
{
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (model, i);
      g_autoptr(TideDrilldownNode) node = gtk_tree_list_row_get_item (row);

      if (tide_drilldown_node_get_kind (node) == TIDE_DRILLDOWN_STACK &&
          g_strcmp0 (tide_drilldown_node_get_label (node), label) == 0)
        return (gint) i;
    }
  return -1;
}

/* How many frame rows the stack row at @position shows when opened, and
 * how many of them are plumbing. */
static guint
count_frame_rows (GListModel *model,
                  guint       position,
                  guint      *n_plumbing)
{
  g_autoptr(GtkTreeListRow) row = g_list_model_get_item (model, position);
  guint n = 0;

  *n_plumbing = 0;
  gtk_tree_list_row_set_expanded (row, TRUE);
  for (guint i = position + 1; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(GtkTreeListRow) child = g_list_model_get_item (model, i);
      g_autoptr(TideDrilldownNode) node = gtk_tree_list_row_get_item (child);

      if (tide_drilldown_node_get_kind (node) != TIDE_DRILLDOWN_FRAME)
        break;
      n++;
      *n_plumbing += tide_drilldown_node_is_plumbing (node);
    }
  return n;
}

/* The drill-down query runs off the main thread: waits for its result. */
static void
wait_for_drilldown (TideWindow *window)
{
  while (tide_retained_query_get_loading (window->retained))
    g_main_context_iteration (NULL, TRUE);
}

static void
test_drilldown_and_flame (void)
{
  TideWindow *window = window_open ();
  g_autofree char *label = g_strdup_printf ("train-leaky.py:%d Block.forward", leak_line ());
  GListModel *model;
  guint all, hidden, n_plumbing, n_plumbing_hidden;
  gint position;

  /* The last step kept the step's leaked tensor. */
  tide_session_set_step (window->session, atoi (STEPS));
  wait_for_drilldown (window);
  model = tide_drilldown_view_get_model (window->drilldown_view);
  expand_scopes (model);
  position = find_stack_row (model, label);
  g_assert_cmpint (position, >=, 0);
  g_assert_cmpint (find_stack_row (model, "c10::alloc_cpu(unsigned long) (libc10.so.1.13)"), ==, -1);

  /* Its frames: plumbing marked, and left out on request (the default). */
  g_assert_true (tide_drilldown_view_get_hide_plumbing (window->drilldown_view));
  tide_drilldown_view_set_hide_plumbing (window->drilldown_view, FALSE);
  g_assert_false (tide_flame_graph_get_hide_plumbing (window->flame_graph));
  model = tide_drilldown_view_get_model (window->drilldown_view);
  expand_scopes (model);
  position = find_stack_row (model, label);
  all = count_frame_rows (model, position, &n_plumbing);
  g_assert_cmpuint (n_plumbing, >=, 5);  /* c10::alloc_cpu, 3 at::detail::empty_cpu, ... */
  tide_drilldown_view_set_hide_plumbing (window->drilldown_view, TRUE);
  model = tide_drilldown_view_get_model (window->drilldown_view);
  expand_scopes (model);
  position = find_stack_row (model, label);
  g_assert_cmpint (position, >=, 0);
  hidden = count_frame_rows (model, position, &n_plumbing_hidden);
  g_assert_cmpuint (n_plumbing_hidden, ==, 0);
  g_assert_true (tide_flame_graph_get_hide_plumbing (window->flame_graph));
  g_assert_cmpuint (hidden, ==, all - n_plumbing);

  /* The flame graph opens on the largest stack's headline, never on
   * plumbing. */
  {
    const TideFrame *focus = tide_flame_graph_get_selected_frame (window->flame_graph);

    g_assert_nonnull (focus);
    g_assert_false (focus->plumbing);
    g_assert_cmpstr (tide_flame_graph_get_zoom_label (window->flame_graph), !=, "all");
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* PyTorch's stacks are far taller than the pane: the flame graph opens
 * scrolled to the leaking line, drawn in the Python frames' colour with
 * the selection outline, its caller below it; not on empty rows above
 * the deepest frame (it drew a blank pane before). */
static void
test_flame_graph_draws (void)
{
  TideWindow *window = window_open ();
  GtkWidget *view = GTK_WIDGET (window->flame_graph);
  const TideFrame *focus;
  g_autofree char *label = NULL;
  g_autofree guint32 *pixels = NULL;
  graphene_rect_t area, inside;
  guint ink;
  int width, height;

  tide_session_set_step (window->session, atoi (STEPS));
  wait_for_drilldown (window);
  gtk_stack_set_visible_child_name (window->detail_stack, "flame");
  gtk_test_widget_wait_for_draw (view);
  focus = tide_flame_graph_get_selected_frame (window->flame_graph);
  g_assert_nonnull (focus);
  g_assert_cmpint (focus->kind, ==, TIDE_FRAME_PYTHON);
  g_assert_cmpint (focus->line, ==, leak_line ());
  label = tide_frame_describe (focus);
  g_assert_true (tide_flame_graph_get_function_area (window->flame_graph, focus->function, &area));
  pixels = tide_test_render_mapped (view, &width, &height);
  g_assert_cmpfloat (area.origin.y, >=, 0);
  g_assert_cmpfloat (area.origin.y + area.size.height, <=, height);
  graphene_rect_inset_r (&area, 3, 3, &inside);
  g_assert_cmphex (tide_test_area_mode (pixels, width, height, &inside, &ink), ==,
                   0xff000000 | tide_flame_graph_frame_rgb (focus, label));
  g_assert_cmpuint (ink, >=, 20);
  g_assert_cmphex (pixels[(int) (area.origin.y + area.size.height / 2) * width] & 0xffffff, ==, 0x3584e4);
  /* The row below: its caller, drawn too. */
  area.origin.y += area.size.height + 1;
  g_assert_cmpfloat (area.origin.y + area.size.height, <=, height);
  graphene_rect_inset_r (&area, 3, 3, &inside);
  tide_test_area_mode (pixels, width, height, &inside, &ink);
  g_assert_cmpuint (ink, >=, 20);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int    argc,
      char **argv)
{
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  if (!tide_test_python_imports (PYTHON, "torch"))
    {
      g_test_message ("%s cannot import torch", PYTHON);
      return 77;
    }
  tmp_dir = tide_test_make_dir ("tide-gui-headline");
  g_assert_nonnull (tmp_dir);
  trace_path = g_build_filename (tmp_dir, "train-leaky.tide", NULL);
  record_trace ();

  g_test_add_func ("/gui/headline/suspect-row", test_suspect_row);
  g_test_add_func ("/gui/headline/opens-on-answer", test_opens_on_answer);
  g_test_add_func ("/gui/headline/drilldown-and-flame", test_drilldown_and_flame);
  g_test_add_func ("/gui/headline/flame-graph-draws", test_flame_graph_draws);
  g_test_add_func ("/gui/headline/settings-pattern", test_settings_pattern);
  status = g_test_run ();

  g_unlink (trace_path);
  g_rmdir (tmp_dir);
  return status;
}
