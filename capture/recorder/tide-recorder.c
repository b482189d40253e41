/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The recorder behind `tidemark record`: starts the target with the preload
 * library, accepts one SOCK_SEQPACKET connection per process image, polls
 * /proc on a timer and feeds the recording (tide-recording.h).
 * Everything happens on one poll loop; symbolization and SQLite each have
 * their own thread.
 *
 * The target is never at the recorder's mercy: it is a plain child with its
 * own stdio, it gets no death signal, and a recorder that dies only closes
 * sockets, which the preload library treats as "stop recording".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gio/gio.h>

#include "tide-recorder-private.h"
#include "tide-storage-error.h"
#include "tide-wire.h"

/* How long processes that outlive the target may keep the trace open. */
#define STRAGGLER_GRACE_NS (G_GINT64_CONSTANT (1000000000))

static gboolean
open_socket (TideRecorder  *self,
             GError       **error)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int bufsize = 4 * 1024 * 1024;

  self->socket_dir = g_dir_make_tmp ("tidemark-XXXXXX", error);
  if (self->socket_dir == NULL)
    return FALSE;
  self->socket_path = g_build_filename (self->socket_dir, "socket", NULL);
  if (strlen (self->socket_path) >= sizeof addr.sun_path)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FILENAME_TOO_LONG,
                   "temporary directory path is too long for a socket: %s", self->socket_path);
      return FALSE;
    }
  strcpy (addr.sun_path, self->socket_path);

  self->listen_fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (self->listen_fd < 0)
    return tide_capture_set_errno_error (error, errno, "cannot create the recorder socket");
  /* Bigger buffers absorb bursts while the writer commits. */
  setsockopt (self->listen_fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof bufsize);
  if (bind (self->listen_fd, (struct sockaddr *) &addr, sizeof addr) != 0 ||
      listen (self->listen_fd, 64) != 0)
    return tide_capture_set_errno_error (error, errno, "cannot listen on the recorder socket");
  return TRUE;
}

static gboolean
open_signal_and_timer (TideRecorder  *self,
                       GError       **error)
{
  sigset_t mask;
  guint hz = self->options->poll_hz ? self->options->poll_hz : 50;
  struct itimerspec period = { 0 };

  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGHUP);
  sigaddset (&mask, SIGQUIT);
  if (sigprocmask (SIG_BLOCK, &mask, NULL) != 0)
    return tide_capture_set_errno_error (error, errno, "cannot block signals");
  self->signal_fd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (self->signal_fd < 0)
    return tide_capture_set_errno_error (error, errno, "cannot create a signalfd");

  self->timer_fd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (self->timer_fd < 0)
    return tide_capture_set_errno_error (error, errno, "cannot create a timer");
  period.it_interval.tv_nsec = 1000000000L / MIN (hz, 1000u);
  period.it_value = period.it_interval;
  if (hz == 1)
    period.it_interval = period.it_value = (struct timespec) { 1, 0 };
  if (timerfd_settime (self->timer_fd, 0, &period, NULL) != 0)
    return tide_capture_set_errno_error (error, errno, "cannot start the poll timer");
  return TRUE;
}

static char *
preload_value (const char *ours)
{
  const char *theirs = g_getenv ("LD_PRELOAD");

  if (theirs == NULL || *theirs == '\0')
    return g_strdup (ours);
  return g_strconcat (ours, ":", theirs, NULL);
}

