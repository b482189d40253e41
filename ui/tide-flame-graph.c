/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideFlameGraph: the drill-down's stacks merged from the outermost frame
 * (main) at the bottom to the allocating frame at the top, each frame as
 * wide as the bytes retained below it.  Clicking a frame zooms to it (its
 * ancestors stay, full width, dimmed); clicking the zoomed frame again goes
 * back one level.  A search highlights matching frames and dims the rest.
 *
 * Frames are coloured by kind: Python blue, native warm, allocator and
 * runtime plumbing grey (and left out while hide-plumbing is set, as the
 * drill-down does).  PyTorch's stacks are 40 to 70 frames deep, far
 * taller than the pane, so the graph scrolls itself (GtkScrollable): it
 * is as tall as the frames it shows at its width, the root stays on the
 * bottom row, and a new selection is scrolled into view with a few of
 * its callers below it.  Opening scrolled to the top would show empty
 * rows above the deepest frame, or sixty rows of interpreter start-up.
 *
 * The rectangles are drawn, in content coordinates, into a cached render
 * node, rebuilt when the data, zoom, search, size or colours change;
 * scrolling only translates it, and hover only redraws an outline on top
 * (sysprof's flame graph does the same).
 */
#include "config.h"

#include "tide-flame-graph.h"

#include <string.h>

#include "tide-plumbing.h"
#include "tide-report-format.h"
#include "tide-schema.h"

#define ROW_HEIGHT    20
#define MIN_WIDTH_PX  0.5
/* Callers kept in view below a frame scrolled to. */
#define CALLER_ROWS   4

typedef struct _FlameNode FlameNode;
struct _FlameNode
{
  FlameNode *parent;
  GPtrArray *children;    /* FlameNode*, largest first */
  char      *label;
  TideFrame  frame;       /* strings owned */
  gint64     bytes;
  guint      depth;
  guint      matches : 1;
};

struct _TideFlameGraph
{
  GtkWidget      parent_instance;

  GPtrArray     *groups;       /* TideGroup*: rebuilt from when hide-plumbing changes */
  FlameNode     *root;
  FlameNode     *zoom;         /* borrowed from root's tree */
  FlameNode     *selected;     /* borrowed */
  FlameNode     *hover;        /* borrowed */
  GskRenderNode *rendered;     /* content coordinates */
  GtkAdjustment *hadjustment;
  GtkAdjustment *vadjustment;
  guint          hscroll_policy;
  guint          vscroll_policy;
  double         content_height;
  char          *search;
  guint          n_matches;
  gboolean       hide_plumbing;
  gboolean       scroll_to_selected;
  GdkRGBA        accent;
  GdkRGBA        text;
};

G_DEFINE_FINAL_TYPE_WITH_CODE (TideFlameGraph, tide_flame_graph, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (GTK_TYPE_SCROLLABLE, NULL))

enum {
  PROP_0,
  PROP_SEARCH,
  PROP_SELECTED_BYTES,
  PROP_HIDE_PLUMBING,
  PROP_GROUPS,
  N_PROPS,
  /* GtkScrollable's */
  PROP_HADJUSTMENT = N_PROPS,
  PROP_VADJUSTMENT,
  PROP_HSCROLL_POLICY,
  PROP_VSCROLL_POLICY,
};

static GParamSpec *properties[N_PROPS];

/* ---- the tree ----------------------------------------------------------------- */

static void
flame_node_free (FlameNode *node)
{
  g_clear_pointer (&node->children, g_ptr_array_unref);
  g_free (node->label);
  tide_frame_clear (&node->frame);
  g_free (node);
}

static FlameNode *
flame_node_new (FlameNode       *parent,
                const char      *label,
                const TideFrame *frame)
{
  FlameNode *node = g_new0 (FlameNode, 1);

  node->parent = parent;
  node->label = g_strdup (label);
  node->children = g_ptr_array_new_with_free_func ((GDestroyNotify) flame_node_free);
  node->depth = parent ? parent->depth + 1 : 0;
  if (frame != NULL)
    tide_frame_copy_into (&node->frame, frame);
  return node;
}

static FlameNode *
flame_node_child (FlameNode       *parent,
                  const TideFrame *frame)
{
  g_autofree char *label = tide_frame_describe (frame);
  FlameNode *child;

  for (guint i = 0; i < parent->children->len; i++)
    {
      child = g_ptr_array_index (parent->children, i);
      if (g_str_equal (child->label, label))
        return child;
    }
  child = flame_node_new (parent, label, frame);
  g_ptr_array_add (parent->children, child);
  return child;
}

static gint
compare_nodes (gconstpointer a,
               gconstpointer b)
{
  const FlameNode *x = *(FlameNode **) a, *y = *(FlameNode **) b;

  if (x->bytes != y->bytes)
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
  return g_strcmp0 (x->label, y->label);
}

static void
flame_node_sort (FlameNode *node)
{
  g_ptr_array_sort (node->children, compare_nodes);
  for (guint i = 0; i < node->children->len; i++)
    flame_node_sort (g_ptr_array_index (node->children, i));
}

static gboolean
frame_is_hidden (const TideFrame *frame,
                 gboolean         hide_plumbing)
{
  return hide_plumbing && frame->plumbing;
}

/* The node of the headline of @groups' largest stack, or NULL.  The
 * headline is never plumbing unless the whole stack is; then it is the
 * innermost frame shown. */
static FlameNode *
flame_tree_find_headline (FlameNode *root,
                          GPtrArray *groups,
                          gboolean   hide_plumbing)
{
  const TideGroup *largest = NULL;
  FlameNode *node = root;
  gint h;

  for (guint i = 0; groups != NULL && i < groups->len; i++)
    {
      const TideGroup *group = g_ptr_array_index (groups, i);

      if (largest == NULL || group->bytes > largest->bytes)
        largest = group;
    }
  if (largest == NULL || (h = tide_frames_find_headline (largest->frames)) < 0)
    return NULL;
  for (guint j = largest->frames->len; j-- > (guint) h;)
    {
      const TideFrame *frame = g_ptr_array_index (largest->frames, j);

      if (!frame_is_hidden (frame, hide_plumbing))
        node = flame_node_child (node, frame);
    }
  return node != root ? node : NULL;
}

static FlameNode *
flame_tree_build (GPtrArray *groups,
                  gboolean   hide_plumbing)
{
  FlameNode *root = flame_node_new (NULL, "all", NULL);

  for (guint i = 0; groups != NULL && i < groups->len; i++)
    {
      const TideGroup *group = g_ptr_array_index (groups, i);
      FlameNode *node = root;

      root->bytes += group->bytes;
      /* Frames come innermost first; the graph grows from the outermost. */
      for (guint j = group->frames->len; j-- > 0;)
        {
          const TideFrame *frame = g_ptr_array_index (group->frames, j);

          if (frame_is_hidden (frame, hide_plumbing))
            continue;
          node = flame_node_child (node, frame);
          node->bytes += group->bytes;
        }
    }
  flame_node_sort (root);
  return root;
}

static guint
flame_node_mark (FlameNode  *node,
                 const char *search)
{
  guint n = 0;

  node->matches = search != NULL && *search != '\0' && node->parent != NULL &&
                  strstr (node->label, search) != NULL;
  n += node->matches;
  for (guint i = 0; i < node->children->len; i++)
    n += flame_node_mark (g_ptr_array_index (node->children, i), search);
  return n;
}

static gboolean
flame_node_is_ancestor (const FlameNode *ancestor,
                        const FlameNode *node)
{
  for (; node != NULL; node = node->parent)
    if (node == ancestor)
      return TRUE;
  return FALSE;
}

/* ---- geometry ------------------------------------------------------------------ */

typedef gboolean (*FlameVisit) (FlameNode             *node,
                                const graphene_rect_t *rect,
                                gboolean               outside_zoom,
                                gpointer               data);

/* The top of @depth's row, in content coordinates: the root's row is the
 * bottom one. */
static double
row_top (TideFlameGraph *self,
         guint           depth)
{
  return self->content_height - (depth + 1.0) * ROW_HEIGHT;
}

/* Calls visit on every frame wide enough to see, with its rectangle in
 * content coordinates: the zoom frame and its ancestors span the width,
 * the zoom frame's descendants split it by bytes.  Returns TRUE when
 * visit stopped it. */
static gboolean
visit_node (TideFlameGraph *self,
            FlameNode      *node,
            double          x,
            double          width,
            FlameVisit      visit,
            gpointer        data)
{
  graphene_rect_t rect;
  double child_x = x;

  if (width < MIN_WIDTH_PX)
    return FALSE;
  graphene_rect_init (&rect, x, row_top (self, node->depth), width, ROW_HEIGHT - 1);
  if (visit (node, &rect, node->depth < self->zoom->depth, data))
    return TRUE;
  for (guint i = 0; i < node->children->len; i++)
    {
      FlameNode *child = g_ptr_array_index (node->children, i);
      double child_width = node->bytes > 0 ? width * child->bytes / node->bytes : 0;

      if (node->depth < self->zoom->depth)
        {
          if (!flame_node_is_ancestor (child, self->zoom))
            continue;
          child_width = width;
        }
      if (visit_node (self, child, child_x, child_width, visit, data))
        return TRUE;
      child_x += child_width;
    }
  return FALSE;
}

static void
foreach_visible_at (TideFlameGraph *self,
                    int             width,
                    FlameVisit      visit,
                    gpointer        data)
{
  if (self->root != NULL && self->root->bytes > 0)
    visit_node (self, self->root, 0, width, visit, data);
}

static void
foreach_visible (TideFlameGraph *self,
                 FlameVisit      visit,
                 gpointer        data)
{
  foreach_visible_at (self, gtk_widget_get_width (GTK_WIDGET (self)), visit, data);
}

static gboolean
deepest_visit (FlameNode             *node,
               const graphene_rect_t *rect,
               gboolean               outside_zoom,
               gpointer               data)
{
  guint *deepest = data;

  *deepest = MAX (*deepest, node->depth);
  return FALSE;
}

/* Rows of frames wide enough to see at @width. */
static guint
count_visible_rows (TideFlameGraph *self,
                    int             width)
{
  guint deepest = 0;

  if (self->root == NULL || self->root->bytes <= 0)
    return 0;
  foreach_visible_at (self, width, deepest_visit, &deepest);
  return deepest + 1;
}

static double
scroll_offset (TideFlameGraph *self)
{
  return self->vadjustment ? gtk_adjustment_get_value (self->vadjustment) : 0;
}

typedef struct
{
  double     x, y;
  FlameNode *found;
} Lookup;

static gboolean
lookup_visit (FlameNode             *node,
              const graphene_rect_t *rect,
              gboolean               outside_zoom,
              gpointer               data)
{
  Lookup *lookup = data;

  if (!graphene_rect_contains_point (rect, &GRAPHENE_POINT_INIT (lookup->x, lookup->y)))
    return FALSE;
  lookup->found = node;
  return TRUE;
}

/* The frame under (@x, @y), in widget coordinates. */
static FlameNode *
lookup_node (TideFlameGraph *self,
             double          x,
             double          y)
{
  Lookup lookup = { x, y + scroll_offset (self), NULL };

  foreach_visible (self, lookup_visit, &lookup);
  return lookup.found;
}

/* ---- drawing -------------------------------------------------------------------- */

/* Shades of one hue per kind of frame, picked by label so that a frame
 * keeps its colour across zooms and neighbours tell apart.  All light
 * enough for dark text. */
static const guint32 python_shades[] = { 0x62a0ea, 0x99c1f1, 0x7eb0ee, 0xb2d0f5 };
static const guint32 native_shades[] = { 0xffa348, 0xf8e45c, 0xffbe6f, 0xf9f06b, 0xfd9a5b };
static const guint32 plumbing_shades[] = { 0xc0bfbc, 0xdeddda, 0xcfcecb };
static const guint32 other_shades[] = { 0xdc8add, 0xe5a8e6 };  /* kernel, missing */

guint32
tide_flame_graph_frame_rgb (const TideFrame *frame,
                            const char      *label)
{
  const guint32 *shades = native_shades;
  guint n = G_N_ELEMENTS (native_shades);

  if (frame == NULL || frame->plumbing)
    shades = plumbing_shades, n = G_N_ELEMENTS (plumbing_shades);
  else if (frame->kind == TIDE_FRAME_PYTHON)
    shades = python_shades, n = G_N_ELEMENTS (python_shades);
  else if (frame->kind == TIDE_FRAME_KERNEL || frame->kind == TIDE_FRAME_MISSING)
    shades = other_shades, n = G_N_ELEMENTS (other_shades);
  return shades[g_str_hash (label) % n];
}

static void
node_color (const FlameNode *node,
            GdkRGBA         *color)
{
  guint32 rgb = tide_flame_graph_frame_rgb (node->parent ? &node->frame : NULL, node->label);

  *color = (GdkRGBA) { ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                       (rgb & 0xff) / 255.0, 1.0 };
}

typedef struct
{
  TideFlameGraph *self;
  GtkSnapshot    *snapshot;
  PangoLayout    *layout;
  gboolean        searching;
} Draw;

static void
draw_label (Draw                  *draw,
            const FlameNode       *node,
            const graphene_rect_t *rect)
{
  int text_width;

  if (rect->size.width < 24)
    return;
  pango_layout_set_text (draw->layout, node->label, -1);
  pango_layout_set_width (draw->layout, (int) (rect->size.width - 6) * PANGO_SCALE);
  pango_layout_get_pixel_size (draw->layout, &text_width, NULL);
  gtk_snapshot_save (draw->snapshot);
  gtk_snapshot_translate (draw->snapshot, &GRAPHENE_POINT_INIT (rect->origin.x + 3, rect->origin.y + 2));
  gtk_snapshot_append_layout (draw->snapshot, draw->layout, &(GdkRGBA) { 0.1, 0.1, 0.1, 1 });
  gtk_snapshot_restore (draw->snapshot);
}

static gboolean
draw_visit (FlameNode             *node,
            const graphene_rect_t *rect,
            gboolean               outside_zoom,
            gpointer               data)
{
  Draw *draw = data;
  GdkRGBA color;

  if (node->matches)
    color = draw->self->accent;
  else
    node_color (node, &color);
  if (outside_zoom || (draw->searching && !node->matches))
    color.alpha = 0.35;
  gtk_snapshot_append_color (draw->snapshot, &color, rect);
  draw_label (draw, node, rect);
  return FALSE;
}

static GskRenderNode *
render (TideFlameGraph *self)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  Draw draw = { self, snapshot, gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL),
                self->search != NULL && *self->search != '\0' };

  pango_layout_set_ellipsize (draw.layout, PANGO_ELLIPSIZE_END);
  foreach_visible (self, draw_visit, &draw);
  g_object_unref (draw.layout);
  return gtk_snapshot_free_to_node (snapshot);
}

