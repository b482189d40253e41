/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The stack tree's index of nodes by (parent, frame): every node added is
 * found again under its own key and no other, across the index's growth.
 */
#include "config.h"

#include "tide-node-index.h"

#define N_PARENTS 300
#define N_FRAMES  1000  /* 300,000 nodes: the index grows ten times */

static gint64
node_id (gint64 parent_id,
         gint64 frame_id)
{
  return parent_id * N_FRAMES + frame_id + 1;
}

static void
test_found_again (void)
{
  TideNodeIndex *index = tide_node_index_new ();

  for (gint64 parent = 0; parent < N_PARENTS; parent++)
    for (gint64 frame = 1; frame <= N_FRAMES; frame++)
      {
        g_assert_cmpint (tide_node_index_lookup (index, parent, frame), ==, 0);
        tide_node_index_insert (index, parent, frame, node_id (parent, frame));
      }
  g_assert_cmpuint (tide_node_index_size (index), ==, N_PARENTS * N_FRAMES);
  for (gint64 parent = 0; parent < N_PARENTS; parent++)
    for (gint64 frame = 1; frame <= N_FRAMES; frame++)
      g_assert_cmpint (tide_node_index_lookup (index, parent, frame), ==, node_id (parent, frame));
  g_assert_cmpuint (tide_node_index_size (index), ==, N_PARENTS * N_FRAMES);
  tide_node_index_free (index);
}

/* The same frame under two parents, and the parent and frame swapped, are
 * other nodes. */
static void
test_keys_distinct (void)
{
  TideNodeIndex *index = tide_node_index_new ();

  g_assert_cmpint (tide_node_index_lookup (index, 1, 2), ==, 0);
  tide_node_index_insert (index, 1, 2, 10);
  g_assert_cmpint (tide_node_index_lookup (index, 2, 1), ==, 0);
  tide_node_index_insert (index, 2, 1, 11);
  g_assert_cmpint (tide_node_index_lookup (index, 3, 2), ==, 0);
  tide_node_index_insert (index, 3, 2, 12);
  g_assert_cmpint (tide_node_index_lookup (index, 1, 2), ==, 10);
  g_assert_cmpint (tide_node_index_lookup (index, 2, 1), ==, 11);
  g_assert_cmpint (tide_node_index_lookup (index, 3, 2), ==, 12);
  g_assert_cmpuint (tide_node_index_size (index), ==, 3);
  tide_node_index_free (index);
  tide_node_index_free (NULL);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/node-index/found-again", test_found_again);
  g_test_add_func ("/node-index/keys-distinct", test_keys_distinct);
  return g_test_run ();
}
