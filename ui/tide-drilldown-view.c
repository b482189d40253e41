/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideDrilldownView: what the selected step or range retained, as a
 * sortable tree (GtkTreeListModel in a GtkColumnView): scope -> stack ->
 * frame, with bytes and allocation counts.  The first row is expanded, so
 * the largest stack of the largest scope shows without a click.  Frames of
 * allocator and runtime plumbing are dimmed, and "Hide plumbing" leaves
 * them out of the stacks.  With a compared run (tide_drilldown_view_set_compared),
 * two more columns show what its aligned step retained of each row and
 * the difference, the compared run less this one.
 */
#include "config.h"

#include "tide-drilldown-view.h"

#include "tide-report-format.h"
#include "tide-saturate.h"

typedef enum
{
  COLUMN_NAME,
  COLUMN_BYTES,
  COLUMN_COUNT,
  COLUMN_COMPARED,
  COLUMN_DIFFERENCE,
  N_COLUMNS
} Column;

/* The template's column ids, by Column. */
static const char *column_ids[N_COLUMNS] = {
  "name_column", "bytes_column", "count_column", "compared_column", "difference_column",
};

struct _TideDrilldownView
{
  GtkWidget           parent_instance;

  /* Owned references */
  GPtrArray          *groups;
  GtkSingleSelection *selection;
  GtkTreeListModel   *tree;       /* borrowed: owned by the sort model */
  GListModel         *roots;
  GHashTable         *compared;   /* nullable: tide_trace_diff_step_retained() */
  gboolean            hide_plumbing;

  /* Template widgets */
  GtkWidget          *box;
  GtkWidget          *hide_plumbing_check;
  GtkWidget          *scroller;
  GtkColumnView      *column_view;
  GtkColumnViewColumn *columns[N_COLUMNS];
};

G_DEFINE_FINAL_TYPE (TideDrilldownView, tide_drilldown_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_SELECTED_NODE,
  PROP_HIDE_PLUMBING,
  PROP_GROUPS,
  PROP_COMPARED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gboolean
node_is_not_plumbing_cb (gpointer item,
                         gpointer data)
{
  return !tide_drilldown_node_is_plumbing (item);
}

static GListModel *
create_children_cb (gpointer item,
                    gpointer data)
{
  TideDrilldownView *self = data;
  GListModel *children = tide_drilldown_node_get_children (item);

  if (children == NULL || g_list_model_get_n_items (children) == 0)
    return NULL;
  if (!self->hide_plumbing)
    return g_object_ref (children);
  return G_LIST_MODEL (gtk_filter_list_model_new (g_object_ref (children),
    GTK_FILTER (gtk_custom_filter_new (node_is_not_plumbing_cb, NULL, NULL))));
}

static void
tide_drilldown_view_name_setup_cb (GtkSignalListItemFactory *factory,
                                   GtkListItem              *item,
                                   TideDrilldownView        *self)
{
  GtkWidget *expander = gtk_tree_expander_new ();
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0.0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_tree_expander_set_child (GTK_TREE_EXPANDER (expander), label);
  gtk_list_item_set_child (item, expander);
}

static void
tide_drilldown_view_name_bind_cb (GtkSignalListItemFactory *factory,
                                  GtkListItem              *item,
                                  TideDrilldownView        *self)
{
  GtkTreeListRow *row = gtk_list_item_get_item (item);
  GtkTreeExpander *expander = GTK_TREE_EXPANDER (gtk_list_item_get_child (item));
  TideDrilldownNode *node = gtk_tree_list_row_get_item (row);
  GtkWidget *label = gtk_tree_expander_get_child (expander);

  gtk_tree_expander_set_list_row (expander, row);
  gtk_label_set_text (GTK_LABEL (label), tide_drilldown_node_get_label (node));
  if (tide_drilldown_node_is_plumbing (node))
    {
      g_autofree char *tip = g_strdup_printf ("%s\nAllocator or runtime plumbing",
                                              tide_drilldown_node_get_label (node));

      gtk_widget_add_css_class (label, "dim-label");
      gtk_widget_add_css_class (label, "plumbing");
      gtk_widget_set_tooltip_text (label, tip);
    }
  else
    {
      gtk_widget_remove_css_class (label, "dim-label");
      gtk_widget_remove_css_class (label, "plumbing");
      gtk_widget_set_tooltip_text (label, tide_drilldown_node_get_label (node));
    }
  g_object_unref (node);
}

static void
tide_drilldown_view_number_setup_cb (GtkSignalListItemFactory *factory,
                                     GtkListItem              *item,
                                     TideDrilldownView        *self)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 1.0);
  gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static Column