static char **
target_environment (TideRecorder *self)
{
  const TideRecordOptions *o = self->options;
  char **env = g_get_environ ();
  g_autofree char *preload = preload_value (o->preload_path);
  g_autofree char *sample = g_strdup_printf ("%" G_GUINT64_FORMAT,
                                             o->sample_bytes ? o->sample_bytes
                                                             : TIDE_DEFAULT_SAMPLE_BYTES);

  env = g_environ_setenv (env, "LD_PRELOAD", preload, TRUE);
  env = g_environ_setenv (env, TIDE_ENV_SOCKET, self->socket_path, TRUE);
  env = g_environ_setenv (env, TIDE_ENV_SAMPLE_BYTES, sample, TRUE);
  /* NVTX ranges become scopes (tide-preload-nvtx.c), unless another tool
   * (Nsight) already takes them. */
  env = g_environ_setenv (env, "NVTX_INJECTION64_PATH", o->preload_path, FALSE);
  if (o->all)
    env = g_environ_setenv (env, TIDE_ENV_ALL, "1", TRUE);
  else
    env = g_environ_unsetenv (env, TIDE_ENV_ALL);
  if (o->sync_steps)
    env = g_environ_setenv (env, TIDE_ENV_SYNC_STEPS, "1", TRUE);
  else
    env = g_environ_unsetenv (env, TIDE_ENV_SYNC_STEPS);
  for (guint i = 0; o->extra_env && o->extra_env[i]; i++)
    {
      g_auto(GStrv) kv = g_strsplit (o->extra_env[i], "=", 2);
      if (kv[0] && kv[1])
        env = g_environ_setenv (env, kv[0], kv[1], TRUE);
    }
  return env;
}

/* A trace that reaches RLIMIT_FSIZE must end like one on a full disk
 * (tide-trace-writer.c): the write fails with EFBIG instead of SIGXFSZ
 * killing the recorder.  The target gets the disposition it would have had
 * (spawn_target). */
static void
ignore_file_size_signal (TideRecorder *self)
{
  struct sigaction old;

  if (sigaction (SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
    {
      signal (SIGXFSZ, SIG_IGN);
      self->restore_sigxfsz = TRUE;
    }
}

/* Starts the target with posix_spawnp: glibc's vfork-style spawn copies no
 * page tables, so the recorder (its libraries, SQLite's cache, its threads'
 * stacks) does not pay for a fork it would throw away at once, nor take a
 * copy-on-write fault on every page it touches afterwards.  The target starts with every
 * signal unblocked (the recorder blocks them for its signalfd), and an exec
 * failure comes back as the spawn's error, so "command not found" is a
 * clean error. */
static gboolean
spawn_target (TideRecorder  *self,
              GError       **error)
{
  g_auto(GStrv) env = target_environment (self);
  posix_spawnattr_t attr;
  sigset_t none;
  pid_t pid;
  int rc;

  sigemptyset (&none);
  posix_spawnattr_init (&attr);
  posix_spawnattr_setsigmask (&attr, &none);
  if (self->restore_sigxfsz)
    {
      sigset_t xfsz;

      sigemptyset (&xfsz);
      sigaddset (&xfsz, SIGXFSZ);
      posix_spawnattr_setsigdefault (&attr, &xfsz);
    }
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK
                                   | (self->restore_sigxfsz ? POSIX_SPAWN_SETSIGDEF : 0));
  rc = posix_spawnp (&pid, self->options->argv[0], NULL, &attr, self->options->argv, env);
  posix_spawnattr_destroy (&attr);
  if (rc != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (rc),
                   "cannot run %s: %s", self->options->argv[0], g_strerror (rc));
      return FALSE;
    }
  self->child = pid;
  return TRUE;
}

