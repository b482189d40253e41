/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A row of the drill-down tree: a scope, a stack (named by its headline,
 * tide-plumbing.h) or one frame of a stack, with the retained bytes and allocation
 * count below it.  Children live in a GListStore (an array: O(1) get_item).
 * With a compared run, each row also holds what that run's aligned step
 * retained of it: a stack (and each of its frames) by the diff's stack
 * signature (tide_group_signature), a scope as the sum of its stacks.
 */
#include "config.h"

#include "tide-drilldown-node.h"

#include "tide-saturate.h"
#include "tide-trace-diff.h"

struct _TideDrilldownNode
{
  GObject            parent_instance;

  TideDrilldownKind  kind;
  char              *label;
  gint64             bytes;
  gint64             count;
  TideFrame         *frame;       /* owned copy; NULL for scopes */
  GListStore        *children;    /* NULL for frames */
  char              *key;         /* stacks and frames: the stack's signature */
  gint64             compared;    /* bytes in the compared run, if has_compared */
  gboolean           has_compared;
};

G_DEFINE_FINAL_TYPE (TideDrilldownNode, tide_drilldown_node, G_TYPE_OBJECT)

static void
tide_drilldown_node_finalize (GObject *object)
{
  TideDrilldownNode *self = TIDE_DRILLDOWN_NODE (object);

  g_free (self->label);
  g_free (self->key);
  g_clear_pointer (&self->frame, tide_frame_free);
  g_clear_object (&self->children);
  G_OBJECT_CLASS (tide_drilldown_node_parent_class)->finalize (object);
}

static void
tide_drilldown_node_class_init (TideDrilldownNodeClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tide_drilldown_node_finalize;
}

static void
tide_drilldown_node_init (TideDrilldownNode *self)
{
}

TideDrilldownNode *
tide_drilldown_node_new (TideDrilldownKind  kind,
                         const char        *label)
{
  TideDrilldownNode *self = g_object_new (TIDE_TYPE_DRILLDOWN_NODE, NULL);

  self->kind = kind;
  self->label = g_strdup (label);
  if (kind != TIDE_DRILLDOWN_FRAME)
    self->children = g_list_store_new (TIDE_TYPE_DRILLDOWN_NODE);
  return self;
}

static TideDrilldownNode *
stack_node_new (const TideGroup *group)
{
  const TideFrame *headline = tide_group_get_headline (group);
  g_autofree char *label = NULL;
  TideDrilldownNode *node;

  if (headline == NULL)
    label = g_strdup ("(no stack)");
  else
    label = tide_frame_describe_source_first (headline);
  node = tide_drilldown_node_new (TIDE_DRILLDOWN_STACK, label);
  node->key = tide_group_signature (group);
  node->bytes = group->bytes;
  node->count = group->count;
  if (headline != NULL)
    node->frame = tide_frame_copy (headline);

  /* The frames, innermost first, each carrying the stack's totals. */
  for (guint i = 0; i < group->frames->len; i++)
    {
      const TideFrame *frame = g_ptr_array_index (group->frames, i);
      g_autofree char *frame_label = tide_frame_describe (frame);
      g_autoptr(TideDrilldownNode) child = tide_drilldown_node_new (TIDE_DRILLDOWN_FRAME, frame_label);

      child->bytes = group->bytes;
      child->count = group->count;
      child->frame = tide_frame_copy (frame);
      child->key = g_strdup (node->key);
      g_list_store_append (node->children, child);
    }
  return node;
}

static gboolean
has_scopes (GPtrArray *groups)
{
  for (guint i = 0; i < groups->len; i++)
    if (((TideGroup *) g_ptr_array_index (groups, i))->scope_id != 0)
      return TRUE;
  return FALSE;
}

static TideDrilldownNode *
scope_node_lookup (GListStore *roots,
                   GHashTable *scopes,
                   const TideGroup *group)
{
  const char *path = group->scope_path ? group->scope_path : "(no scope)";
  TideDrilldownNode *node = g_hash_table_lookup (scopes, path);

  if (node == NULL)
    {
      node = tide_drilldown_node_new (TIDE_DRILLDOWN_SCOPE, path);
      g_hash_table_insert (scopes, node->label, node);
      g_list_store_append (roots, node);
      g_object_unref (node);
    }
  return node;
}

