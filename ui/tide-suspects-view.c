/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideSuspectsView: the leak suspects of tide_report_suspects(), steepest
 * first.  Choosing one notifies "selected", which the window turns into a
 * highlight of its growth on the timeline.  After them come the classes of
 * resident memory that grow by the same rule (tide_report_class_suspects()),
 * each with its hint; they have no stack to highlight, so they cannot be
 * chosen.
 */
#include "config.h"

#include "tide-suspects-view.h"

#include "tide-report-format.h"
#include "tide-report-rss.h"
#include "tide-trace-tables.h"

struct _TideSuspectsView
{
  GtkWidget  parent_instance;

  /* Template widgets */
  GtkWidget *scroller;
  GtkWidget *list;

  /* Owned references */
  GPtrArray *suspects;     /* TideGroup* */
  GPtrArray *classes;      /* TideClassSuspect* */

  gint       selected;
};

G_DEFINE_FINAL_TYPE (TideSuspectsView, tide_suspects_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_SELECTED,
  PROP_TABLES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* "\nin 3 scopes: a +64.00 KiB, b +64.00 KiB, …" for a stack that grows in
 * several scopes (each its own share), else "". */
static char *
describe_scope_shares (const TideGroup *group)
{
  GString *line = g_string_new (NULL);

  for (guint i = 0; group->scopes != NULL && group->scopes->len > 1 && i < group->scopes->len; i++)
    {
      const TideScopeShare *share = &g_array_index (group->scopes, TideScopeShare, i);
      g_autofree char *slope = tide_format_delta ((gint64) share->bytes_per_step);

      if (i == 0)
        g_string_append_printf (line, "\nin %u scopes: ", group->scopes->len);
      g_string_append_printf (line, "%s%s %s", i ? ", " : "",
                              share->path ? share->path : "(no scope)", slope);
    }
  return g_string_free (line, FALSE);
}

/* As the text report says it: the headline, then how it grows and in
 * which process, then its scopes. */
static char *
describe_suspect (const TideGroup *group)
{
  g_autofree char *slope = tide_format_delta ((gint64) group->bytes_per_step);
  g_autofree char *total = tide_format_bytes (group->bytes);
  g_autofree char *where = NULL;
  g_autofree char *device = group->device < 0 ? g_strdup ("host")
                                              : g_strdup_printf ("cuda:%d", group->device);
  g_autofree char *scopes_line = describe_scope_shares (group);
  gboolean has_stack = group->frames != NULL && group->frames->len > 0;

  if (has_stack)
    where = tide_group_describe_headline (group);
  else
    where = g_strdup (group->scope_path ? group->scope_path : "(no stack)");
  if (*scopes_line == '\0' && has_stack && group->scope_path != NULL)
    {
      g_free (scopes_line);
      scopes_line = g_strdup_printf ("\nscope %s", group->scope_path);
    }
  return g_strdup_printf ("%s\n%s/step since step %d, %s live at the last step, in %s "
                          "(pid %" G_GINT64_FORMAT ") on %s%s",
                          where, slope, group->growth_step, total,
                          group->process.role ? group->process.role : "?", group->process.pid,
                          device, scopes_line);
}

/* "copy-on-write in DataLoader worker 0, +8.00 MiB/step since step 3,
 * 32.00 MiB copied (pid 42)\nreading a Python object writes …" */
static char *
describe_class_suspect (const TideClassSuspect *suspect)
{
  g_autofree char *line = tide_class_suspect_describe (suspect);

  return g_strdup_printf ("%s\n%s", line, suspect->hint);
}

static GtkWidget *
row_new (const char *text)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 0.0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_widget_set_margin_start (label, 12);
  gtk_widget_set_margin_end (label, 12);
  gtk_widget_set_margin_top (label, 6);
  gtk_widget_set_margin_bottom (label, 6);
  return label;
}

static void
tide_suspects_view_row_selected_cb (TideSuspectsView *self,
                                    GtkListBoxRow    *row)
{
  gint index = row ? gtk_list_box_row_get_index (row) : -1;

  g_assert (TIDE_IS_SUSPECTS_VIEW (self));
  if (index == self->selected)
    return;
  self->selected = index;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED]);
}

static void
tide_suspects_view_dispose (GObject *object)
{
  TideSuspectsView *self = TIDE_SUSPECTS_VIEW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), TIDE_TYPE_SUSPECTS_VIEW);
  g_clear_pointer (&self->suspects, g_ptr_array_unref);
  g_clear_pointer (&self->classes, g_ptr_array_unref);
  G_OBJECT_CLASS (tide_suspects_view_parent_class)->dispose (object);
}