column_of_factory (TideDrilldownView  *self,
                   GtkListItemFactory *factory)
{
  for (guint i = 0; i < N_COLUMNS; i++)
    if (gtk_column_view_column_get_factory (self->columns[i]) == factory)
      return i;
  g_return_val_if_reached (COLUMN_BYTES);
}

/* A number column's value of @node; FALSE where it has none (no run
 * compared). */
static gboolean
node_value (TideDrilldownNode *node,
            Column             column,
            gint64            *value)
{
  gint64 compared = 0;
  gboolean known = tide_drilldown_node_get_compared (node, &compared);

  switch (column)
    {
    case COLUMN_COUNT: *value = tide_drilldown_node_get_count (node); return TRUE;
    case COLUMN_COMPARED: *value = compared; return known;
    case COLUMN_DIFFERENCE:
      *value = tide_sat_sub (compared, tide_drilldown_node_get_bytes (node));
      return known;
    case COLUMN_BYTES: case COLUMN_NAME: case N_COLUMNS: default:
      *value = tide_drilldown_node_get_bytes (node);
      return TRUE;
    }
}

/* The number columns share their cells; the factory says which. */
static void
tide_drilldown_view_number_bind_cb (GtkSignalListItemFactory *factory,
                                    GtkListItem              *item,
                                    TideDrilldownView        *self)
{
  g_autoptr(TideDrilldownNode) node = gtk_tree_list_row_get_item (gtk_list_item_get_item (item));
  Column column = column_of_factory (self, GTK_LIST_ITEM_FACTORY (factory));
  g_autofree char *text = NULL;
  gint64 value;

  if (!node_value (node, column, &value))
    text = g_strdup ("–");
  else if (column == COLUMN_COUNT)
    text = g_strdup_printf ("%" G_GINT64_FORMAT, value);
  else if (column == COLUMN_DIFFERENCE)
    text = tide_format_delta (value);
  else
    text = tide_format_bytes (value);
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

static int
compare_nodes_cb (gconstpointer a,
                  gconstpointer b,
                  gpointer      data)
{
  TideDrilldownNode *x = (TideDrilldownNode *) a, *y = (TideDrilldownNode *) b;
  gint64 vx, vy;

  if (GPOINTER_TO_INT (data) == COLUMN_NAME)
    return g_strcmp0 (tide_drilldown_node_get_label (x), tide_drilldown_node_get_label (y));
  node_value (x, GPOINTER_TO_INT (data), &vx);
  node_value (y, GPOINTER_TO_INT (data), &vy);
  return (vx > vy) - (vx < vy);
}

/* Comparing is code: each column of the template gets its sorter here. */
static void
add_sorters (TideDrilldownView *self)
{
  for (guint i = 0; i < N_COLUMNS; i++)
    {
      g_autoptr(GtkCustomSorter) sorter = gtk_custom_sorter_new (compare_nodes_cb,
                                                                 GINT_TO_POINTER (i), NULL);

      gtk_column_view_column_set_sorter (self->columns[i], GTK_SORTER (sorter));
    }
}

static void
tide_drilldown_view_selection_changed_cb (TideDrilldownView *self)
{
  g_assert (TIDE_IS_DRILLDOWN_VIEW (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_NODE]);
}

static void
tide_drilldown_view_dispose (GObject *object)
{
  TideDrilldownView *self = TIDE_DRILLDOWN_VIEW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), TIDE_TYPE_DRILLDOWN_VIEW);
  g_clear_object (&self->selection);
  g_clear_object (&self->roots);
  g_clear_pointer (&self->groups, g_ptr_array_unref);
  g_clear_pointer (&self->compared, g_hash_table_unref);
  G_OBJECT_CLASS (tide_drilldown_view_parent_class)->dispose (object);
}

