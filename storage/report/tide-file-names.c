/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <string.h>

#include "tide-file-names.h"
#include "tide-frame.h"
#include "tide-sqlite.h"
#include "tide-trace-private.h"

/* The last @n components of @path, or all of it when it has fewer. */
static const char *
path_suffix (const char *path,
             guint       n)
{
  const char *p = path + strlen (path);

  while (p > path)
    {
      p--;
      if (*p == '/' && --n == 0)
        return p + 1;
    }
  return path;
}

static guint
count_components (const char *name)
{
  guint n = 1;

  for (const char *p = name; *p != '\0'; p++)
    n += *p == '/';
  return n;
}

/* Gives each path of @clash (paths that share one name) the shortest
 * suffix, at least @start components long, that no other of them has. */
static void
disambiguate (GPtrArray  *clash,
              guint       start,
              GHashTable *names)
{
  for (guint i = 0; i < clash->len; i++)
    {
      const char *path = g_ptr_array_index (clash, i);
      guint n = start;

      for (;; n++)
        {
          const char *mine = path_suffix (path, n);
          gboolean unique = TRUE;

          for (guint k = 0; k < clash->len && unique; k++)
            unique = k == i || strcmp (path_suffix (g_ptr_array_index (clash, k), n), mine) != 0;
          /* Or the whole path, which no other has: the paths are distinct. */
          if (unique || mine == path)
            break;
        }
      g_hash_table_insert (names, g_strdup (path), g_strdup (path_suffix (path, n)));
    }
}

GHashTable *
tide_file_names_new (GPtrArray *paths)
{
  g_autoptr(GHashTable) by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) g_ptr_array_unref);
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  GHashTableIter iter;
  gpointer key, value;

  for (guint i = 0; i < paths->len; i++)
    {
      const char *path = g_ptr_array_index (paths, i);
      char *name = tide_frame_file_name (path);
      GPtrArray *same = g_hash_table_lookup (by_name, name);

      if (same == NULL)
        {
          same = g_ptr_array_new ();
          g_hash_table_insert (by_name, name, same);
        }
      else
        g_free (name);
      g_ptr_array_add (same, (gpointer) path);
    }
  g_hash_table_iter_init (&iter, by_name);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (((GPtrArray *) value)->len > 1)
      disambiguate (value, count_components (key) + 1, names);
  return names;
}

static G_DEFINE_QUARK (tide-file-names, file_names)

/* Empty where the frames cannot be read, which the query of the frames
 * will then say. */
GHashTable *
tide_file_names_for_trace (TideTrace *trace)
{
  GHashTable *names = g_object_get_qdata (G_OBJECT (trace), file_names_quark ());
  g_autoptr(GPtrArray) paths = NULL;
  sqlite3_stmt *stmt;

  if (names != NULL)
    return names;
  paths = g_ptr_array_new_with_free_func (g_free);
  stmt = tide_sqlite_prepare (_tide_trace_get_db (trace),
                              "SELECT DISTINCT file FROM frames WHERE file IS NOT NULL", "", NULL);
  while (stmt != NULL && sqlite3_step (stmt) == SQLITE_ROW)
    g_ptr_array_add (paths, g_strdup ((const char *) sqlite3_column_text (stmt, 0)));
  sqlite3_finalize (stmt);
  names = tide_file_names_new (paths);
  g_object_set_qdata_full (G_OBJECT (trace), file_names_quark (), names,
                           (GDestroyNotify) g_hash_table_unref);
  return names;
}