/* The first visible frame that is @node, or else of @function, and where
 * it is drawn, in content coordinates. */
typedef struct
{
  const FlameNode *node;
  const char      *function;
  graphene_rect_t  area;
  gboolean         found;
} FindArea;

static gboolean
find_area_visit (FlameNode             *node,
                 const graphene_rect_t *rect,
                 gboolean               outside_zoom,
                 gpointer               data)
{
  FindArea *find = data;

  if (find->node != NULL ? node != find->node
                         : node->parent == NULL || g_strcmp0 (node->frame.function, find->function) != 0)
    return FALSE;
  find->area = *rect;
  find->found = TRUE;
  return TRUE;
}

static void
tide_flame_graph_snapshot (GtkWidget   *widget,
                           GtkSnapshot *snapshot)
{
  TideFlameGraph *self = TIDE_FLAME_GRAPH (widget);
  FlameNode *marked[2] = { self->hover, self->selected };

  if (self->rendered == NULL)
    self->rendered = render (self);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (0, -scroll_offset (self)));
  if (self->rendered != NULL)
    gtk_snapshot_append_node (snapshot, self->rendered);

  /* Hover: a thin outline in the text colour; selection: a thicker one
   * in the accent colour. */
  for (guint i = 0; i < G_N_ELEMENTS (marked); i++)
    {
      FindArea find = { .node = marked[i] };
      const GdkRGBA *color = i == 0 ? &self->text : &self->accent;
      float width = i == 0 ? 1 : 2;
      GskRoundedRect outline;

      if (marked[i] == NULL)
        continue;
      foreach_visible (self, find_area_visit, &find);
      if (!find.found)
        continue;
      gsk_rounded_rect_init_from_rect (&outline, &find.area, 0);
      gtk_snapshot_append_border (snapshot, &outline, (float[4]) { width, width, width, width },
                                  (GdkRGBA[4]) { *color, *color, *color, *color });
    }
  gtk_snapshot_restore (snapshot);
}

