/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideApplication: one window per trace.  AdwApplication loads style.css
 * and follows the system's dark style; resource-base-path makes GTK pick
 * up gtk/help-overlay.ui as the Keyboard Shortcuts window.
 *
 * --screenshot FILE saves a PNG of the main window once the trace is
 * drawn, then quits: data/screenshot.sh uses it for the README.  --step N
 * selects a step of the trace opened, --view NAME the detail view shown
 * (drilldown, flame or suspects).
 */
#include "config.h"

#include "tide-application.h"

#include "tide-window-private.h"

#define SCREENSHOT_DELAY_MS 1500
/* A loaded machine may not have drawn the window by then: the screenshot
 * is tried again until it has, for this long at most. */
#define SCREENSHOT_RETRY_MS 250
#define SCREENSHOT_MAX_TRIES 80

struct _TideApplication
{
  AdwApplication  parent_instance;

  char           *screenshot;
  guint           screenshot_tries;
  gint            step;
  char           *view;
};

G_DEFINE_FINAL_TYPE (TideApplication, tide_application, ADW_TYPE_APPLICATION)

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       data)
{
  GtkApplication *app = data;
  const char *developers[] = { "The Tidemark authors", NULL };
  GtkWidget *about = adw_about_window_new ();

  g_object_set (about,
                "transient-for", gtk_application_get_active_window (app),
                "application-name", "Tidemark",
                "application-icon", TIDE_APP_ID,
                "version", PACKAGE_VERSION,
                "comments", "See which training step keeps host and device memory, and which module and call stack hold it.",
                "developers", developers,
                "license-type", GTK_LICENSE_GPL_3_0,
                NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       data)
{
  g_application_quit (G_APPLICATION (data));
}

/* The pages of the window's detail stack that --view may name. */
static const char * const detail_views[] = { "drilldown", "flame", "suspects", NULL };

static const GActionEntry app_actions[] = {
  { "about", about_action },
  { "quit", quit_action },
};

static gboolean
save_screenshot_cb (gpointer data)
{
  TideApplication *self = data;
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (GTK_WIDGET (window));
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  int width = gtk_widget_get_width (GTK_WIDGET (window));
  int height = gtk_widget_get_height (GTK_WIDGET (window));

  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  if (node != NULL)
    texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                           &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (texture == NULL && ++self->screenshot_tries < SCREENSHOT_MAX_TRIES)
    {
      g_timeout_add (SCREENSHOT_RETRY_MS, save_screenshot_cb, self);
      return G_SOURCE_REMOVE;
    }
  if (texture == NULL || !gdk_texture_save_to_png (texture, self->screenshot))
    g_printerr ("tidemark-gui: cannot save %s\n", self->screenshot);
  g_application_quit (G_APPLICATION (self));
  return G_SOURCE_REMOVE;
}

static TideWindow *
new_window (TideApplication *self)
{
  TideWindow *window = tide_window_new (GTK_APPLICATION (self));

  gtk_window_present (GTK_WINDOW (window));
  if (self->screenshot != NULL)
    g_timeout_add (SCREENSHOT_DELAY_MS, save_screenshot_cb, self);
  return window;
}

static void
tide_application_activate (GApplication *app)
{
  new_window (TIDE_APPLICATION (app));
}

static void
tide_application_open (GApplication  *app,
                       GFile        **files,
                       int            n_files,
                       const char    *hint)
{
  TideApplication *self = TIDE_APPLICATION (app);

  for (int i = 0; i < n_files; i++)
    {
      TideWindow *window = new_window (self);

      tide_window_open_file (window, files[i]);
      if (self->step > 0 && _tide_window_get_state (window) == TIDE_WINDOW_TRACE)
        tide_session_set_step (window->session, self->step);
      if (self->view != NULL)
        gtk_stack_set_visible_child_name (window->detail_stack, self->view);
    }
}

static void
tide_application_startup (GApplication *app)
{
  static const char *quit_accels[] = { "<Control>q", NULL };

  G_APPLICATION_CLASS (tide_application_parent_class)->startup (app);
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions), app);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
}

static int
tide_application_handle_local_options (GApplication *app,
                                       GVariantDict *options)
{
  TideApplication *self = TIDE_APPLICATION (app);

  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("tidemark-gui %s\n", PACKAGE_VERSION);
      return 0;
    }
  g_variant_dict_lookup (options, "screenshot", "^ay", &self->screenshot);
  g_variant_dict_lookup (options, "step", "i", &self->step);
  g_variant_dict_lookup (options, "view", "s", &self->view);
  if (self->view != NULL && !g_strv_contains (detail_views, self->view))
    {
      g_printerr ("tidemark-gui: no view named \"%s\" (drilldown, flame or suspects)\n", self->view);
      return 2;
    }
  return -1;
}

static void
tide_application_finalize (GObject *object)
{
  g_free (TIDE_APPLICATION (object)->screenshot);
  g_free (TIDE_APPLICATION (object)->view);
  G_OBJECT_CLASS (tide_application_parent_class)->finalize (object);
}

static void
tide_application_class_init (TideApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = tide_application_finalize;
  app_class->activate = tide_application_activate;
  app_class->open = tide_application_open;
  app_class->startup = tide_application_startup;
  app_class->handle_local_options = tide_application_handle_local_options;
}

static void
tide_application_init (TideApplication *self)
{
  static const GOptionEntry entries[] = {
    { "version", 0, 0, G_OPTION_ARG_NONE, NULL, "Print the version and exit", NULL },
    { "step", 0, 0, G_OPTION_ARG_INT, NULL, "Select this step of the trace", "N" },
    { "view", 0, 0, G_OPTION_ARG_STRING, NULL, "Show this detail view: drilldown, flame or suspects", "NAME" },
    { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Save a PNG of the window, then quit", "FILE" },
    { NULL }
  };

  g_application_add_main_option_entries (G_APPLICATION (self), entries);
}

TideApplication *
tide_application_new (void)
{
  /* Each invocation is its own instance: a profiler opened from a terminal
   * should not hand its trace to a window of another session. */
  return g_object_new (TIDE_TYPE_APPLICATION,
                       "application-id", TIDE_APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE,
                       "resource-base-path", "/dev/tidemark/Tidemark",
                       NULL);
}
