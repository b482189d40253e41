/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What the scenarios of test-preload-e2e share (tide-test-preload.h).
 */
#include "config.h"

#include "preload-target.h"
#include "tide-test-preload.h"
#include "tide-test-util.h"
#include "tide-wire.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long RunOptions.stale_answers holds the answer to an exit barrier. */
#define STALE_EXIT_HOLD_US (300 * G_TIME_SPAN_MILLISECOND)

void
conn_free (gpointer data)
{
  Conn *c = data;

  if (c->fd >= 0)
    close (c->fd);
  g_byte_array_unref (c->bytes);
  g_free (c);
}

void
run_free (Run *run)
{
  g_ptr_array_unref (run->conns);
  g_string_free (run->out, TRUE);
  g_free (run);
}

void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr (GError) error = NULL;

  f->dir = tide_test_make_dir ("tide-preload");
  g_assert_no_error (error);
  f->sock_path = g_build_filename (f->dir, "rec.sock", NULL);
}

void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_unlink (f->sock_path);
  g_rmdir (f->dir);
  g_free (f->sock_path);
  g_free (f->dir);
}

int
listen_on (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpuint (strlen (path), <, sizeof sa.sun_path);
  strcpy (sa.sun_path, path);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &sa, sizeof sa), ==, 0);
  g_assert_cmpint (listen (fd, 64), ==, 0);
  return fd;
}

/* Every message must hold whole, well-formed records. */
void
conn_take (Conn          *c,
           const guint8  *msg,
           gssize         len)
{
  gssize off = 0;

  g_assert_cmpint (len, <=, TIDE_WIRE_MAX_MESSAGE);
  while (off < len)
    {
      const TideWireHeader *h = (const void *) (msg + off);

      g_assert_cmpint (len - off, >=, (gssize) sizeof *h);
      g_assert_cmpuint (h->len, >=, sizeof *h);
      g_assert_cmpuint (h->len % 8, ==, 0);
      g_assert_cmpint (off + h->len, <=, len);
      /* Sent before the step's barrier is answered: the marker that
       * waits there reads it first, and the next one waits too. */
      if (h->type == TIDE_WIRE_STEP && c->ask_step_waits)
        {
          TideWireStepWaitRequest request = {
            .h = { .type = TIDE_WIRE_STEP_WAIT_REQUEST, .len = sizeof request },
            .patience_ms = TIDE_WIRE_STEP_WAIT_MS,
          };

          g_assert_cmpint (send (c->fd, &request, sizeof request, MSG_NOSIGNAL), ==,
                           sizeof request);
        }
      /* Answered as the recorder does: the process may exit now. */
      if (h->type == TIDE_WIRE_EXIT_BARRIER)
        {
          const TideWireBarrier *b = (const void *) h;

          g_assert_cmpuint (h->len, ==, sizeof *b);
          if (c->stale_answers && b->reason == TIDE_BARRIER_EXIT)
            {
              c->exit_answer = *h;
              c->exit_answer_due_us = g_get_monotonic_time () + STALE_EXIT_HOLD_US;
            }
          else
            g_assert_cmpint (send (c->fd, h, sizeof *h, MSG_NOSIGNAL), ==, sizeof *h);
          if (c->stale_answers && b->reason == TIDE_BARRIER_STEP)
            g_assert_cmpint (send (c->fd, h, sizeof *h, MSG_NOSIGNAL), ==, sizeof *h);
          c->n_barriers++;
          c->n_exits += b->reason == TIDE_BARRIER_EXIT;
          c->n_forks += b->reason == TIDE_BARRIER_FORK;
          c->n_step_waits += b->reason == TIDE_BARRIER_STEP;
        }
      off += h->len;
    }
  g_byte_array_append (c->bytes, msg, (guint) len);
  c->n_messages++;
}

