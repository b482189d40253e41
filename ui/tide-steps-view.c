/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideStepsView: the steps table (GtkColumnView), one row per step of the
 * chosen process, every column sortable.  Its selection is a step number,
 * shared with the timeline through the "selected-step" property.
 *
 * With another run compared (the "comparison" property, which the window
 * binds to its session's), two more columns show the compared run's heap
 * change and retained bytes less this run's, step by aligned step: the
 * DIFF columns of `tidemark diff --steps`, from the same TideTraceDiff.
 */
#include "config.h"

#include "tide-steps-view.h"

#include "tide-report-format.h"
#include "tide-saturate.h"
#include "tide-steps-view-row.h"
#include "tide-trace-tables.h"

struct _TideStepsView
{
  GtkWidget           parent_instance;

  /* Owned references: selection owns sorted, which owns filtered... */
  GtkSingleSelection *selection;
  GtkSortListModel   *sorted;
  GtkFilterListModel *filtered;
  GListStore         *store;

  /* Template widgets */
  GtkWidget          *scroller;
  GtkColumnView      *column_view;
  GtkColumnViewColumn *columns[TIDE_STEPS_N_COLUMNS];

  GHashTable         *compared;       /* this run's step number -> the compared
                                        * run's TideStepRow: shallow, no strings */
  gint64              compared_process_id; /* whose steps those numbers are */
  gint64              process_id;
  gint                selected_step;
};

G_DEFINE_FINAL_TYPE (TideStepsView, tide_steps_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_PROCESS_ID,
  PROP_SELECTED_STEP,
  PROP_COMPARISON,
  PROP_TABLES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* The template's column ids, by TideStepsColumn. */
static const char *column_ids[TIDE_STEPS_N_COLUMNS] = {
  "step_column", "duration_column", "host_change_column", "device_change_column",
  "retained_column", "transfers_column", "ended_column", "heap_diff_column",
  "retained_diff_column",
};

/* The compared run's value less this run's (0 without a compared step,
 * which sorts it with the steps that did not change). */
static gint64
compared_difference (TideStepsColumn column,
                     gpointer        item)
{
  const TideStepRow *row = tide_steps_view_row_get_step (item);
  const TideStepRow *other = tide_steps_view_row_get_compared (item);

  if (other == NULL)
    return 0;
  if (column == TIDE_STEPS_COLUMN_HEAP_DIFF)
    return tide_sat_sub (other->heap_delta, row->heap_delta);
  return tide_sat_sub (other->retained_bytes, row->retained_bytes);
}

gint64
tide_steps_view_column_value (TideStepsColumn column,
                              gpointer        item)
{
  const TideStepRow *row = tide_steps_view_row_get_step (item);

  switch (column)
    {
    case TIDE_STEPS_COLUMN_STEP: return row->number;
    case TIDE_STEPS_COLUMN_DURATION: return row->duration_ns;
    case TIDE_STEPS_COLUMN_HOST_CHANGE: return row->rss_delta;
    case TIDE_STEPS_COLUMN_DEVICE_CHANGE: return row->device_delta;
    case TIDE_STEPS_COLUMN_RETAINED: return row->retained_bytes;
    case TIDE_STEPS_COLUMN_TRANSFERS: return tide_steps_view_row_get_transfers (item);
    case TIDE_STEPS_COLUMN_ENDED: return tide_steps_view_row_get_deaths (item);
    case TIDE_STEPS_COLUMN_HEAP_DIFF:
    case TIDE_STEPS_COLUMN_RETAINED_DIFF:
      return compared_difference (column, item);
    case TIDE_STEPS_N_COLUMNS: default: break;
    }
  g_return_val_if_reached (0);
}

/* FALSE where the cell has no number: a difference column of a step
 * that the compared run lacks. */
gboolean
tide_steps_view_column_known (TideStepsColumn column,
                              gpointer        item)
{
  if (column != TIDE_STEPS_COLUMN_HEAP_DIFF && column != TIDE_STEPS_COLUMN_RETAINED_DIFF)
    return TRUE;
  return tide_steps_view_row_get_compared (item) != NULL;
}

static char *
format_cell (TideStepsColumn  column,
             gpointer         item)
{
  gint64 value = tide_steps_view_column_value (column, item);

  if (!tide_steps_view_column_known (column, item))
    return g_strdup ("–");
  switch (column)
    {
    case TIDE_STEPS_COLUMN_DURATION:
      return g_strdup_printf ("%.1f ms", value / 1e6);
    case TIDE_STEPS_COLUMN_HOST_CHANGE:
    case TIDE_STEPS_COLUMN_DEVICE_CHANGE:
    case TIDE_STEPS_COLUMN_HEAP_DIFF:
    case TIDE_STEPS_COLUMN_RETAINED_DIFF:
      return tide_format_delta (value);
    case TIDE_STEPS_COLUMN_RETAINED:
      return tide_format_bytes (value);
    case TIDE_STEPS_COLUMN_ENDED:
      /* Blank in the steps where nothing died: the ones that matter stand out. */
      return value > 0 ? g_strdup_printf ("%" G_GINT64_FORMAT " died", value) : g_strdup ("");
    case TIDE_STEPS_COLUMN_STEP:
    case TIDE_STEPS_COLUMN_TRANSFERS:
    case TIDE_STEPS_N_COLUMNS:
    default:
      return g_strdup_printf ("%" G_GINT64_FORMAT, value);
    }
}

static void
tide_steps_view_cell_setup_cb (GtkSignalListItemFactory *factory,
                               GtkListItem              *item,
                               TideStepsView            *self)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 1.0);
  gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

/* The column whose cells @factory makes. */
static TideStepsColumn
column_of_factory (TideStepsView      *self,
                   GtkListItemFactory *factory)
{
  for (guint i = 0; i < TIDE_STEPS_N_COLUMNS; i++)
    if (gtk_column_view_column_get_factory (self->columns[i]) == factory)
      return i;
  g_return_val_if_reached (TIDE_STEPS_COLUMN_STEP);
}

static void
tide_steps_view_cell_bind_cb (GtkSignalListItemFactory *factory,
                              GtkListItem              *item,
                              TideStepsView            *self)
{
  TideStepsColumn column = column_of_factory (self, GTK_LIST_ITEM_FACTORY (factory));
  g_autofree char *text = format_cell (column, gtk_list_item_get_item (item));

  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

static int
compare_column_cb (gconstpointer a,
                   gconstpointer b,
                   gpointer      data)
{
  gint64 x = tide_steps_view_column_value (GPOINTER_TO_INT (data), (gpointer) a);
  gint64 y = tide_steps_view_column_value (GPOINTER_TO_INT (data), (gpointer) b);

  return (x > y) - (x < y);
}

static gboolean
filter_process_cb (gpointer item,
                   gpointer data)
{
  TideStepsView *self = data;

  return self->process_id == 0 ||
         tide_steps_view_row_get_step (item)->process.id == self->process_id;
}

/* Comparing is code: each column of the template gets its sorter here. */
static void
add_sorters (TideStepsView *self)
{
  for (guint i = 0; i < TIDE_STEPS_N_COLUMNS; i++)
    {
      g_autoptr(GtkCustomSorter) sorter = gtk_custom_sorter_new (compare_column_cb,
                                                                 GINT_TO_POINTER (i), NULL);

      gtk_column_view_column_set_sorter (self->columns[i], GTK_SORTER (sorter));
    }
}

/* Only "selection-changed" is the user's (or sync_selection's) choice of
 * a row: a list that changes under the selection emits "items-changed"
 * alone.  No row chosen says nothing: the step may be filtered out, or
 * sync_selection cleared the row of a step this process does not have. */
static void
tide_steps_view_selection_changed_cb (TideStepsView *self)
{
  TideStepsViewRow *row = gtk_single_selection_get_selected_item (self->selection);
  gint number = row ? tide_steps_view_row_get_step (row)->number : 0;

  g_assert (TIDE_IS_STEPS_VIEW (self));

  if (row == NULL || number == self->selected_step)
    return;
  self->selected_step = number;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_STEP]);
}