static void
accept_connections (TideRecorder *self)
{
  int fd;

  while ((fd = accept4 (self->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
    g_ptr_array_add (self->pending, GINT_TO_POINTER (fd));
}

/* The first message of a connection must start with HELLO; read into
 * @buffer.  Returns whether the connection left the pending ones (its
 * HELLO read, or closed). */
static gboolean
receive_pending_into (TideRecorder *self,
                      guint         index,
                      guint8       *buffer)
{
  int fd = GPOINTER_TO_INT (g_ptr_array_index (self->pending, index));
  g_autoptr(GError) error = NULL;
  TideRecProcess *process;
  const TideWireHeader *h = (const TideWireHeader *) buffer;
  ssize_t n = recv (fd, buffer, TIDE_WIRE_MAX_MESSAGE, 0);

  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return FALSE;
  /* The others keep their order (see run_loop()). */
  g_ptr_array_remove_index (self->pending, index);
  if (n < (ssize_t) sizeof *h || h->len > n)
    {
      close (fd);
      return TRUE;
    }
  process = tide_rec_process_new (self, fd, buffer, h->len, &error);
  if (process == NULL)
    {
      g_printerr ("tidemark: %s\n", error->message);
      close (fd);
      return TRUE;
    }
  tide_rec_process_receive (process, buffer + h->len, n - h->len);
  return TRUE;
}

static gboolean
receive_pending (TideRecorder *self,
                 guint         index)
{
  return receive_pending_into (self, index, self->rx_buffer);
}

/* Whether the connection @fd waits with the HELLO of a fork's child that
 * started by @until_ns. */
static gboolean
is_fork_by (int    fd,
            gint64 until_ns)
{
  TideWireHello hello;

  return recv (fd, &hello, sizeof hello, MSG_PEEK | MSG_DONTWAIT) == (ssize_t) sizeof hello &&
         hello.h.type == TIDE_WIRE_HELLO && (hello.flags & TIDE_HELLO_FORKED) != 0 &&
         (gint64) hello.h.time_ns <= until_ns;
}

/* Before a snapshot at @until_ns (tide_recording_set_admit_func()): the
 * waiting connections of fork's children that started by then, in the
 * order they connected and up to the first that is not one (an exec's
 * image must still be met after the records of the image it replaced).
 * Within another connection's message: with a buffer of their own. */
static void
admit_forks (gint64   until_ns,
             gpointer user_data)
{
  TideRecorder *self = user_data;
  g_autofree guint8 *buffer = NULL;

  accept_connections (self);
  while (self->pending->len > 0 &&
         is_fork_by (GPOINTER_TO_INT (g_ptr_array_index (self->pending, 0)), until_ns))
    {
      if (buffer == NULL)
        buffer = g_malloc (TIDE_WIRE_MAX_MESSAGE);
      if (!receive_pending_into (self, 0, buffer))
        break;  /* interrupted: the loop takes it in */
      self->pending_admitted++;
    }
}

static void
close_process (TideRecorder   *self,
               TideRecProcess *process)
{
  close (process->fd);
  process->fd = -1;
  tide_rec_process_end (process, tide_capture_now_ns ());
}

/* Drains a connection; stops after a burst so one process cannot starve
 * the others or the counter poll. */
static void
receive_process (TideRecorder   *self,
                 TideRecProcess *process)
{
  for (guint burst = 0; burst < 64; burst++)
    {
      ssize_t n = recv (process->fd, self->rx_buffer, TIDE_WIRE_MAX_MESSAGE, 0);

      if (n > 0)
        {
          tide_rec_process_receive (process, self->rx_buffer, n);
          continue;
        }
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
      close_process (self, process);
      return;
    }
}

static void
reap_children (TideRecorder *self)
{
  int status;
  pid_t pid;

  while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
    {
      if (pid != self->child)
        continue;
      self->child_exited = TRUE;
      self->child_exit_ns = tide_capture_now_ns ();
      self->child_wait_status = status;
      self->child_status = WIFEXITED (status) ? WEXITSTATUS (status)
                                              : 128 + WTERMSIG (status);
    }
}

/* Signals someone sent us (kill, a GUI's Stop) go on to the target; those
 * from the terminal (Ctrl+C) already reached it through its process group. */
static void
handle_signals (TideRecorder *self)
{
  struct signalfd_siginfo info;

  while (read (self->signal_fd, &info, sizeof info) == sizeof info)
    {
      if (info.ssi_signo == SIGCHLD)
        reap_children (self);
      else if (info.ssi_code != SI_KERNEL && self->child > 0 && !self->child_exited)
        kill (self->child, info.ssi_signo);
    }
}

static void
poll_counters (TideRecorder *self)
{
  guint64 expirations;

  if (read (self->timer_fd, &expirations, sizeof expirations) < 0)
    return;
  tide_recording_poll (self->recording, tide_capture_now_ns ());
}

static void
print_summary (TideRecorder *self,
               const char   *output)
{
  g_autofree char *memory = tide_recording_describe_peak (self->recording, output);
  g_autofree char *counts = tide_recording_describe_counts (self->recording);

  g_printerr ("tidemark: trace %s: %s, %s%s\n", output, counts, memory,
              tide_recording_get_total_dropped (self->recording) ? ", SOME EVENTS DROPPED" : "");
}

static gboolean
has_open_connections (TideRecorder *self)
{
  for (guint i = 0; i < self->connections->len; i++)
    if (((TideRecProcess *) g_ptr_array_index (self->connections, i))->fd >= 0)
      return TRUE;
  return self->pending->len > 0;
}

static gboolean
should_stop (TideRecorder *self)
{
  if (!self->child_exited)
    return FALSE;
  return !has_open_connections (self) ||
         tide_capture_now_ns () - self->child_exit_ns > STRAGGLER_GRACE_NS;
}

static void
run_loop (TideRecorder *self)
{
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (struct pollfd));
  g_autoptr(GPtrArray) owners = g_ptr_array_new ();

  while (!should_stop (self))
    {
      struct pollfd fixed[] = {
        { self->listen_fd, POLLIN, 0 },
        { self->signal_fd, POLLIN, 0 },
        { self->timer_fd, POLLIN, 0 },
      };

      g_array_set_size (fds, 0);
      g_ptr_array_set_size (owners, 0);
      g_array_append_vals (fds, fixed, G_N_ELEMENTS (fixed));
      for (guint i = 0; i < self->pending->len; i++)
        {
          struct pollfd p = { GPOINTER_TO_INT (g_ptr_array_index (self->pending, i)), POLLIN, 0 };
          g_array_append_val (fds, p);
        }
      for (guint i = 0; i < self->connections->len; i++)
        {
          TideRecProcess *proc = g_ptr_array_index (self->connections, i);
          struct pollfd p = { proc->fd, POLLIN, 0 };

          if (proc->fd < 0)
            continue;
          g_array_append_val (fds, p);
          g_ptr_array_add (owners, proc);
        }

      if (poll ((struct pollfd *) fds->data, fds->len, 100) < 0 && errno != EINTR)
        break;
      /* Cheap, and the target's exit is never missed even if a SIGCHLD is. */
      reap_children (self);

      {
        struct pollfd *pfd = (struct pollfd *) fds->data;
        guint n_pending = self->pending->len;
        guint64 admitted = self->pending_admitted;

        if (pfd[1].revents)
          handle_signals (self);
        if (pfd[2].revents)
          poll_counters (self);
        for (guint i = 0; i < owners->len; i++)
          if (pfd[3 + n_pending + i].revents)
            receive_process (self, g_ptr_array_index (owners, i));
        /* In the order they were accepted, which is the order they
         * connected: the images of one pid (an exec, or several in a
         * row) must be met in the order they started, and a recorder that
         * was slow to accept takes them in together.  @k: where pending
         * connection @i is now, after those before it that left.  Where a
         * snapshot took some in meanwhile (admit_forks()), the polled
         * ones are no longer where they were: the next poll tells. */
        for (guint i = 0, k = 0; i < n_pending && self->pending_admitted == admitted; i++)
          if (!pfd[3 + i].revents || !receive_pending (self, k))
            k++;
        if (pfd[0].revents)
          accept_connections (self);
      }
    }
}

/* The child's end, where its connection closed before it was reaped and
 * /proc could not tell. */
static void
record_child_status (TideRecorder *self)
{
  TideCaptureProcess *p;
  TideProcessEnd end;

  if (!self->child_exited)
    return;
  p = tide_recording_find_process (self->recording, self->child);
  if (p == NULL || tide_capture_process_get_end (p)->kind != TIDE_END_UNKNOWN)
    return;
  tide_capture_process_explain_wait (p, self->child_wait_status, &end);
  tide_capture_process_amend_end (p, 0, &end);
}


/* Ends every image; the recording writes the blocks nobody freed, and the
 * summaries. */
static gboolean
finish_trace (TideRecorder  *self,
              GError       **error)
{
  gint64 end_ns = tide_capture_now_ns ();

  self->finishing = TRUE;
  for (guint i = 0; i < self->connections->len; i++)
    {
      TideRecProcess *p = g_ptr_array_index (self->connections, i);

      if (p->fd >= 0)
        close_process (self, p);
    }
  record_child_status (self);
  tide_recording_write_meta_int (self->recording, "exit_status", self->child_status);
  return tide_recording_finish (self->recording, end_ns, error);
}

static void
recorder_clear (TideRecorder *self)
{
  for (guint i = 0; self->pending && i < self->pending->len; i++)
    close (GPOINTER_TO_INT (g_ptr_array_index (self->pending, i)));
  for (guint i = 0; self->connections && i < self->connections->len; i++)
    {
      TideRecProcess *p = g_ptr_array_index (self->connections, i);
      if (p->fd >= 0)
        close (p->fd);
      tide_rec_process_free (p);
    }
  g_clear_pointer (&self->connections, g_ptr_array_unref);
  g_clear_pointer (&self->reaped, g_hash_table_unref);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_pointer (&self->recording, tide_recording_free);
  tide_capture_close_fd (&self->listen_fd);
  tide_capture_close_fd (&self->signal_fd);
  tide_capture_close_fd (&self->timer_fd);
  if (self->socket_path != NULL)
    unlink (self->socket_path);
  if (self->socket_dir != NULL)
    rmdir (self->socket_dir);
  g_free (self->socket_path);
  g_free (self->socket_dir);
  g_free (self->rx_buffer);
  g_free (self->await_buffer);
}

static void
write_run_meta (TideRecorder *self)
{
  const TideRecordOptions *o = self->options;
  g_autofree char *command = g_strjoinv (" ", o->argv);

  tide_recording_write_run_meta (self->recording, "preload", command,
                                 o->all ? 0
                                 : o->sample_bytes ? (gint64) o->sample_bytes
                                 : TIDE_DEFAULT_SAMPLE_BYTES,
                                 o->all);
}

int
tide_record_run (const TideRecordOptions  *options,
                 GError                  **error)
{
  TideRecorder self = {
    .options = options,
    .listen_fd = -1, .signal_fd = -1, .timer_fd = -1,
  };
  g_autofree char *early_end = NULL;
  int status = -1;

  self.connections = g_ptr_array_new ();
  self.reaped = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  self.pending = g_ptr_array_new ();
  self.rx_buffer = g_malloc (TIDE_WIRE_MAX_MESSAGE);
  self.await_buffer = g_malloc (TIDE_WIRE_MAX_MESSAGE);

  /* Signals are blocked before any thread starts: a thread that left them
   * unblocked would take SIGCHLD (lost: the child's exit is never seen) or a
   * GUI's SIGINT (fatal) away from the signalfd. */
  if (!open_signal_and_timer (&self, error))
    goto out;
  ignore_file_size_signal (&self);
  self.recording = tide_recording_new (options->output, options->symbol_cache_dir, error);
  if (self.recording == NULL)
    goto out;
  tide_recording_set_sync_steps (self.recording, options->sync_steps);
  tide_recording_set_admit_func (self.recording, admit_forks, &self);
  write_run_meta (&self);

  if (!open_socket (&self, error) ||
      !spawn_target (&self, error))
    goto out;
  /* After the spawn: NVML can take a while to start, the target need not. */
  tide_recording_open_nvml (self.recording);

  run_loop (&self);
  if (!finish_trace (&self, error))
    goto out;
  status = self.child_status;
  early_end = tide_recording_describe_early_end (self.recording);
  /* Said even with --quiet: the trace is not all the user asked for. */
  if (early_end != NULL)
    g_printerr ("tidemark: %s\n", early_end);

  if (!options->quiet)
    print_summary (&self, options->output);
  if (tide_recording_get_total_dropped (self.recording))
    g_printerr ("tidemark: %" G_GINT64_FORMAT " records were dropped because the recorder "
                "fell behind; sizes and counts are low by that much\n",
                tide_recording_get_total_dropped (self.recording));

out:
  recorder_clear (&self);
  if (status < 0)
    tide_capture_remove_trace (options->output);
  return status;
}