char **
target_env (const Fixture    *f,
            const RunOptions *o)
{
  char **env = g_get_environ ();

  env = g_environ_unsetenv (env, TIDE_ENV_SOCKET);
  env = g_environ_unsetenv (env, TIDE_ENV_ALL);
  env = g_environ_unsetenv (env, "LD_PRELOAD");
  env = g_environ_unsetenv (env, TIDE_ENV_SAMPLE_BYTES);
  env = g_environ_unsetenv (env, "TIDEMARK_UNWIND_MEMO");
  env = g_environ_unsetenv (env, "TIDEMARK_UNWIND_CHECK");
  env = g_environ_unsetenv (env, TIDE_ENV_SEED);
  if (o->no_perturb)
    env = g_environ_unsetenv (env, "MALLOC_PERTURB_");
  if (o->seed != NULL)
    env = g_environ_setenv (env, TIDE_ENV_SEED, o->seed, TRUE);
  if (o->preload)
    {
      g_autofree char *list = g_strjoin (" ", TIDE_PRELOAD_PATH, o->also_preload, NULL);

      env = g_environ_setenv (env, "LD_PRELOAD", list, TRUE);
    }
  if (o->sample_bytes > 0)
    {
      g_autofree char *bytes = g_strdup_printf ("%u", o->sample_bytes);

      env = g_environ_setenv (env, TIDE_ENV_SAMPLE_BYTES, bytes, TRUE);
    }
  if (o->socket)
    env = g_environ_setenv (env, TIDE_ENV_SOCKET, f->sock_path, TRUE);
  if (o->all)
    env = g_environ_setenv (env, TIDE_ENV_ALL, "1", TRUE);
  if (o->unwind_check)
    env = g_environ_setenv (env, "TIDEMARK_UNWIND_CHECK", "1", TRUE);
  env = g_environ_unsetenv (env, "PYTHONMALLOC");
  if (o->pythonmalloc != NULL)
    env = g_environ_setenv (env, "PYTHONMALLOC", o->pythonmalloc, TRUE);
  if (o->python)
    {
      /* The bootstrap that `tidemark record` puts first: it has the
       * preload wrap CPython's allocators. */
      g_autofree char *dir = g_build_filename (g_getenv ("TIDEMARK_BUILD_ROOT"), "capture",
                                               "python", NULL);

      env = g_environ_setenv (env, "PYTHONPATH", dir, TRUE);
    }
  return env;
}

/* The exit answers held (RunOptions.stale_answers) whose time came. */
static void
send_held_answers (Run *run)
{
  for (guint i = 0; i < run->conns->len; i++)
    {
      Conn *c = g_ptr_array_index (run->conns, i);

      if (c->exit_answer_due_us == 0 || g_get_monotonic_time () < c->exit_answer_due_us)
        continue;
      if (c->fd >= 0)
        send (c->fd, &c->exit_answer, sizeof c->exit_answer, MSG_NOSIGNAL);
      c->exit_answer_due_us = 0;
    }
}

/* RunOptions.figures_after: the figures as of the moment the target said
 * it, asked of its first connection as the recorder asks a process that
 * marks no steps at another's step end. */
static void
ask_figures_once_said (Run              *run,
                       const RunOptions *o)
{
  struct timespec now;
  TideWireFiguresRequest request = {
    .h = { .type = TIDE_WIRE_FIGURES_REQUEST, .len = sizeof request },
  };
  Conn *c;

  if (o->figures_after == NULL || run->figures_at_ns != 0 || run->conns->len == 0 ||
      strstr (run->out->str, o->figures_after) == NULL)
    return;
  c = g_ptr_array_index (run->conns, 0);
  clock_gettime (CLOCK_MONOTONIC, &now);
  request.at_ns = (guint64) now.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) now.tv_nsec;
  g_assert_cmpint (send (c->fd, &request, sizeof request, MSG_NOSIGNAL), ==, sizeof request);
  run->figures_at_ns = request.at_ns;
}

/* One poll round over the listener, the connections and the target's
 * stdout.  Returns FALSE when nothing is left open. */