static void
invalidate (TideFlameGraph *self)
{
  g_clear_pointer (&self->rendered, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
tide_flame_graph_measure (GtkWidget      *widget,
                          GtkOrientation  orientation,
                          int             for_size,
                          int            *minimum,
                          int            *natural,
                          int            *minimum_baseline,
                          int            *natural_baseline)
{
  TideFlameGraph *self = TIDE_FLAME_GRAPH (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = *natural = 100;
      return;
    }
  /* It scrolls itself: a few rows at least, all of its rows at best. */
  *minimum = CALLER_ROWS * ROW_HEIGHT;
  *natural = MAX (*minimum, (int) count_visible_rows (self, for_size > 0 ? for_size : 100) * ROW_HEIGHT);
}

static GtkSizeRequestMode
tide_flame_graph_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

/* Where the view scrolls to show @node's row with up to CALLER_ROWS of
 * its callers below it, or @node's row at the top when the view is too
 * short for both. */
static double
scroll_target (TideFlameGraph  *self,
               const FlameNode *node,
               int              height)
{
  double top = row_top (self, node->depth);

  return MIN (top, top + (CALLER_ROWS + 1) * ROW_HEIGHT - height);
}

static void
tide_flame_graph_size_allocate (GtkWidget *widget,
                                int        width,
                                int        height,
                                int        baseline)
{
  TideFlameGraph *self = TIDE_FLAME_GRAPH (widget);
  double old_height = self->content_height;
  double value = scroll_offset (self);

  self->content_height = MAX ((double) height, (double) count_visible_rows (self, width) * ROW_HEIGHT);
  /* Rows are counted from the bottom: keep the distance from it. */
  value += self->content_height - old_height;
  if (self->scroll_to_selected)
    {
      const FlameNode *target = self->selected ? self->selected : self->zoom;

      if (target != NULL)
        value = scroll_target (self, target, height);
      self->scroll_to_selected = FALSE;
    }
  if (self->vadjustment != NULL)
    gtk_adjustment_configure (self->vadjustment, CLAMP (value, 0, self->content_height - height),
                              0, self->content_height, ROW_HEIGHT, height * 0.9, height);
  if (self->hadjustment != NULL)
    gtk_adjustment_configure (self->hadjustment, 0, 0, width, width * 0.1, width * 0.9, width);
  invalidate (self);
}

static void
tide_flame_graph_css_changed (GtkWidget         *widget,
                              GtkCssStyleChange *change)
{
  TideFlameGraph *self = TIDE_FLAME_GRAPH (widget);

  GTK_WIDGET_CLASS (tide_flame_graph_parent_class)->css_changed (widget, change);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  if (!gtk_style_context_lookup_color (gtk_widget_get_style_context (widget), "accent_bg_color",
                                       &self->accent))
    gdk_rgba_parse (&self->accent, "#3584e4");
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &self->text);
  G_GNUC_END_IGNORE_DEPRECATIONS
  invalidate (self);
}

/* ---- GtkScrollable ------------------------------------------------------------------ */

static void
tide_flame_graph_scrolled_cb (TideFlameGraph *self)
{
  /* The frame under the pointer moved away. */
  self->hover = NULL;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
set_adjustment (TideFlameGraph  *self,
                GtkAdjustment  **slot,
                GtkAdjustment   *adjustment)
{
  if (*slot == adjustment && adjustment != NULL)
    return;
  if (*slot != NULL)
    g_signal_handlers_disconnect_by_func (*slot, tide_flame_graph_scrolled_cb, self);
  g_clear_object (slot);
  if (adjustment == NULL)
    adjustment = gtk_adjustment_new (0, 0, 0, 0, 0, 0);
  *slot = g_object_ref_sink (adjustment);
  g_signal_connect_object (adjustment, "value-changed", G_CALLBACK (tide_flame_graph_scrolled_cb),
                           self, G_CONNECT_SWAPPED);
  gtk_widget_queue_allocate (GTK_WIDGET (self));
}

/* ---- input ------------------------------------------------------------------------ */

static void
tide_flame_graph_click_pressed_cb (TideFlameGraph *self,
                                   int             n_press,
                                   double          x,
                                   double          y)
{
  g_assert (TIDE_IS_FLAME_GRAPH (self));
  tide_flame_graph_activate_at (self, x, y);
}

static void
tide_flame_graph_motion_cb (TideFlameGraph *self,
                            double          x,
                            double          y)
{
  FlameNode *node = lookup_node (self, x, y);

  g_assert (TIDE_IS_FLAME_GRAPH (self));
  if (node != self->hover)
    {
      self->hover = node;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
tide_flame_graph_leave_cb (TideFlameGraph *self)
{
  self->hover = NULL;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
tide_flame_graph_query_tooltip (GtkWidget  *widget,
                                int         x,
                                int         y,
                                gboolean    keyboard,
                                GtkTooltip *tooltip)
{
  TideFlameGraph *self = TIDE_FLAME_GRAPH (widget);
  FlameNode *node = lookup_node (self, x, y);
  g_autofree char *bytes = NULL;
  g_autofree char *text = NULL;

  if (node == NULL)
    return FALSE;
  bytes = tide_format_bytes (node->bytes);
  text = g_strdup_printf ("%s\n%s (%.1f%%)", node->label, bytes,
                          self->root->bytes ? 100.0 * node->bytes / self->root->bytes : 0.0);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* ---- GObject ------------------------------------------------------------------------ */

static void
tide_flame_graph_finalize (GObject *object)
{
  TideFlameGraph *self = TIDE_FLAME_GRAPH (object);

  g_clear_pointer (&self->rendered, gsk_render_node_unref);
  g_clear_pointer (&self->root, flame_node_free);
  g_clear_pointer (&self->groups, g_ptr_array_unref);
  g_clear_object (&self->hadjustment);
  g_clear_object (&self->vadjustment);
  g_free (self->search);
  G_OBJECT_CLASS (tide_flame_graph_parent_class)->finalize (object);
}

static void
tide_flame_graph_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  TideFlameGraph *self = TIDE_FLAME_GRAPH (object);

  switch (prop_id)
    {
    case PROP_SEARCH: g_value_set_string (value, self->search); break;
    case PROP_SELECTED_BYTES: g_value_set_int64 (value, tide_flame_graph_get_selected_bytes (self)); break;
    case PROP_HIDE_PLUMBING: g_value_set_boolean (value, self->hide_plumbing); break;
    case PROP_GROUPS: g_value_set_boxed (value, self->groups); break;
    case PROP_HADJUSTMENT: g_value_set_object (value, self->hadjustment); break;
    case PROP_VADJUSTMENT: g_value_set_object (value, self->vadjustment); break;
    case PROP_HSCROLL_POLICY: g_value_set_enum (value, self->hscroll_policy); break;
    case PROP_VSCROLL_POLICY: g_value_set_enum (value, self->vscroll_policy); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_flame_graph_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  TideFlameGraph *self = TIDE_FLAME_GRAPH (object);

  switch (prop_id)
    {
    case PROP_SEARCH: tide_flame_graph_set_search (self, g_value_get_string (value)); break;
    case PROP_HIDE_PLUMBING: tide_flame_graph_set_hide_plumbing (self, g_value_get_boolean (value)); break;
    case PROP_GROUPS: tide_flame_graph_set_groups (self, g_value_get_boxed (value)); break;
    case PROP_HADJUSTMENT: set_adjustment (self, &self->hadjustment, g_value_get_object (value)); break;
    case PROP_VADJUSTMENT: set_adjustment (self, &self->vadjustment, g_value_get_object (value)); break;
    case PROP_HSCROLL_POLICY: self->hscroll_policy = g_value_get_enum (value); break;
    case PROP_VSCROLL_POLICY: self->vscroll_policy = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tide_flame_graph_class_init (TideFlameGraphClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = tide_flame_graph_finalize;
  object_class->get_property = tide_flame_graph_get_property;
  object_class->set_property = tide_flame_graph_set_property;
  widget_class->snapshot = tide_flame_graph_snapshot;
  widget_class->measure = tide_flame_graph_measure;
  widget_class->size_allocate = tide_flame_graph_size_allocate;
  widget_class->get_request_mode = tide_flame_graph_get_request_mode;
  widget_class->css_changed = tide_flame_graph_css_changed;
  widget_class->query_tooltip = tide_flame_graph_query_tooltip;

  properties[PROP_SEARCH] =
    g_param_spec_string ("search", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Notified whenever the selected (zoomed) frame changes. */
  properties[PROP_SELECTED_BYTES] =
    g_param_spec_int64 ("selected-bytes", NULL, NULL, 0, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Leaves allocator and runtime plumbing frames out, as the drill-down's
   * "Hide plumbing frames" does. */
  properties[PROP_HIDE_PLUMBING] =
    g_param_spec_boolean ("hide-plumbing", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* TideGroup*: what it draws (a TideRetainedQuery's, bound in the
   * window's template), or NULL. */
  properties[PROP_GROUPS] =
    g_param_spec_boxed ("groups", NULL, NULL, G_TYPE_PTR_ARRAY,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  g_object_class_override_property (object_class, PROP_HADJUSTMENT, "hadjustment");
  g_object_class_override_property (object_class, PROP_VADJUSTMENT, "vadjustment");
  g_object_class_override_property (object_class, PROP_HSCROLL_POLICY, "hscroll-policy");
  g_object_class_override_property (object_class, PROP_VSCROLL_POLICY, "vscroll-policy");

  gtk_widget_class_set_css_name (widget_class, "flamegraph");
}

static void
tide_flame_graph_init (TideFlameGraph *self)
{
  GtkGesture *click = gtk_gesture_click_new ();
  GtkEventController *motion = gtk_event_controller_motion_new ();

  g_signal_connect_object (click, "pressed", G_CALLBACK (tide_flame_graph_click_pressed_cb),
                           self, G_CONNECT_SWAPPED);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  g_signal_connect_object (motion, "motion", G_CALLBACK (tide_flame_graph_motion_cb),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (motion, "leave", G_CALLBACK (tide_flame_graph_leave_cb),
                           self, G_CONNECT_SWAPPED);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gdk_rgba_parse (&self->accent, "#3584e4");
  set_adjustment (self, &self->hadjustment, NULL);
  set_adjustment (self, &self->vadjustment, NULL);
  /* Its content is taller than it: what scrolled out must not paint over
   * the search entry and the label beside it. */
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);
}

/* ---- public API ------------------------------------------------------------------------ */

GtkWidget *
tide_flame_graph_new (void)
{
  return g_object_new (TIDE_TYPE_FLAME_GRAPH, NULL);
}

/* Builds the tree from the groups and opens it on the headline of the
 * largest stack: the frame to look at, scrolled into view. */
static void
rebuild (TideFlameGraph *self)
{
  g_clear_pointer (&self->root, flame_node_free);
  self->root = flame_tree_build (self->groups, self->hide_plumbing);
  self->selected = flame_tree_find_headline (self->root, self->groups, self->hide_plumbing);
  self->zoom = self->selected ? self->selected : self->root;
  self->hover = NULL;
  self->n_matches = flame_node_mark (self->root, self->search);
  self->scroll_to_selected = TRUE;
  gtk_widget_queue_resize (GTK_WIDGET (self));
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_BYTES]);
}

/**
 * tide_flame_graph_set_groups:
 * @groups: (element-type TideGroup) (nullable): stacks with bytes, kept
 *   (not changed) to rebuild from when hide-plumbing changes
 */
void
tide_flame_graph_set_groups (TideFlameGraph *self,
                             GPtrArray      *groups)
{
  g_return_if_fail (TIDE_IS_FLAME_GRAPH (self));

  if (groups != NULL)
    g_ptr_array_ref (groups);
  g_clear_pointer (&self->groups, g_ptr_array_unref);
  self->groups = groups;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GROUPS]);
  rebuild (self);
}

const char *
tide_flame_graph_get_search (TideFlameGraph *self)
{
  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), NULL);
  return self->search;
}

/* Frames whose label (function, file:line or library) contains @search. */
void
tide_flame_graph_set_search (TideFlameGraph *self,
                             const char     *search)
{
  g_return_if_fail (TIDE_IS_FLAME_GRAPH (self));

  if (g_strcmp0 (self->search, search) == 0)
    return;
  g_free (self->search);
  self->search = g_strdup (search);
  self->n_matches = self->root ? flame_node_mark (self->root, search) : 0;
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SEARCH]);
}

guint
tide_flame_graph_get_n_matches (TideFlameGraph *self)
{
  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), 0);
  return self->n_matches;
}

gint64
tide_flame_graph_get_total_bytes (TideFlameGraph *self)
{
  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), 0);
  return self->root ? self->root->bytes : 0;
}

/* What a click does: zoom to the frame under (x, y) and select it; on the
 * zoomed frame, back up one level.  Returns FALSE where there is no frame. */
gboolean
tide_flame_graph_activate_at (TideFlameGraph *self,
                              double          x,
                              double          y)
{
  FlameNode *node;

  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), FALSE);

  node = lookup_node (self, x, y);
  if (node == NULL)
    return FALSE;
  if (node == self->zoom && node->parent != NULL)
    node = node->parent;
  self->zoom = node;
  self->selected = node->parent != NULL ? node : NULL;
  self->scroll_to_selected = TRUE;
  /* The rows shown change with the zoom. */
  gtk_widget_queue_resize (GTK_WIDGET (self));
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_BYTES]);
  return TRUE;
}