static void
tide_drilldown_view_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  TideDrilldownView *self = TIDE_DRILLDOWN_VIEW (object);

  switch (prop_id)
    {
    case PROP_SELECTED_NODE:
      g_value_set_object (value, tide_drilldown_view_get_selected_node (self));
      break;
    case PROP_HIDE_PLUMBING:
      g_value_set_boolean (value, self->hide_plumbing);
      break;
    case PROP_GROUPS:
      g_value_set_boxed (value, self->groups);
      break;
    case PROP_COMPARED:
      g_value_set_boxed (value, self->compared);
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_drilldown_view_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  TideDrilldownView *self = TIDE_DRILLDOWN_VIEW (object);

  switch (prop_id)
    {
    case PROP_HIDE_PLUMBING:
      tide_drilldown_view_set_hide_plumbing (self, g_value_get_boolean (value));
      break;
    case PROP_GROUPS:
      tide_drilldown_view_set_groups (self, g_value_get_boxed (value));
      break;
    case PROP_COMPARED:
      tide_drilldown_view_set_compared (self, g_value_get_boxed (value));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_drilldown_view_class_init (TideDrilldownViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tide_drilldown_view_dispose;
  object_class->get_property = tide_drilldown_view_get_property;
  object_class->set_property = tide_drilldown_view_set_property;

  properties[PROP_SELECTED_NODE] =
    g_param_spec_object ("selected-node", NULL, NULL, TIDE_TYPE_DRILLDOWN_NODE,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_HIDE_PLUMBING] =
    g_param_spec_boolean ("hide-plumbing", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* TideGroup*: the rows (a TideRetainedQuery's, bound in the window's
   * template), or NULL. */
  properties[PROP_GROUPS] =
    g_param_spec_boxed ("groups", NULL, NULL, G_TYPE_PTR_ARRAY,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* What a compared run retained of each row: tide_drilldown_view_set_compared(). */
  properties[PROP_COMPARED] =
    g_param_spec_boxed ("compared", NULL, NULL, G_TYPE_HASH_TABLE,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "drilldown");

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/tidemark/Tidemark/ui/tide-drilldown-view.ui");
  gtk_widget_class_bind_template_child (widget_class, TideDrilldownView, box);
  gtk_widget_class_bind_template_child (widget_class, TideDrilldownView, hide_plumbing_check);
  gtk_widget_class_bind_template_child (widget_class, TideDrilldownView, scroller);
  gtk_widget_class_bind_template_child (widget_class, TideDrilldownView, column_view);
  for (guint i = 0; i < N_COLUMNS; i++)
    gtk_widget_class_bind_template_child_full (widget_class, column_ids[i], FALSE,
                                               G_STRUCT_OFFSET (TideDrilldownView, columns) +
                                               i * sizeof (GtkColumnViewColumn *));
  gtk_widget_class_bind_template_callback (widget_class, tide_drilldown_view_name_setup_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_drilldown_view_name_bind_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_drilldown_view_number_setup_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_drilldown_view_number_bind_cb);
}

static void
show_compared_columns (TideDrilldownView *self)
{
  gtk_column_view_column_set_visible (self->columns[COLUMN_COMPARED], self->compared != NULL);
  gtk_column_view_column_set_visible (self->columns[COLUMN_DIFFERENCE], self->compared != NULL);
}

/* A GtkTreeListModel keeps its root for life: each selection gets a new tree. */
static void
set_roots (TideDrilldownView *self,
           GListModel        *roots)
{
  GtkTreeListRowSorter *row_sorter;
  g_autoptr(GtkSortListModel) sorted = NULL;

  g_set_object (&self->roots, roots);
  self->tree = gtk_tree_list_model_new (g_object_ref (roots), FALSE, FALSE,
                                        create_children_cb, self, NULL);
  row_sorter = gtk_tree_list_row_sorter_new (g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  sorted = gtk_sort_list_model_new (G_LIST_MODEL (self->tree), GTK_SORTER (row_sorter));
  gtk_single_selection_set_model (self->selection, G_LIST_MODEL (sorted));
}

static void
tide_drilldown_view_init (TideDrilldownView *self)
{
  g_autoptr(GListModel) empty = G_LIST_MODEL (g_list_store_new (TIDE_TYPE_DRILLDOWN_NODE));

  gtk_widget_init_template (GTK_WIDGET (self));
  add_sorters (self);

  self->selection = gtk_single_selection_new (NULL);
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  set_roots (self, empty);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  g_signal_connect_object (self->selection, "notify::selected",
                           G_CALLBACK (tide_drilldown_view_selection_changed_cb), self,
                           G_CONNECT_SWAPPED);

  gtk_column_view_sort_by_column (self->column_view, self->columns[COLUMN_BYTES],
                                  GTK_SORT_DESCENDING);
  show_compared_columns (self);
}

GtkWidget *
tide_drilldown_view_new (void)
{
  return g_object_new (TIDE_TYPE_DRILLDOWN_VIEW, NULL);
}

/**
 * tide_drilldown_view_set_groups:
 * @groups: (element-type TideGroup) (nullable) (transfer none): from
 *   tide_drilldown_retained(); kept for export
 */
void
tide_drilldown_view_set_groups (TideDrilldownView *self,
                                GPtrArray         *groups)
{
  g_autoptr(GListModel) roots = NULL;
  GtkTreeListRow *first;

  g_return_if_fail (TIDE_IS_DRILLDOWN_VIEW (self));

  g_clear_pointer (&self->groups, g_ptr_array_unref);
  self->groups = groups ? g_ptr_array_ref (groups) : NULL;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GROUPS]);
  roots = tide_drilldown_build (groups);
  if (self->compared != NULL)
    tide_drilldown_compare (roots, self->compared);
  set_roots (self, roots);
  first = gtk_tree_list_model_get_row (self->tree, 0);
  if (first != NULL)
    {
      g_autoptr(TideDrilldownNode) node = gtk_tree_list_row_get_item (first);

      if (tide_drilldown_node_get_kind (node) == TIDE_DRILLDOWN_SCOPE)
        gtk_tree_list_row_set_expanded (first, TRUE);
    }
  g_clear_object (&first);
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
}

/**
 * tide_drilldown_view_set_compared:
 * @compared: (nullable) (transfer none): what a compared run's aligned
 *   step retained, from tide_trace_diff_step_retained(); %NULL: none
 *
 * Shows, for each row, what the compared run retained of it and the
 * difference.
 */
void
tide_drilldown_view_set_compared (TideDrilldownView *self,
                                  GHashTable        *compared)
{
  g_autoptr(GPtrArray) groups = NULL;

  g_return_if_fail (TIDE_IS_DRILLDOWN_VIEW (self));

  if (compared == self->compared)
    return;
  g_clear_pointer (&self->compared, g_hash_table_unref);
  self->compared = compared ? g_hash_table_ref (compared) : NULL;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPARED]);
  show_compared_columns (self);
  groups = self->groups ? g_ptr_array_ref (self->groups) : NULL;
  tide_drilldown_view_set_groups (self, groups);
}

/* Returns: (transfer none) (nullable): the groups shown */
GPtrArray *
tide_drilldown_view_get_groups (TideDrilldownView *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_VIEW (self), NULL);
  return self->groups;
}

