/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-wait.c: waitpid, wait4, wait and waitid, which tell the
 * recorder how each child ended (TIDE_WIRE_CHILD_END).  The recorder reads
 * a dying process's end from /proc/PID/stat while it is a zombie; a parent
 * that reaps at once (a shell, multiprocessing's is_alive()) leaves
 * nothing there to read, and then only the parent's wait knows.  The
 * program gets exactly what the real call returned, errno included.
 */
#include "config.h"

#include "tide-preload-private.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void
send_child_end (pid_t pid,
                int   wait_status)
{
  _Alignas (8) unsigned char rec[sizeof (TideWireChildEnd)];
  TideWireChildEnd *r = (TideWireChildEnd *) rec;
  TideStamp st;
  int saved = errno;

  if (!tide_active () || !(WIFEXITED (wait_status) || WIFSIGNALED (wait_status)))
    return;
  tide_tls.guard++;
  st = tide_stamp ();
  memset (rec, 0, sizeof rec);
  r->h = (TideWireHeader) { .type = TIDE_WIRE_CHILD_END, .len = sizeof rec,
                            .tid = st.tid, .time_ns = st.time_ns };
  r->pid = (uint32_t) pid;
  r->wait_status = wait_status;
  /* Straight to the socket, not through this thread's buffer: a SIGCHLD
   * handler may reap while the thread it interrupted fills that buffer.
   * send() is async-signal-safe; the record's place among this thread's
   * others does not matter. */
  tide_conn_send (rec, sizeof rec);
  tide_tls.guard--;
  errno = saved;
}

static void
resolve (void *slot)
{
  if (*(void **) slot == NULL && !tide_tls.resolving)
    tide_real_resolve ();
}

TIDE_EXPORT pid_t
wait4 (pid_t          pid,
       int           *status,
       int            options,
       struct rusage *usage)
{
  int local = 0;
  pid_t r;

  resolve (&tide_real.wait4);
  r = tide_real.wait4 != NULL ? tide_real.wait4 (pid, &local, options, usage)
                              : (pid_t) syscall (SYS_wait4, pid, &local, options, usage);
  if (r > 0)
    {
      if (status != NULL)
        *status = local;
      send_child_end (r, local);
    }
  return r;
}

TIDE_EXPORT pid_t
waitpid (pid_t  pid,
         int   *status,
         int    options)
{
  int local = 0;
  pid_t r;

  resolve (&tide_real.waitpid);
  r = tide_real.waitpid != NULL ? tide_real.waitpid (pid, &local, options)
                                : (pid_t) syscall (SYS_wait4, pid, &local, options, NULL);
  if (r > 0)
    {
      if (status != NULL)
        *status = local;
      send_child_end (r, local);
    }
  return r;
}

TIDE_EXPORT pid_t
wait (int *status)
{
  return waitpid (-1, status, 0);
}

/* waitid's siginfo, as the status waitpid would have given. */
static int
status_from_siginfo (const siginfo_t *info)
{
  switch (info->si_code)
    {
    case CLD_EXITED: return (info->si_status & 0xff) << 8;
    case CLD_KILLED: return info->si_status & 0x7f;
    case CLD_DUMPED: return (info->si_status & 0x7f) | 0x80;
    default: return 0x7f;  /* stopped or continued: not an end */
    }
}

TIDE_EXPORT int
waitid (idtype_t   idtype,
        id_t       id,
        siginfo_t *info,
        int        options)
{
  int r;

  resolve (&tide_real.waitid);
  r = tide_real.waitid != NULL ? tide_real.waitid (idtype, id, info, options)
                               : (int) syscall (SYS_waitid, idtype, id, info, options, NULL);
  if (r == 0 && info != NULL && info->si_pid > 0)
    send_child_end (info->si_pid, status_from_siginfo (info));
  return r;
}