/* Puts the selection on the row of selected_step; the selection's echo
 * names the same step, or none, and so changes nothing. */
static void
sync_selection (TideStepsView *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->selection));
  guint position = GTK_INVALID_LIST_POSITION;

  for (guint i = 0; i < n && self->selected_step > 0; i++)
    {
      g_autoptr(TideStepsViewRow) row = g_list_model_get_item (G_LIST_MODEL (self->selection), i);

      if (tide_steps_view_row_get_step (row)->number == self->selected_step)
        {
          position = i;
          break;
        }
    }
  gtk_single_selection_set_selected (self->selection, position);
}

static void
show_difference_columns (TideStepsView *self,
                         gboolean       visible)
{
  gtk_column_view_column_set_visible (self->columns[TIDE_STEPS_COLUMN_HEAP_DIFF], visible);
  gtk_column_view_column_set_visible (self->columns[TIDE_STEPS_COLUMN_RETAINED_DIFF], visible);
}

/* The compared run's step aligned with @row's, or NULL. */
static const TideStepRow *
find_compared (TideStepsView     *self,
               const TideStepRow *row)
{
  if (self->compared == NULL || row->process.id != self->compared_process_id)
    return NULL;
  return g_hash_table_lookup (self->compared, GINT_TO_POINTER (row->number));
}

