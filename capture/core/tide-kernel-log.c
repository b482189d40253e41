/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-kernel-log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc/self/ns/pid in the initial PID namespace, whose pids the kernel's
 * log prints (PROC_PID_INIT_INO). */
#define INITIAL_PID_NAMESPACE "pid:[4026531836]"
#define VICTIM_MARK           "Killed process "
/* A record of /dev/kmsg is at most about 1 KiB of text and its
 * dictionary; a read into less fails with EINVAL. */
#define RECORD_MAX            8192

struct _TideKernelLog
{
  int         fd;
  GHashTable *victims;   /* pids named since the log was opened, not yet asked for */
  gint64      n_named;   /* victims named since then, asked for or not */
};

static gboolean
in_initial_pid_namespace (void)
{
  char link[64];
  ssize_t n = readlink ("/proc/self/ns/pid", link, sizeof link - 1);

  if (n <= 0)
    return FALSE;
  link[n] = '\0';
  return g_str_equal (link, INITIAL_PID_NAMESPACE);
}

TideKernelLog *
tide_kernel_log_open (void)
{
  TideKernelLog *self;
  int fd;

  if (!in_initial_pid_namespace ())
    return NULL;
  fd = open ("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  /* What the kernel logged before the recording is no victim of it. */
  if (lseek (fd, 0, SEEK_END) < 0)
    {
      close (fd);
      return NULL;
    }
  self = g_new0 (TideKernelLog, 1);
  self->fd = fd;
  self->victims = g_hash_table_new (NULL, NULL);
  return self;
}

void
tide_kernel_log_free (TideKernelLog *self)
{
  if (self == NULL)
    return;
  close (self->fd);
  g_hash_table_unref (self->victims);
  g_free (self);
}

int
tide_kernel_log_parse_oom_victim (const char *record)
{
  const char *at = strstr (record, VICTIM_MARK);
  char *end = NULL;
  long pid;

  if (at == NULL)
    return -1;
  at += strlen (VICTIM_MARK);
  errno = 0;
  pid = strtol (at, &end, 10);
  if (errno != 0 || end == at || !g_ascii_isdigit (*at) || pid <= 0 || pid > INT_MAX ||
      end[0] != ' ' || end[1] != '(')
    return -1;
  return (int) pid;
}

/* Every record the kernel logged since the last read: "PRI,SEQ,TS,FLAGS;
 * TEXT\n", then its dictionary.  Records the kernel overwrote before they
 * were read (EPIPE) are lost; the read goes on after them. */
static void
read_new_records (TideKernelLog *self)
{
  char record[RECORD_MAX + 1];

  for (;;)
    {
      ssize_t n = read (self->fd, record, RECORD_MAX);
      char *text;
      int pid;

      if (n < 0 && (errno == EPIPE || errno == EINTR))
        continue;
      if (n <= 0)
        return;
      record[n] = '\0';
      text = strchr (record, ';');
      if (text == NULL)
        continue;
      *strchrnul (text, '\n') = '\0';
      if ((pid = tide_kernel_log_parse_oom_victim (text + 1)) < 0)
        continue;
      g_hash_table_add (self->victims, GINT_TO_POINTER (pid));
      self->n_named++;
    }
}

gboolean
tide_kernel_log_is_oom_victim (TideKernelLog *self,
                               int            pid,
                               gint64         kills,
                               guint          patience_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) patience_ms * G_TIME_SPAN_MILLISECOND;

  g_return_val_if_fail (self != NULL, FALSE);

  for (;;)
    {
      read_new_records (self);
      if (g_hash_table_remove (self->victims, GINT_TO_POINTER (pid)))
        return TRUE;
      if (self->n_named >= kills || g_get_monotonic_time () >= deadline)
        return FALSE;
      g_usleep (5 * G_TIME_SPAN_MILLISECOND);
    }
}