gboolean
pump (Run              *run,
      int              *listen_fd,
      int              *out_fd,
      const RunOptions *o)
{
  struct pollfd fds[64];
  guint8 *buf = g_malloc (TIDE_WIRE_MAX_MESSAGE + 1);
  nfds_t n = 0;
  gboolean open_ = FALSE;

  if (*listen_fd >= 0)
    fds[n++] = (struct pollfd) { .fd = *listen_fd, .events = POLLIN };
  if (*out_fd >= 0)
    fds[n++] = (struct pollfd) { .fd = *out_fd, .events = POLLIN };
  for (guint i = 0; i < run->conns->len && n < G_N_ELEMENTS (fds); i++)
    {
      Conn *c = g_ptr_array_index (run->conns, i);

      if (c->fd >= 0)
        fds[n++] = (struct pollfd) { .fd = c->fd, .events = POLLIN };
    }
  poll (fds, n, 50);
  for (nfds_t i = 0; i < n; i++)
    {
      int fd = fds[i].fd;
      gssize r;

      if (fds[i].revents == 0)
        continue;
      if (fd == *listen_fd)
        {
          int cfd;

          while ((cfd = accept4 (fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
            {
              Conn *c = g_new0 (Conn, 1);

              c->fd = cfd;
              c->bytes = g_byte_array_new ();
              c->ask_step_waits = o->ask_step_waits;
              c->stale_answers = o->stale_answers;
              g_ptr_array_add (run->conns, c);
            }
        }
      else if (fd == *out_fd)
        {
          r = read (fd, buf, TIDE_WIRE_MAX_MESSAGE);
          if (r > 0)
            g_string_append_len (run->out, (const char *) buf, r);
          else if (r == 0)
            {
              close (fd);
              *out_fd = -1;
            }
        }
      else
        for (guint k = 0; k < run->conns->len; k++)
          {
            Conn *c = g_ptr_array_index (run->conns, k);

            if (c->fd != fd)
              continue;
            r = recv (fd, buf, TIDE_WIRE_MAX_MESSAGE + 1, 0);
            if (r > 0)
              conn_take (c, buf, r);
            c->closed_unanswered |= r == 0 && c->exit_answer_due_us != 0;
            if (r == 0 || (o->kill_after >= 0 && c->n_messages >= (guint) o->kill_after))
              {
                /* EOF, or the recorder "dies": both ends of it go away. */
                close (fd);
                c->fd = -1;
                if (r > 0 && *listen_fd >= 0)
                  {
                    close (*listen_fd);
                    *listen_fd = -1;
                  }
              }
          }
    }
  send_held_answers (run);
  ask_figures_once_said (run, o);
  for (guint i = 0; i < run->conns->len; i++)
    open_ |= ((Conn *) g_ptr_array_index (run->conns, i))->fd >= 0;
  g_free (buf);
  return open_ || *out_fd >= 0;
}

Run *
run_target (Fixture          *f,
            const RunOptions *o)
{
  const char *target[] = { TIDE_TARGET_PATH, o->mode, NULL };
  const char * const *argv = o->argv != NULL ? o->argv : target;
  g_auto (GStrv) env = target_env (f, o);
  g_autoptr (GError) error = NULL;
  Run *run = g_new0 (Run, 1);
  int listen_fd = o->socket ? listen_on (f->sock_path) : -1;
  int out_fd = -1;
  gboolean exited = FALSE;
  gint64 deadline = g_get_monotonic_time () + RUN_TIMEOUT_US;
  gint64 kill_at = 0;

  run->conns = g_ptr_array_new_with_free_func (conn_free);
  run->out = g_string_new (NULL);
  g_spawn_async_with_pipes (NULL, (char **) argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                            &run->pid, NULL, &out_fd, NULL, &error);
  g_assert_no_error (error);
  for (;;)
    {
      gboolean open_ = pump (run, &listen_fd, &out_fd, o);

      if (o->sigkill && kill_at == 0 && strstr (run->out->str, "ready\n") != NULL)
        kill_at = g_get_monotonic_time () + 200 * 1000;
      if (kill_at != 0 && g_get_monotonic_time () >= kill_at && !exited)
        kill (run->pid, SIGKILL);
      if (!exited && waitpid (run->pid, &run->status, WNOHANG) == run->pid)
        exited = TRUE;
      /* After the exit, one more round picks up connections still queued. */
      if (exited && !open_ && !pump (run, &listen_fd, &out_fd, o))
        break;
      if (g_get_monotonic_time () > deadline)
        {
          kill (run->pid, SIGKILL);
          g_error ("target %s did not finish", o->mode);
        }
    }
  if (listen_fd >= 0)
    close (listen_fd);
  g_unlink (f->sock_path);
  return run;
}

const TideWireHello *
conn_hello (const Conn *c)
{
  const TideWireHello *hello = (const void *) c->bytes->data;

  g_assert_cmpuint (c->bytes->len, >=, sizeof *hello);
  g_assert_cmpuint (hello->h.type, ==, TIDE_WIRE_HELLO);
  g_assert_cmpuint (hello->wire_version, ==, TIDE_WIRE_VERSION);
  return hello;
}

guint64
out_pointer (const Run  *run,
             const char *key,
             guint       nth)
{
  g_auto (GStrv) lines = g_strsplit (run->out->str, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], key) && lines[i][strlen (key)] == ' ' && nth-- == 0)
      return g_ascii_strtoull (lines[i] + strlen (key) + 1, NULL, 16);
  g_error ("no line %s in the target's output", key);
  return 0;
}

guint32
out_child_pid (const Run *run)
{
  const char *line = strstr (run->out->str, "\nchild ");

  g_assert_nonnull (line);
  return (guint32) g_ascii_strtoull (line + strlen ("\nchild "), NULL, 10);
}

/* The span of the executable segments of @path_suffix that @c announced. */
void
mapped_span (const Conn *c,
             const char *path_suffix,
             guint64    *lo,
             guint64    *hi)
{
  const TideWireHeader *h;

  *lo = G_MAXUINT64;
  *hi = 0;
  FOR_EACH_RECORD (c, h)
    if (h->type == TIDE_WIRE_MAPPING
        && g_str_has_suffix (((const TideWireMapping *) h)->path, path_suffix))
      {
        *lo = MIN (*lo, ((const TideWireMapping *) h)->start);
        *hi = MAX (*hi, ((const TideWireMapping *) h)->end);
      }
  g_assert_cmpuint (*hi, >, *lo);
}

/* Every ALLOC carries frames, none of them inside the preload library. */
void
check_frames (const Conn *c)
{
  const TideWireHeader *h;
  guint64 lo, hi;

  mapped_span (c, "/libtidemark-preload.so", &lo, &hi);
  FOR_EACH_RECORD (c, h)
    if (h->type == TIDE_WIRE_ALLOC)
      {
        const TideWireAlloc *a = (const void *) h;

        g_assert_cmpuint (a->n_frames, >, 0);
        g_assert_cmpuint (h->len, ==, sizeof *a + 8 * a->n_frames);
        for (guint i = 0; i < a->n_frames; i++)
          g_assert_true (a->frames[i] < lo || a->frames[i] >= hi);
      }
}

void
check_no_drops (const Conn *c)
{
  const TideWireHeader *h;

  FOR_EACH_RECORD (c, h)
    g_assert_cmpuint (h->type, !=, TIDE_WIRE_DROPPED);
}

/* The run's one connection, which starts with HELLO. */
const Conn *
single_conn (const Run *run)
{
  const Conn *c;

  g_assert_cmpuint (run->conns->len, ==, 1);
  c = g_ptr_array_index (run->conns, 0);
  conn_hello (c);
  return c;
}

/* The one connection of a run whose target exited with status 0, and which
 * dropped nothing. */
const Conn *
clean_single_conn (const Run *run)
{
  const Conn *c;

  g_assert_true (WIFEXITED (run->status));
  g_assert_cmpint (WEXITSTATUS (run->status), ==, 0);
  c = single_conn (run);
  check_no_drops (c);
  return c;
}

const TideWireAlloc *
find_alloc (const Conn *c,
            guint64     size,
            guint       nth,
            guint      *index)
{
  const TideWireHeader *h;
  guint i = 0;

  FOR_EACH_RECORD (c, h)
    {
      if (h->type == TIDE_WIRE_ALLOC && ((const TideWireAlloc *) h)->size == size && nth-- == 0)
        {
          if (index != NULL)
            *index = i;
          return (const void *) h;
        }
      i++;
    }
  return NULL;
}

guint
count_allocs (const Conn *c,
              guint64     size)
{
  guint n = 0;

  while (find_alloc (c, size, n, NULL) != NULL)
    n++;
  return n;
}

/* Whether the block of the ALLOC numbered `after` was freed: in that
 * record itself, or by a FREE of addr after it. */
gboolean
freed_after (const Conn *c,
             guint64     addr,
             guint       after)
{
  const TideWireHeader *h;
  guint i = 0;

  FOR_EACH_RECORD (c, h)
    {
      /* Freed before it was sent: the ALLOC itself says so. */
      if (i == after && h->type == TIDE_WIRE_ALLOC && ((const TideWireAlloc *) h)->lifetime_ns != 0)
        return TRUE;
      if (i++ > after && h->type == TIDE_WIRE_FREE && ((const TideWireFree *) h)->addr == addr)
        return TRUE;
    }
  return FALSE;
}

void
check_known_allocs (const Run  *run,
                    const Conn *c)
{
  guint64 fn = out_pointer (run, "known_fn", 0);

  for (guint i = 0; i < KNOWN_N; i++)
    {
      guint index = 0;
      const TideWireAlloc *a = find_alloc (c, KNOWN_BASE + i, 0, &index);

      g_assert_nonnull (a);
      g_assert_cmpuint (count_allocs (c, KNOWN_BASE + i), ==, 1);
      g_assert_cmpfloat (a->weight, ==, 1.0);
      g_assert_cmpuint (a->kind, ==, TIDE_KIND_MALLOC);
      g_assert_cmpuint (a->scope_id, ==, 0);
      /* Innermost frame: the return address into target_known_allocs. */
      g_assert_cmpuint (a->frames[0], >, fn);
      g_assert_cmpuint (a->frames[0], <, fn + 512);
      if (i < KNOWN_FREED)
        {
          g_assert_cmpuint (a->addr, ==, out_pointer (run, "freed", i));
          g_assert_true (freed_after (c, a->addr, index));
        }
    }
}

void
check_steps (const Conn          *c,
             const char * const  *labels)
{
  const TideWireHeader *h;
  guint n = 0;

  FOR_EACH_RECORD (c, h)
    if (h->type == TIDE_WIRE_STEP)
      {
        g_assert_nonnull (labels[n]);
        g_assert_cmpstr (((const TideWireStep *) h)->label, ==, labels[n]);
        n++;
      }
  g_assert_null (labels[n]);
}

void
check_scopes (const Run  *run,
              const Conn *c)
{
  const TideWireHeader *h;
  guint32 outer = 0, inner = 0;
  guint i = 0, inner_at = 0, alloc_at = 0;
  const TideWireAlloc *a;

  FOR_EACH_RECORD (c, h)
    {
      const TideWireScopeDef *d = (const void *) h;

      if (h->type == TIDE_WIRE_SCOPE_DEF && strcmp (d->name, "outer") == 0)
        {
          g_assert_cmpuint (d->parent_id, ==, 0);
          outer = d->id;
        }
      else if (h->type == TIDE_WIRE_SCOPE_DEF && strcmp (d->name, "inner") == 0)
        {
          g_assert_cmpuint (d->parent_id, ==, outer);
          inner = d->id;
          inner_at = i;
        }
      i++;
    }
  g_assert_cmpuint (outer, >, 0);
  g_assert_cmpuint (inner, >, 0);
  g_assert_cmpuint (inner, !=, outer);
  a = find_alloc (c, SCOPED_SIZE, 0, &alloc_at);
  g_assert_nonnull (a);
  g_assert_cmpuint (a->scope_id, ==, inner);
  g_assert_cmpuint (inner_at, <, alloc_at);
  g_assert_cmpuint (a->frames[0], >, out_pointer (run, "scoped_fn", 0));
  g_assert_cmpuint (a->frames[0], <, out_pointer (run, "scoped_fn", 0) + 512);
}

/* Thread allocations come from other tids, each announced by THREAD first,
 * and all before the "after-threads" step. */
void
check_threads (const Conn *c,
               guint32     main_tid)
{
  g_autoptr (GHashTable) announced = g_hash_table_new (NULL, NULL);
  const TideWireHeader *h;
  guint n = 0;
  gboolean stepped = FALSE;

  FOR_EACH_RECORD (c, h)
    {
      const TideWireAlloc *a = (const void *) h;

      if (h->type == TIDE_WIRE_THREAD)
        g_hash_table_add (announced, GUINT_TO_POINTER (h->tid));
      if (h->type == TIDE_WIRE_STEP && strcmp (((const TideWireStep *) h)->label,
                                               "after-threads") == 0)
        stepped = TRUE;
      if (h->type != TIDE_WIRE_ALLOC || a->size < THREAD_BASE || a->size >= THREAD_BASE + THREAD_N)
        continue;
      g_assert_false (stepped);
      g_assert_cmpuint (h->tid, !=, main_tid);
      g_assert_true (g_hash_table_contains (announced, GUINT_TO_POINTER (h->tid)));
      n++;
    }
  g_assert_cmpuint (n, ==, THREAD_N * THREAD_ALLOCS);
  for (guint t = 0; t < THREAD_N; t++)
    g_assert_cmpuint (count_allocs (c, THREAD_BASE + t), ==, THREAD_ALLOCS);
}
