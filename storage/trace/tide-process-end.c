/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-process-end.h"

#include <string.h>
#include <sys/wait.h>

#include "tide-format-bytes.h"

/* Fills @end from a status as waitpid() and /proc/PID/stat's exit_code
 * give it. */
void
tide_process_end_from_wait_status (TideProcessEnd *end,
                                   int             wait_status)
{
  memset (end, 0, sizeof *end);
  if (wait_status < 0)
    return;
  if (WIFEXITED (wait_status))
    {
      end->kind = TIDE_END_EXITED;
      end->exit_code = WEXITSTATUS (wait_status);
    }
  else if (WIFSIGNALED (wait_status))
    {
      end->kind = TIDE_END_SIGNALED;
      end->signal = WTERMSIG (wait_status);
      end->core_dumped = WCOREDUMP (wait_status) != 0;
    }
}

gboolean
tide_process_end_is_death (const TideProcessEnd *end)
{
  return end->kind == TIDE_END_SIGNALED || (end->kind == TIDE_END_EXITED && end->exit_code != 0);
}

gint
tide_process_end_shell_status (const TideProcessEnd *end)
{
  switch (end->kind)
    {
    case TIDE_END_EXITED: return end->exit_code;
    case TIDE_END_SIGNALED: return 128 + end->signal;
    case TIDE_END_EXEC:
    case TIDE_END_RUNNING:
    case TIDE_END_UNKNOWN:
    default: return -1;
    }
}

const char *
tide_signal_name (gint signal,
                  char buf[16])
{
  const char *abbrev = signal > 0 && signal < 65 ? sigabbrev_np (signal) : NULL;

  if (abbrev != NULL)
    g_snprintf (buf, 16, "SIG%s", abbrev);
  else
    g_snprintf (buf, 16, "signal %d", signal);
  return buf;
}

const char *
tide_oom_scope_name (TideOomScope scope)
{
  switch (scope)
    {
    case TIDE_OOM_CGROUP_V1: return "cgroup-v1";
    case TIDE_OOM_CGROUP_V2: return "cgroup-v2";
    case TIDE_OOM_MACHINE: return "machine";
    case TIDE_OOM_NONE:
    default: return NULL;
    }
}

char *
tide_process_end_describe_oom (const TideProcessEnd *end)
{
  g_autofree char *limit = end->limit_bytes > 0 ? tide_format_bytes (end->limit_bytes) : NULL;

  if (end->kind != TIDE_END_SIGNALED || end->oom == TIDE_OOM_NONE)
    return NULL;
  if (end->oom == TIDE_OOM_MACHINE)
    return limit ? g_strdup_printf ("the kernel's OOM killer, when the machine (%s) ran out of memory", limit)
                 : g_strdup ("the kernel's OOM killer, when the machine ran out of memory");
  return limit ? g_strdup_printf ("the kernel's OOM killer, at the cgroup's limit of %s", limit)
               : g_strdup ("the kernel's OOM killer, at its cgroup's limit");
}

static char *
describe_how (const TideProcessEnd *end)
{
  char name[16];

  switch (end->kind)
    {
    case TIDE_END_EXITED:
      return g_strdup_printf ("exited %d", end->exit_code);
    case TIDE_END_SIGNALED:
      if (end->oom != TIDE_OOM_NONE)
        return g_strdup_printf ("killed by %s (OOM killer)", tide_signal_name (end->signal, name));
      return g_strdup_printf ("killed by %s%s", tide_signal_name (end->signal, name),
                              end->core_dumped ? " (core dumped)" : "");
    case TIDE_END_EXEC:
      return g_strdup ("exec");
    case TIDE_END_RUNNING:
      return g_strdup ("running");
    case TIDE_END_UNKNOWN:
    default:
      return g_strdup ("unknown");
    }
}

char *
tide_process_end_describe_short (const TideProcessEnd *end)
{
  g_autofree char *how = describe_how (end);

  if (!end->device_oom || !tide_process_end_is_death (end))
    return g_steal_pointer (&how);
  if (end->oom_device < 0)
    return g_strdup_printf ("%s (pinned memory ran out)", how);
  return g_strdup_printf ("%s (cuda:%d out of memory)", how, end->oom_device);
}