/**
 * tide_drilldown_view_get_model:
 *
 * Returns: (transfer none): the rows as shown, #GtkTreeListRow items
 */
GListModel *
tide_drilldown_view_get_model (TideDrilldownView *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_VIEW (self), NULL);
  return G_LIST_MODEL (self->selection);
}

/* Returns: (transfer none) (nullable): the node of the selected row */
TideDrilldownNode *
tide_drilldown_view_get_selected_node (TideDrilldownView *self)
{
  GtkTreeListRow *row;

  g_return_val_if_fail (TIDE_IS_DRILLDOWN_VIEW (self), NULL);

  row = gtk_single_selection_get_selected_item (self->selection);
  if (row == NULL)
    return NULL;
  /* The row holds the node; the reference we are given is dropped at once. */
  {
    TideDrilldownNode *node = gtk_tree_list_row_get_item (row);
    g_object_unref (node);
    return node;
  }
}

/* Rebuilds the tree (a GtkTreeListModel cannot change how it makes
 * children), so rows open before are closed again. */
void
tide_drilldown_view_set_hide_plumbing (TideDrilldownView *self,
                                       gboolean           hide)
{
  g_autoptr(GListModel) roots = NULL;

  g_return_if_fail (TIDE_IS_DRILLDOWN_VIEW (self));

  hide = !!hide;
  if (self->hide_plumbing == hide)
    return;
  self->hide_plumbing = hide;
  roots = g_object_ref (self->roots);
  set_roots (self, roots);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HIDE_PLUMBING]);
}

gboolean
tide_drilldown_view_get_hide_plumbing (TideDrilldownView *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_VIEW (self), FALSE);
  return self->hide_plumbing;
}