static void
tide_steps_view_dispose (GObject *object)
{
  TideStepsView *self = TIDE_STEPS_VIEW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), TIDE_TYPE_STEPS_VIEW);
  g_clear_object (&self->selection);
  g_clear_pointer (&self->compared, g_hash_table_unref);
  G_OBJECT_CLASS (tide_steps_view_parent_class)->dispose (object);
}

static void
tide_steps_view_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  TideStepsView *self = TIDE_STEPS_VIEW (object);

  switch (prop_id)
    {
    case PROP_PROCESS_ID: g_value_set_int64 (value, self->process_id); break;
    case PROP_SELECTED_STEP: g_value_set_int (value, self->selected_step); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void set_tables (TideStepsView   *self,
                        TideTraceTables *tables);

static void
tide_steps_view_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  TideStepsView *self = TIDE_STEPS_VIEW (object);

  switch (prop_id)
    {
    case PROP_PROCESS_ID: tide_steps_view_set_process_id (self, g_value_get_int64 (value)); break;
    case PROP_SELECTED_STEP: tide_steps_view_set_selected_step (self, g_value_get_int (value)); break;
    case PROP_COMPARISON: tide_steps_view_set_comparison (self, g_value_get_pointer (value)); break;
    case PROP_TABLES: set_tables (self, g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_steps_view_class_init (TideStepsViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = tide_steps_view_dispose;
  object_class->get_property = tide_steps_view_get_property;
  object_class->set_property = tide_steps_view_set_property;

  properties[PROP_PROCESS_ID] = g_param_spec_int64 ("process-id", NULL, NULL, 0, G_MAXINT64, 0, rw);
  properties[PROP_SELECTED_STEP] = g_param_spec_int ("selected-step", NULL, NULL, 0, G_MAXINT, 0, rw);
  /* A TideTraceDiff, or NULL: read when set, not kept, so it cannot be read
   * back (tide_steps_view_set_comparison()). */
  properties[PROP_COMPARISON] = g_param_spec_pointer ("comparison", NULL, NULL,
                                                      G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS);
  /* The session's tables: their steps, with the transfers and the deaths
   * counted in each, are the rows.  Not kept, so not read back. */
  properties[PROP_TABLES] = g_param_spec_object ("tables", NULL, NULL, TIDE_TYPE_TRACE_TABLES,
                                                 G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "stepstable");

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/tidemark/Tidemark/ui/tide-steps-view.ui");
  gtk_widget_class_bind_template_child (widget_class, TideStepsView, scroller);
  gtk_widget_class_bind_template_child (widget_class, TideStepsView, column_view);
  for (guint i = 0; i < TIDE_STEPS_N_COLUMNS; i++)
    gtk_widget_class_bind_template_child_full (widget_class, column_ids[i], FALSE,
                                               G_STRUCT_OFFSET (TideStepsView, columns) +
                                               i * sizeof (GtkColumnViewColumn *));
  gtk_widget_class_bind_template_callback (widget_class, tide_steps_view_cell_setup_cb);
  gtk_widget_class_bind_template_callback (widget_class, tide_steps_view_cell_bind_cb);
}

static void
tide_steps_view_init (TideStepsView *self)
{
  GtkCustomFilter *filter = gtk_custom_filter_new (filter_process_cb, self, NULL);

  gtk_widget_init_template (GTK_WIDGET (self));
  add_sorters (self);
  self->store = g_list_store_new (TIDE_TYPE_STEPS_VIEW_ROW);
  self->filtered = gtk_filter_list_model_new (G_LIST_MODEL (self->store), GTK_FILTER (filter));
  self->sorted = gtk_sort_list_model_new (G_LIST_MODEL (self->filtered),
                                          g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  self->selection = gtk_single_selection_new (G_LIST_MODEL (self->sorted));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, FALSE);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  g_signal_connect_object (self->selection, "selection-changed",
                           G_CALLBACK (tide_steps_view_selection_changed_cb), self,
                           G_CONNECT_SWAPPED);

  gtk_column_view_sort_by_column (self->column_view, self->columns[TIDE_STEPS_COLUMN_STEP],
                                  GTK_SORT_ASCENDING);
  show_difference_columns (self, FALSE);
}

GtkWidget *
tide_steps_view_new (void)
{
  return g_object_new (TIDE_TYPE_STEPS_VIEW, NULL);
}

static guint
count_transfers (const TideStepRow *row,
                 GArray            *transfers)
{
  guint n = 0;

  for (guint i = 0; transfers != NULL && i < transfers->len; i++)
    {
      const TideTransferMark *mark = &g_array_index (transfers, TideTransferMark, i);

      if (mark->process_id == row->process.id && mark->start_ns > row->start_ns &&
          mark->start_ns <= row->start_ns + row->duration_ns)
        n++;
    }
  return n;
}

/* Deaths (end times, from the trace's start) within @row's step. */
static guint
count_deaths (const TideStepRow *row,
              GArray            *deaths)
{
  guint n = 0;

  for (guint i = 0; deaths != NULL && i < deaths->len; i++)
    {
      gint64 ns = g_array_index (deaths, gint64, i);

      if (ns > row->start_ns && ns <= row->start_ns + row->duration_ns)
        n++;
    }
  return n;
}

/* The rows of a trace's tables (the session's), or none: a row per step,
 * with the transfers that started in it and the processes of the job
 * that died in it counted. */
static void
set_tables (TideStepsView   *self,
            TideTraceTables *tables)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  GPtrArray *rows = tables ? tide_trace_tables_get_steps (tables) : NULL;
  GArray *transfers = tables ? tide_trace_tables_get_transfers (tables) : NULL;
  GArray *deaths = tables ? tide_trace_tables_get_deaths (tables) : NULL;

  for (guint i = 0; rows != NULL && i < rows->len; i++)
    {
      const TideStepRow *row = g_ptr_array_index (rows, i);
      TideStepsViewRow *item = tide_steps_view_row_new (row, count_transfers (row, transfers));

      tide_steps_view_row_set_deaths (item, count_deaths (row, deaths));

      tide_steps_view_row_set_compared (item, find_compared (self, row));
      g_ptr_array_add (items, item);
    }
  g_list_store_splice (self->store, 0, g_list_model_get_n_items (G_LIST_MODEL (self->store)),
                       items->pdata, items->len);
  sync_selection (self);
}

/* Sets every row's compared step again, and has the list say so. */
static void
refresh_compared (TideStepsView *self)
{
  GListModel *store = G_LIST_MODEL (self->store);
  guint n = g_list_model_get_n_items (store);
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < n; i++)
    {
      TideStepsViewRow *item = g_list_model_get_item (store, i);

      tide_steps_view_row_set_compared (item, find_compared (self, tide_steps_view_row_get_step (item)));
      g_ptr_array_add (items, item);
    }
  g_list_store_splice (self->store, 0, n, items->pdata, items->len);
  sync_selection (self);
}

/**
 * tide_steps_view_set_comparison:
 * @diff: (nullable): this run's process against a compared run; read here,
 *   not kept; %NULL hides the difference columns
 */
void
tide_steps_view_set_comparison (TideStepsView       *self,
                                const TideTraceDiff *diff)
{
  g_return_if_fail (TIDE_IS_STEPS_VIEW (self));

  g_clear_pointer (&self->compared, g_hash_table_unref);
  if (diff != NULL)
    {
      self->compared = g_hash_table_new_full (NULL, NULL, NULL, g_free);
      self->compared_process_id = diff->before_process->id;
      for (guint i = 0; i < diff->steps->len; i++)
        {
          const TideDiffStep *s = g_ptr_array_index (diff->steps, i);
          TideStepRow *after;

          if (s->before == NULL || s->after == NULL)
            continue;
          after = g_memdup2 (s->after, sizeof *s->after);
          after->label = after->process.role = NULL;
          after->devices = NULL;
          g_hash_table_insert (self->compared, GINT_TO_POINTER (s->before->number), after);
        }
    }
  show_difference_columns (self, diff != NULL);
  refresh_compared (self);
}

gint64
tide_steps_view_get_process_id (TideStepsView *self)
{
  g_return_val_if_fail (TIDE_IS_STEPS_VIEW (self), 0);
  return self->process_id;
}

/* 0 shows the steps of every process. */
void
tide_steps_view_set_process_id (TideStepsView *self,
                                gint64         process_id)
{
  g_return_if_fail (TIDE_IS_STEPS_VIEW (self));

  if (self->process_id == process_id)
    return;
  self->process_id = process_id;
  gtk_filter_changed (gtk_filter_list_model_get_filter (self->filtered), GTK_FILTER_CHANGE_DIFFERENT);
  sync_selection (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROCESS_ID]);
}

gint
tide_steps_view_get_selected_step (TideStepsView *self)
{
  g_return_val_if_fail (TIDE_IS_STEPS_VIEW (self), 0);
  return self->selected_step;
}

void
tide_steps_view_set_selected_step (TideStepsView *self,
                                   gint           number)
{
  g_return_if_fail (TIDE_IS_STEPS_VIEW (self));

  if (self->selected_step == number)
    return;
  self->selected_step = number;
  sync_selection (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_STEP]);
}

/**
 * tide_steps_view_get_model:
 *
 * Returns: (transfer none): the rows as shown (filtered and sorted)
 */
GListModel *
tide_steps_view_get_model (TideStepsView *self)
{
  g_return_val_if_fail (TIDE_IS_STEPS_VIEW (self), NULL);
  return G_LIST_MODEL (self->selection);
}

void
tide_steps_view_sort_by (TideStepsView   *self,
                         TideStepsColumn  column,
                         GtkSortType      order)
{
  g_return_if_fail (TIDE_IS_STEPS_VIEW (self));
  g_return_if_fail (column < TIDE_STEPS_N_COLUMNS);

  gtk_column_view_sort_by_column (self->column_view, self->columns[column], order);
}
