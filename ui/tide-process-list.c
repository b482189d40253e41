/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideProcessListItem: one running process as a picker of processes to
 * attach to shows it (pid, command line, user), read from /proc: the list
 * model of the Record dialog's attach list.  Processes that end while we
 * read are skipped; kernel threads (no command line) show their name in
 * brackets, as ps does.
 */
#include "config.h"

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tide-process-list.h"

struct _TideProcessListItem
{
  GObject  parent_instance;

  int      pid;
  char    *command;
  char    *user;
  char    *name;     /* the executable's base name, for naming traces */
};

G_DEFINE_FINAL_TYPE (TideProcessListItem, tide_process_list_item, G_TYPE_OBJECT)

static void
tide_process_list_item_finalize (GObject *object)
{
  TideProcessListItem *self = TIDE_PROCESS_LIST_ITEM (object);

  g_free (self->command);
  g_free (self->user);
  g_free (self->name);
  G_OBJECT_CLASS (tide_process_list_item_parent_class)->finalize (object);
}

static void
tide_process_list_item_class_init (TideProcessListItemClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tide_process_list_item_finalize;
}

static void
tide_process_list_item_init (TideProcessListItem *self)
{
}

int
tide_process_list_item_get_pid (TideProcessListItem *self)
{
  g_return_val_if_fail (TIDE_IS_PROCESS_LIST_ITEM (self), 0);
  return self->pid;
}

const char *
tide_process_list_item_get_command (TideProcessListItem *self)
{
  g_return_val_if_fail (TIDE_IS_PROCESS_LIST_ITEM (self), NULL);
  return self->command;
}

const char *
tide_process_list_item_get_user (TideProcessListItem *self)
{
  g_return_val_if_fail (TIDE_IS_PROCESS_LIST_ITEM (self), NULL);
  return self->user;
}

const char *
tide_process_list_item_get_name (TideProcessListItem *self)
{
  g_return_val_if_fail (TIDE_IS_PROCESS_LIST_ITEM (self), NULL);
  return self->name;
}

/* Case-insensitive substring of the pid, the command line or the user;
 * an empty search matches everything. */
gboolean
tide_process_list_item_matches (TideProcessListItem *self,
                                const char          *search)
{
  g_autofree char *needle = NULL;
  g_autofree char *command = NULL;
  g_autofree char *user = NULL;
  char pid[16];

  g_return_val_if_fail (TIDE_IS_PROCESS_LIST_ITEM (self), FALSE);
  if (search == NULL || *search == '\0')
    return TRUE;
  g_snprintf (pid, sizeof pid, "%d", self->pid);
  needle = g_utf8_casefold (search, -1);
  command = g_utf8_casefold (self->command, -1);
  user = g_utf8_casefold (self->user, -1);
  return strstr (pid, needle) != NULL || strstr (command, needle) != NULL ||
         strstr (user, needle) != NULL;
}

static char *
user_name (uid_t uid)
{
  struct passwd entry, *found = NULL;
  char buffer[1024];

  if (getpwuid_r (uid, &entry, buffer, sizeof buffer, &found) == 0 && found != NULL)
    return g_strdup (found->pw_name);
  return g_strdup_printf ("%u", (unsigned) uid);
}

/* /proc/PID/cmdline with its NULs as spaces; NULL when it is gone. */
static char *
read_command (const char *dir,
              char      **name)
{
  g_autofree char *path = g_build_filename (dir, "cmdline", NULL);
  g_autofree char *comm_path = g_build_filename (dir, "comm", NULL);
  g_autofree char *contents = NULL;
  gsize length = 0;

  if (g_file_get_contents (path, &contents, &length, NULL) && length > 0)
    {
      *name = g_path_get_basename (contents);
      for (gsize i = 0; i + 1 < length; i++)
        if (contents[i] == '\0')
          contents[i] = ' ';
      return g_utf8_make_valid (contents, -1);
    }
  g_clear_pointer (&contents, g_free);
  if (!g_file_get_contents (comm_path, &contents, NULL, NULL))
    return NULL;
  g_strchomp (contents);
  *name = g_strdup (contents);
  return g_strdup_printf ("[%s]", contents);
}

static TideProcessListItem *
item_new (int pid)
{
  g_autofree char *dir = g_strdup_printf ("/proc/%d", pid);
  TideProcessListItem *self;
  struct stat st;
  char *name = NULL;
  char *command;

  if (stat (dir, &st) != 0 || (command = read_command (dir, &name)) == NULL)
    return NULL;
  self = g_object_new (TIDE_TYPE_PROCESS_LIST_ITEM, NULL);
  self->pid = pid;
  self->command = command;
  self->name = name;
  self->user = user_name (st.st_uid);
  return self;
}

static int
compare_pids (gconstpointer a,
              gconstpointer b)
{
  return *(const int *) a - *(const int *) b;
}

/**
 * tide_process_list_load:
 *
 * Returns: (transfer full): the running processes, by pid
 */
GListStore *
tide_process_list_load (void)
{
  GListStore *store = g_list_store_new (TIDE_TYPE_PROCESS_LIST_ITEM);
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  g_autoptr(GArray) pids = g_array_new (FALSE, FALSE, sizeof (int));
  const char *entry;

  while (proc != NULL && (entry = g_dir_read_name (proc)) != NULL)
    {
      char *end = NULL;
      long pid = strtol (entry, &end, 10);
      int value = (int) pid;
      if (end != entry && *end == '\0' && pid > 0 && pid <= G_MAXINT)
        g_array_append_val (pids, value);
    }
  g_array_sort (pids, compare_pids);
  for (guint i = 0; i < pids->len; i++)
    {
      g_autoptr(TideProcessListItem) item = item_new (g_array_index (pids, int, i));
      if (item != NULL)
        g_list_store_append (store, item);
    }
  return store;
}