static void
tide_suspects_view_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  TideSuspectsView *self = TIDE_SUSPECTS_VIEW (object);

  switch (prop_id)
    {
    case PROP_SELECTED: g_value_set_int (value, self->selected); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void set_tables (TideSuspectsView *self,
                        TideTraceTables  *tables);

static void
tide_suspects_view_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  switch (prop_id)
    {
    case PROP_SELECTED: tide_suspects_view_select (TIDE_SUSPECTS_VIEW (object), g_value_get_int (value)); break;
    case PROP_TABLES: set_tables (TIDE_SUSPECTS_VIEW (object), g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_suspects_view_class_init (TideSuspectsViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tide_suspects_view_dispose;
  object_class->get_property = tide_suspects_view_get_property;
  object_class->set_property = tide_suspects_view_set_property;

  properties[PROP_SELECTED] =
    g_param_spec_int ("selected", NULL, NULL, -1, G_MAXINT, -1,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* The session's tables: their suspects are the rows.  Bound in the
   * window's template; not kept, so not read back. */
  properties[PROP_TABLES] =
    g_param_spec_object ("tables", NULL, NULL, TIDE_TYPE_TRACE_TABLES,
                         G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "suspects");
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/tidemark/Tidemark/ui/tide-suspects-view.ui");
  gtk_widget_class_bind_template_child (widget_class, TideSuspectsView, scroller);
  gtk_widget_class_bind_template_child (widget_class, TideSuspectsView, list);
  gtk_widget_class_bind_template_callback (widget_class, tide_suspects_view_row_selected_cb);
}

static void
tide_suspects_view_init (TideSuspectsView *self)
{
  self->selected = -1;
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
tide_suspects_view_new (void)
{
  return g_object_new (TIDE_TYPE_SUSPECTS_VIEW, NULL);
}

static guint
n_stacks (TideSuspectsView *self)
{
  return self->suspects ? self->suspects->len : 0;
}

/* Row @index's text: a stack's, or after them a class's. */
static char *
describe_row (TideSuspectsView *self,
              guint             index)
{
  if (index < n_stacks (self))
    return describe_suspect (g_ptr_array_index (self->suspects, index));
  return describe_class_suspect (g_ptr_array_index (self->classes, index - n_stacks (self)));
}

static void
rebuild_rows (TideSuspectsView *self)
{
  GtkWidget *child;

  gtk_list_box_unselect_all (GTK_LIST_BOX (self->list));
  while ((child = gtk_widget_get_first_child (self->list)) != NULL &&
         GTK_IS_LIST_BOX_ROW (child))
    gtk_list_box_remove (GTK_LIST_BOX (self->list), child);
  for (guint i = 0; i < tide_suspects_view_get_n_rows (self); i++)
    {
      g_autofree char *text = describe_row (self, i);

      gtk_list_box_append (GTK_LIST_BOX (self->list), row_new (text));
      if (i >= n_stacks (self))
        gtk_list_box_row_set_selectable (gtk_list_box_get_row_at_index (GTK_LIST_BOX (self->list),
                                                                        (gint) i), FALSE);
    }
}

/* The suspects of a trace's tables (the session's), by stack and by
 * class: one rebuild of the rows for both. */
static void
set_tables (TideSuspectsView *self,
            TideTraceTables  *tables)
{
  GPtrArray *suspects = tables ? tide_trace_tables_get_suspects (tables) : NULL;
  GPtrArray *classes = tables ? tide_trace_tables_get_class_suspects (tables) : NULL;

  g_clear_pointer (&self->suspects, g_ptr_array_unref);
  g_clear_pointer (&self->classes, g_ptr_array_unref);
  self->suspects = suspects ? g_ptr_array_ref (suspects) : NULL;
  self->classes = classes ? g_ptr_array_ref (classes) : NULL;
  rebuild_rows (self);
}

/**
 * tide_suspects_view_set_suspects:
 * @suspects: (element-type TideGroup) (nullable): from tide_report_suspects()
 */
void
tide_suspects_view_set_suspects (TideSuspectsView *self,
                                 GPtrArray        *suspects)
{
  g_return_if_fail (TIDE_IS_SUSPECTS_VIEW (self));

  g_clear_pointer (&self->suspects, g_ptr_array_unref);
  self->suspects = suspects ? g_ptr_array_ref (suspects) : NULL;
  rebuild_rows (self);
}

/**
 * tide_suspects_view_set_class_suspects:
 * @classes: (element-type TideClassSuspect) (nullable): from
 *   tide_report_class_suspects()
 */
void
tide_suspects_view_set_class_suspects (TideSuspectsView *self,
                                       GPtrArray        *classes)
{
  g_return_if_fail (TIDE_IS_SUSPECTS_VIEW (self));

  g_clear_pointer (&self->classes, g_ptr_array_unref);
  self->classes = classes ? g_ptr_array_ref (classes) : NULL;
  rebuild_rows (self);
}

/* The stacks' rows, then the classes'. */
guint
tide_suspects_view_get_n_rows (TideSuspectsView *self)
{
  g_return_val_if_fail (TIDE_IS_SUSPECTS_VIEW (self), 0);
  return n_stacks (self) + (self->classes ? self->classes->len : 0);
}

char *
tide_suspects_view_dup_row_text (TideSuspectsView *self,
                                 guint             index)
{
  g_return_val_if_fail (TIDE_IS_SUSPECTS_VIEW (self), NULL);
  g_return_val_if_fail (index < tide_suspects_view_get_n_rows (self), NULL);
  return describe_row (self, index);
}

/* -1 clears the choice. */
void
tide_suspects_view_select (TideSuspectsView *self,
                           gint              index)
{
  GtkListBoxRow *row;

  g_return_if_fail (TIDE_IS_SUSPECTS_VIEW (self));

  row = index >= 0 ? gtk_list_box_get_row_at_index (GTK_LIST_BOX (self->list), index) : NULL;
  if (row != NULL)
    gtk_list_box_select_row (GTK_LIST_BOX (self->list), row);
  else
    gtk_list_box_unselect_all (GTK_LIST_BOX (self->list));
}

/* Returns: (transfer none) (nullable): the chosen suspect */
const TideGroup *
tide_suspects_view_get_selected (TideSuspectsView *self)
{
  g_return_val_if_fail (TIDE_IS_SUSPECTS_VIEW (self), NULL);
  if (self->suspects == NULL || self->selected < 0 || self->selected >= (gint) self->suspects->len)
    return NULL;
  return g_ptr_array_index (self->suspects, self->selected);
}
