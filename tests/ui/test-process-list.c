/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The attach picker's list of running processes, read from /proc: a
 * process started here is listed with its exact command line, name and
 * user, searches match what the picker says they match, and a process
 * that has ended is not listed.  No display needed.
 */
#include "config.h"

#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tide-process-list.h"

static TideProcessListItem *
find_pid (GListModel *list,
          int         pid)
{
  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr(TideProcessListItem) item = g_list_model_get_item (list, i);

      if (tide_process_list_item_get_pid (item) == pid)
        return g_steal_pointer (&item);
    }
  return NULL;
}

static GPid
spawn_sleeper (void)
{
  const char *argv[] = { "/bin/sleep", "30", NULL };
  g_autoptr(GError) error = NULL;
  GPid pid = 0;

  g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &error);
  g_assert_no_error (error);
  return pid;
}

/* /proc/PID/cmdline is there once exec has run: waits for it. */
static void
wait_for_exec (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/cmdline", pid);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      g_autofree char *cmdline = NULL;

      if (g_file_get_contents (path, &cmdline, NULL, NULL) && g_str_equal (cmdline, "/bin/sleep"))
        return;
      g_usleep (1000);
    }
  g_error ("/bin/sleep did not start within 10 s");
}

static void
test_lists_running_process (void)
{
  GPid pid = spawn_sleeper ();
  g_autoptr(GListStore) list = NULL;
  g_autoptr(GListStore) after = NULL;
  g_autoptr(TideProcessListItem) item = NULL;
  g_autoptr(TideProcessListItem) gone = NULL;
  struct passwd *me = getpwuid (getuid ());
  g_autofree char *pid_text = g_strdup_printf ("%d", pid);
  int status = 0;

  wait_for_exec (pid);
  list = tide_process_list_load ();
  item = find_pid (G_LIST_MODEL (list), pid);
  g_assert_nonnull (item);
  g_assert_cmpstr (tide_process_list_item_get_command (item), ==, "/bin/sleep 30");
  g_assert_cmpstr (tide_process_list_item_get_name (item), ==, "sleep");
  g_assert_nonnull (me);
  g_assert_cmpstr (tide_process_list_item_get_user (item), ==, me->pw_name);

  /* By pid, command line or user, ignoring case; empty matches all. */
  g_assert_true (tide_process_list_item_matches (item, pid_text));
  g_assert_true (tide_process_list_item_matches (item, "SLEEP 3"));
  g_assert_true (tide_process_list_item_matches (item, me->pw_name));
  g_assert_true (tide_process_list_item_matches (item, ""));
  g_assert_false (tide_process_list_item_matches (item, "sleep 31"));

  /* The list is by pid. */
  for (guint i = 1; i < g_list_model_get_n_items (G_LIST_MODEL (list)); i++)
    {
      g_autoptr(TideProcessListItem) a = g_list_model_get_item (G_LIST_MODEL (list), i - 1);
      g_autoptr(TideProcessListItem) b = g_list_model_get_item (G_LIST_MODEL (list), i);

      g_assert_cmpint (tide_process_list_item_get_pid (a), <, tide_process_list_item_get_pid (b));
    }

  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  after = tide_process_list_load ();
  gone = find_pid (G_LIST_MODEL (after), pid);
  g_assert_null (gone);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/process-list/lists-running-process", test_lists_running_process);
  return g_test_run ();
}