const char *
tide_flame_graph_get_zoom_label (TideFlameGraph *self)
{
  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), NULL);
  return self->zoom ? self->zoom->label : NULL;
}

/* Returns: (transfer none) (nullable): the frame last clicked */
const TideFrame *
tide_flame_graph_get_selected_frame (TideFlameGraph *self)
{
  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), NULL);
  return self->selected ? &self->selected->frame : NULL;
}

gint64
tide_flame_graph_get_selected_bytes (TideFlameGraph *self)
{
  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), 0);
  return self->selected ? self->selected->bytes : 0;
}

gboolean
tide_flame_graph_get_hide_plumbing (TideFlameGraph *self)
{
  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), FALSE);
  return self->hide_plumbing;
}

void
tide_flame_graph_set_hide_plumbing (TideFlameGraph *self,
                                    gboolean        hide)
{
  g_return_if_fail (TIDE_IS_FLAME_GRAPH (self));

  hide = !!hide;
  if (self->hide_plumbing == hide)
    return;
  self->hide_plumbing = hide;
  rebuild (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HIDE_PLUMBING]);
}

/**
 * tide_flame_graph_get_function_area:
 * @area: (out): where the frame is drawn, in widget coordinates; it may lie
 *   outside the part scrolled into view
 *
 * Returns: whether a frame of @function is wide enough to be drawn (the
 * first such frame, widest first).
 */
gboolean
tide_flame_graph_get_function_area (TideFlameGraph  *self,
                                    const char      *function,
                                    graphene_rect_t *area)
{
  FindArea find = { .function = function };

  g_return_val_if_fail (TIDE_IS_FLAME_GRAPH (self), FALSE);
  g_return_val_if_fail (function != NULL, FALSE);

  foreach_visible (self, find_area_visit, &find);
  if (find.found && area != NULL)
    {
      *area = find.area;
      area->origin.y -= scroll_offset (self);
    }
  return find.found;
}