/**
 * tide_drilldown_build:
 * @groups: (element-type TideGroup): from tide_drilldown_retained(), largest first
 *
 * The tree scope -> stack -> frame.  A trace without scopes skips the scope
 * level, so that the first rows are the stacks.
 *
 * Returns: (transfer full): the root rows, largest first
 */
GListModel *
tide_drilldown_build (GPtrArray *groups)
{
  GListStore *roots = g_list_store_new (TIDE_TYPE_DRILLDOWN_NODE);
  g_autoptr(GHashTable) scopes = g_hash_table_new (g_str_hash, g_str_equal);
  gboolean by_scope = groups != NULL && has_scopes (groups);

  for (guint i = 0; groups != NULL && i < groups->len; i++)
    {
      const TideGroup *group = g_ptr_array_index (groups, i);
      g_autoptr(TideDrilldownNode) stack = stack_node_new (group);

      if (by_scope)
        {
          TideDrilldownNode *scope = scope_node_lookup (roots, scopes, group);

          scope->bytes += group->bytes;
          scope->count += group->count;
          g_list_store_append (scope->children, stack);
        }
      else
        g_list_store_append (roots, stack);
    }
  return G_LIST_MODEL (roots);
}

TideDrilldownKind
tide_drilldown_node_get_kind (TideDrilldownNode *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_NODE (self), 0);
  return self->kind;
}

const char *
tide_drilldown_node_get_label (TideDrilldownNode *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_NODE (self), NULL);
  return self->label;
}

gint64
tide_drilldown_node_get_bytes (TideDrilldownNode *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_NODE (self), 0);
  return self->bytes;
}

gint64
tide_drilldown_node_get_count (TideDrilldownNode *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_NODE (self), 0);
  return self->count;
}

/* Returns: (transfer none) (nullable): the frame of a stack or frame row */
const TideFrame *
tide_drilldown_node_get_frame (TideDrilldownNode *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_NODE (self), NULL);
  return self->frame;
}

/* A frame row of allocator or runtime plumbing (tide-plumbing.h). */
gboolean
tide_drilldown_node_is_plumbing (TideDrilldownNode *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_NODE (self), FALSE);
  return self->kind == TIDE_DRILLDOWN_FRAME && self->frame != NULL && self->frame->plumbing;
}

/* Returns: (transfer none) (nullable): the children, NULL for a frame */
GListModel *
tide_drilldown_node_get_children (TideDrilldownNode *self)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_NODE (self), NULL);
  return self->children ? G_LIST_MODEL (self->children) : NULL;
}

/* Sets @node's compared bytes (and its children's); returns them. */
static gint64
compare_node (TideDrilldownNode *node,
              GHashTable        *compared)
{
  GListModel *children = node->children ? G_LIST_MODEL (node->children) : NULL;
  gint64 sum = 0;

  for (guint i = 0; children != NULL && i < g_list_model_get_n_items (children); i++)
    {
      g_autoptr(TideDrilldownNode) child = g_list_model_get_item (children, i);

      sum = tide_sat_add (sum, compare_node (child, compared));
    }
  if (node->key != NULL)
    {
      const gint64 *bytes = compared ? g_hash_table_lookup (compared, node->key) : NULL;

      sum = bytes ? *bytes : 0;
    }
  node->compared = sum;
  node->has_compared = compared != NULL;
  return sum;
}

/**
 * tide_drilldown_compare:
 * @roots: (element-type TideDrilldownNode): from tide_drilldown_build()
 * @compared: (nullable): tide_trace_diff_step_retained(); %NULL: none
 *
 * Sets what the compared run retained of each row (0 of a stack it lacks).
 */
void
tide_drilldown_compare (GListModel *roots,
                        GHashTable *compared)
{
  for (guint i = 0; i < g_list_model_get_n_items (roots); i++)
    {
      g_autoptr(TideDrilldownNode) node = g_list_model_get_item (roots, i);

      compare_node (node, compared);
    }
}

/* Returns: FALSE when no run is compared; else *@bytes is the compared
 * run's bytes of this row. */
gboolean
tide_drilldown_node_get_compared (TideDrilldownNode *self,
                                  gint64            *bytes)
{
  g_return_val_if_fail (TIDE_IS_DRILLDOWN_NODE (self), FALSE);
  *bytes = self->compared;
  return self->has_compared;
}
