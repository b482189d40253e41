/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload.c: start-up, environment, the connection to the recorder,
 * fork and exit.
 *
 * With $TIDEMARK_SOCKET unset, or when the connect fails, the library stays
 * dormant: every hook calls the real function and nothing else.  When a send
 * finds the recorder gone (EPIPE, ECONNRESET, ...) the library goes dormant
 * for good.  The socket is never closed while the process may still use it,
 * so its number cannot be reused under us by the program.
 */
#include "config.h"

#include "tide-preload-private.h"

#include "tide-preload-buffer.h"
#include "tide-preload-encode.h"
#include "tide-preload-objects.h"
#include "tide-preload-own.h"
#include "tide-preload-python.h"
#include "tide-preload-unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Keep the socket away from the low numbers that shells and daemons dup2
 * over by habit. */
#define TIDE_FD_FLOOR 1000

__thread TideThread tide_tls __attribute__ ((tls_model ("initial-exec")));

TideState tide_state = {
  .threshold = SIZE_MAX,
  .fd = -1,
};

static bool tide_atfork_done;

/* The connection's reads: the answer to a barrier, which the thread that
 * sent it waits for, and the recorder's figures requests, which the
 * flusher takes.  A reader holds this from looking at a record to taking
 * it, so that neither takes the other's. */
static pthread_mutex_t recv_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under recv_lock: the threads that wait for the answer to a barrier
 * (wait_for_answer()).  An answer that comes while none does answers one
 * whose wait ended first. */
static int answer_waiters;

uint64_t
tide_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

uint32_t
tide_thread_tid (void)
{
  if (TIDE_UNLIKELY (tide_tls.tid == 0))
    tide_tls.tid = (uint32_t) syscall (SYS_gettid);
  return tide_tls.tid;
}

void
tide_go_dormant (void)
{
  atomic_store (&tide_state.active, 0);
  atomic_store (&tide_state.free_mode, TIDE_FREE_IGNORE);
  atomic_store (&tide_state.threshold, SIZE_MAX);
  atomic_store (&tide_state.fd, -1);
}

/* Sends one message.  A socket that stays full past the patience drops it
 * and counts its records; any other error means the recorder is gone. */
bool
tide_conn_send (const void *msg,
                uint32_t    len)
{
  static _Atomic int stalled;
  int fd = atomic_load_explicit (&tide_state.fd, memory_order_acquire);
  int patience = tide_state.all ? TIDE_SEND_PATIENCE_ALL_MS : TIDE_SEND_PATIENCE_MS;
  int waited = 0;

  if (fd < 0 || len == 0)
    return false;
  for (;;)
    {
      int flags = MSG_NOSIGNAL | (atomic_load (&stalled) ? MSG_DONTWAIT : 0);

      if (send (fd, msg, len, flags) >= 0)
        {
          atomic_store (&stalled, 0);
          return true;
        }
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == ENOMEM)
        {
          waited += TIDE_SEND_TIMEOUT_MS;
          if (!(flags & MSG_DONTWAIT) && waited < patience)
            continue;
          atomic_store (&stalled, 1);
          atomic_fetch_add (&tide_state.dropped, tide_wire_count_records (msg, len));
        }
      else
        tide_go_dormant ();
      return false;
    }
}

/* HELLO, MAPPING, SCOPE_DEF: after what this thread buffered before. */
void
tide_send_direct (const void *rec,
                  uint32_t    len)
{
  tide_buffer_flush_self ();
  tide_conn_send (rec, len);
}

static int
conn_open (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  struct timeval tv = { .tv_sec = TIDE_SEND_TIMEOUT_MS / 1000,
                        .tv_usec = (TIDE_SEND_TIMEOUT_MS % 1000) * 1000 };
  int sndbuf = 4 << 20;
  int fd, high;

  if (strlen (path) >= sizeof sa.sun_path)
    return -1;
  strcpy (sa.sun_path, path);
  fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) != 0)
    {
      close (fd);
      return -1;
    }
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  high = fcntl (fd, F_DUPFD_CLOEXEC, TIDE_FD_FLOOR);
  if (high >= 0)
    {
      close (fd);
      fd = high;
    }
  return fd;
}

static void
send_hello (uint32_t extra_flags)
{
  _Alignas (8) unsigned char rec[TIDE_ENCODE_STRING_MAX];
  uint32_t len = tide_encode_hello (rec, sizeof rec, tide_stamp (),
                                    (uint32_t) getpid (), (uint32_t) getppid (),
                                    (tide_state.all ? TIDE_HELLO_ALL : 0) | extra_flags,
                                    tide_state.sample_bytes, tide_state.exe);

  tide_send_direct (rec, len);
}

void
tide_send_dropped (void)
{
  _Alignas (8) unsigned char rec[sizeof (TideWireDropped)];
  uint64_t n = atomic_exchange (&tide_state.dropped, 0);
  uint32_t len;

  if (n == 0)
    return;
  len = tide_encode_dropped (rec, sizeof rec, tide_stamp (), n);
  if (!tide_conn_send (rec, len))
    atomic_fetch_add (&tide_state.dropped, n - 1);  /* the send counted itself */
}

static void
read_env (void)
{
  const char *all = getenv (TIDE_ENV_ALL);
  const char *sync_steps = getenv (TIDE_ENV_SYNC_STEPS);
  const char *bytes = getenv (TIDE_ENV_SAMPLE_BYTES);
  const char *seed = getenv (TIDE_ENV_SEED);
  ssize_t n;

  tide_state.all = all != NULL && strcmp (all, "1") == 0;
  tide_state.sync_steps = sync_steps != NULL && strcmp (sync_steps, "1") == 0;
  tide_state.sample_bytes = TIDE_DEFAULT_SAMPLE_BYTES;
  if (bytes != NULL && *bytes != '\0')
    {
      unsigned long long v = strtoull (bytes, NULL, 10);

      if (v > 0)
        tide_state.sample_bytes = v;
    }
  tide_state.have_seed = seed != NULL && *seed != '\0';
  if (tide_state.have_seed)
    tide_state.seed = strtoull (seed, NULL, 0);
  else
    tide_state.seed = tide_now_ns () ^ ((uint64_t) getpid () << 32);
  n = readlink ("/proc/self/exe", tide_state.exe, sizeof tide_state.exe - 1);
  tide_state.exe[n > 0 ? n : 0] = '\0';
}

/* The connection is up: announce this process and start recording. */
static void
start_recording (uint32_t hello_flags)
{
  tide_state.pid = getpid ();
  /* Its first step end waits for the recorder's reading unasked: a
   * request sent at the HELLO may come after a first step that ends at
   * once. */
  atomic_store (&tide_state.step_wait_ms, TIDE_WIRE_FIRST_STEP_WAIT_MS);
  send_hello (hello_flags);
  tide_objects_announce ();
  tide_scope_resend_all ();
  tide_python_resend_all ();
  atomic_store (&tide_state.free_mode, tide_state.all ? TIDE_FREE_ALL : TIDE_FREE_FILTER);
  atomic_store (&tide_state.threshold, tide_state.all ? 0 : (size_t) tide_state.sample_bytes);
  atomic_store (&tide_state.active, 1);
  tide_flusher_start ();
}

static void wait_for_answer (uint64_t patience_ms, TideBarrierReason reason);

static void
fork_prepare (void)
{
  tide_tls.guard++;
  tide_scope_fork_prepare ();
  tide_objects_fork_prepare ();
  tide_addrset_lock_all (&tide_state.addrset);
  tide_heap_lock ();
}

static void
fork_parent (void)
{
  tide_heap_unlock ();
  tide_addrset_unlock_all (&tide_state.addrset);
  tide_objects_fork_parent ();
  tide_scope_fork_parent ();
  tide_tls.guard--;
}

/* The child: a new process on a new connection.  The parent's unsent records
 * stay with the parent, which sends its own copy. */
static void
fork_child (void)
{
  int old_fd = atomic_load (&tide_state.fd);
  bool was_active = tide_active ();

  tide_own_fork_child ();
  /* First: whatever the handlers below write may be a new page. */
  if (was_active)
    tide_preload_note_own_at_fork ();
  tide_tls.tid = 0;
  tide_tls.seeded = false;
  /* The parent's flusher may have held it: no one holds it here, and no
   * thread of the child waits for an answer. */
  pthread_mutex_init (&recv_lock, NULL);
  answer_waiters = 0;
  tide_heap_reset_lock ();
  tide_addrset_reset_locks (&tide_state.addrset);
  /* The parent's blocks are not the child's to record; but a place held
   * for one of them must still be let go when the child frees it. */
  tide_addrset_mark_all (&tide_state.addrset, TIDE_ADDR_INHERITED);
  tide_objects_fork_child ();
  tide_scope_fork_child ();
  tide_buffer_fork_child ();
  tide_preload_allocator_free_fork_child ();
  atomic_store (&tide_state.active, 0);
  atomic_store (&tide_state.fd, -1);
  if (was_active && old_fd >= 0)
    {
      int fd;

      close (old_fd);
      fd = conn_open (tide_state.socket_path);
      if (fd >= 0)
        {
          atomic_store (&tide_state.fd, fd);
          start_recording (TIDE_HELLO_FORKED);
          tide_preload_send_allocator_free_at_fork ();
          /* Before the child writes a page: the recorder notes what it
           * shares with its parent, to tell copy-on-write apart later. */
          wait_for_answer (TIDE_FORK_WAIT_MS, TIDE_BARRIER_FORK);
        }
      else
        tide_go_dormant ();
    }
  tide_tls.guard--;
}

static void
start (const char *path)
{
  int fd;

  if (strlen (path) >= sizeof tide_state.socket_path)
    return;
  strcpy (tide_state.socket_path, path);
  read_env ();
  if (!tide_addrset_init (&tide_state.addrset))
    return;
  fd = conn_open (path);
  if (fd < 0)
    return;
  tide_unwind_init ();
  tide_objects_init ();
  tide_buffer_init ();
  if (!tide_atfork_done)
    {
      pthread_atfork (fork_prepare, fork_parent, fork_child);
      tide_atfork_done = true;
    }
  atomic_store (&tide_state.fd, fd);
  tide_preload_allocator_free_init ();
  start_recording (0);
  tide_pyalloc_hook_arenas ();
}

__attribute__ ((constructor)) static void
tide_preload_init (void)
{
  const char *path;
  int saved = errno;

  tide_tls.guard++;
  tide_real_resolve ();
  path = getenv (TIDE_ENV_SOCKET);
  if (path != NULL && *path != '\0')
    start (path);
  tide_tls.guard--;
  errno = saved;
}

/* How long the step wait that @request (@got bytes of it) asks for
 * lasts: never so long that a recorder that asks for more could hang the
 * program, nor none. */
static int
step_wait_patience (const TideWireStepWaitRequest *request,
                    ssize_t                        got)
{
  uint64_t ms = got >= (ssize_t) sizeof *request ? request->patience_ms : 0;

  if (ms == 0)
    return TIDE_WIRE_STEP_WAIT_MS;
  return (int) (ms < TIDE_WIRE_FIRST_STEP_WAIT_MS ? ms : TIDE_WIRE_FIRST_STEP_WAIT_MS);
}

/* Whether @record (@got bytes of it) is a request the recorder sent
 * unasked: a step wait is taken at once (the next marker waits), a
 * figures request is for the caller. */
static bool
take_request_record (const TideWireFiguresRequest *record,
                     ssize_t                       got)
{
  if (got < (ssize_t) sizeof record->h)
    return false;
  if (record->h.type == TIDE_WIRE_STEP_WAIT_REQUEST)
    atomic_store (&tide_state.step_wait_ms,
                  step_wait_patience ((const TideWireStepWaitRequest *) record, got));
  return record->h.type == TIDE_WIRE_STEP_WAIT_REQUEST ||
         record->h.type == TIDE_WIRE_FIGURES_REQUEST;
}

/* Whether @record (@got bytes of it) answers a barrier whose wait is over
 * (a step wait that the recorder met after it gave up): under recv_lock.
 * Left on the connection, it would stop the requests behind it. */
static bool
is_stale_answer (const TideWireFiguresRequest *record,
                 ssize_t                       got)
{
  return got >= (ssize_t) sizeof record->h && record->h.type == TIDE_WIRE_EXIT_BARRIER &&
         answer_waiters == 0;
}

/* Takes the recorder's requests waiting on the connection, without
 * waiting, and drops the answers no one waits for any more; TRUE, with
 * the latest figures request's time, where there was one.  An answer that
 * a thread waits for is left to it. */
bool
tide_conn_take_request (uint64_t *at_ns)
{
  int fd = atomic_load (&tide_state.fd);
  TideWireFiguresRequest request;
  bool taken = false;

  if (fd < 0)
    return false;
  pthread_mutex_lock (&recv_lock);
  for (;;)
    {
      ssize_t n = recv (fd, &request, sizeof request, MSG_PEEK | MSG_DONTWAIT);

      if (is_stale_answer (&request, n))
        {
          recv (fd, &request, sizeof request, MSG_DONTWAIT);
          continue;
        }
      if (n < (ssize_t) sizeof request || !take_request_record (&request, n) ||
          recv (fd, &request, sizeof request, MSG_DONTWAIT) != (ssize_t) sizeof request)
        break;
      if (request.h.type == TIDE_WIRE_FIGURES_REQUEST)
        {
          *at_ns = request.at_ns;
          taken = true;
        }
    }
  pthread_mutex_unlock (&recv_lock);
  return taken;
}

/* The flusher's pause between ticks, which a request from the recorder
 * ends at once: TRUE with its time.  A record that is not one (the answer
 * that a thread waits for), or a connection that hung up, would end every
 * poll at once: then it sleeps the tick. */
bool
tide_conn_wait_tick (uint64_t  tick_ns,
                     uint64_t *at_ns)
{
  int fd = atomic_load (&tide_state.fd);
  struct pollfd pfd = { .fd = fd, .events = POLLIN };
  struct timespec tick = { 0, (long) tick_ns };
  int n = fd >= 0 ? poll (&pfd, 1, (int) (tick_ns / 1000000)) : -1;

  if (n == 0)
    return false;
  if (n > 0 && pfd.revents == POLLIN && tide_conn_take_request (at_ns))
    return true;
  nanosleep (&tick, NULL);
  return false;
}

/* Whether @answer (@got bytes of it) answers @barrier: the recorder sends
 * a barrier's own header back.  An answer to an earlier barrier, whose
 * wait ended before the recorder met it, is not this one's: taken for it,
 * this wait would end before its own answer (the exit's, before the
 * recorder's last reading), and every later wait one answer early. */
static bool
answers_barrier (const TideWireFiguresRequest *answer,
                 ssize_t                       got,
                 const TideWireBarrier        *barrier)
{
  return got >= (ssize_t) sizeof answer->h && answer->h.type == barrier->h.type &&
         answer->h.tid == barrier->h.tid && answer->h.time_ns == barrier->h.time_ns;
}

/* Sends an EXIT_BARRIER and waits at most @patience_ms for the recorder to
 * answer, which it does once every record before it is handled.  A
 * figures request read meanwhile is let go: the figures went before the
 * barrier where they matter (the exit), and a fork's child may not ask its
 * allocator yet.  A step wait request is kept for the next marker.  The
 * answer to an earlier barrier is dropped. */
static void
await_answer (uint64_t          patience_ms,
              TideBarrierReason reason)
{
  TideWireBarrier barrier = { .h = { .type = TIDE_WIRE_EXIT_BARRIER, .len = sizeof barrier },
                              .reason = reason };
  int fd = atomic_load (&tide_state.fd);
  struct pollfd pfd = { .fd = fd, .events = POLLIN };
  uint64_t deadline = tide_now_ns () + patience_ms * 1000000;
  TideStamp st = tide_stamp ();
  TideWireFiguresRequest answer;

  barrier.h.tid = st.tid;
  barrier.h.time_ns = st.time_ns;
  if (fd < 0 || !tide_conn_send (&barrier, sizeof barrier))
    return;
  for (;;)
    {
      uint64_t now = tide_now_ns ();
      int n;

      if (now >= deadline)
        return;
      n = poll (&pfd, 1, (int) ((deadline - now) / 1000000) + 1);
      if (n > 0)
        {
          ssize_t got;

          pthread_mutex_lock (&recv_lock);
          got = recv (fd, &answer, sizeof answer, MSG_DONTWAIT);
          pthread_mutex_unlock (&recv_lock);
          /* The flusher took a request first, or this was one, or the
           * answer to an earlier barrier. */
          if ((got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ||
              take_request_record (&answer, got) ||
              (got >= (ssize_t) sizeof answer.h && answer.h.type == TIDE_WIRE_EXIT_BARRIER &&
               !answers_barrier (&answer, got, &barrier)))
            continue;
          /* The answer, or the end of the connection. */
          return;
        }
      if (n < 0 && errno != EINTR)
        return;
    }
}

static void
wait_for_answer (uint64_t          patience_ms,
                 TideBarrierReason reason)
{
  pthread_mutex_lock (&recv_lock);
  answer_waiters++;
  pthread_mutex_unlock (&recv_lock);
  await_answer (patience_ms, reason);
  pthread_mutex_lock (&recv_lock);
  answer_waiters--;
  pthread_mutex_unlock (&recv_lock);
}

/* The recorder measures each step's resident bytes from /proc/PID/pagemap
 * when the step's marker reaches it, and a process that has exited takes
 * its pages along.  So every process sends a barrier after everything else
 * as it exits and waits, at most TIDE_EXIT_BARRIER_MS, for the recorder to
 * send it back: then every step it marked is measured, and the recorder
 * has taken its last reading (RSS by class, copy-on-write) before its pages
 * go.  A dead recorder closes the socket, which ends the wait at once.
 * With TIDEMARK_SYNC_STEPS, every step marker waits so. */
void
tide_wait_for_recorder (TideBarrierReason reason)
{
  wait_for_answer (TIDE_EXIT_BARRIER_MS, reason);
}

/* A step marker that waits for the recorder's reading (asked, or the
 * process's first): at most @patience_ms, which its STEP record said; a
 * recorder later than that finds the step over and says so. */
void
tide_wait_for_step_reading (int patience_ms)
{
  wait_for_answer ((uint64_t) patience_ms, TIDE_BARRIER_STEP);
}

/* Everything this process has to say, sent, and the recorder's answer
 * awaited: the end of its records.  @last: from the destructor, after
 * which records are sent one by one. */
static void
flush_at_exit (bool last)
{
  int saved = errno;

  /* Not in a vfork child, which shares the parent's memory and buffers. */
  if (!tide_active () || getpid () != tide_state.pid)
    return;
  /* What the allocator holds free now, beside the recorder's last reading:
   * the reading taken at the last step end would not see what the program
   * freed since, and the last reading's anonymous memory would. */
  tide_preload_send_allocator_free ();
  tide_tls.guard++;
  /* A library loaded since the flusher's last look is announced now, so
   * the recorder can still name its code. */
  tide_objects_poll ();
  tide_buffer_flush_all ();
  tide_send_dropped ();
  tide_wait_for_recorder (TIDE_BARRIER_EXIT);
  if (last)
    atomic_store (&tide_state.final, 1);
  tide_tls.guard--;
  errno = saved;
}

/* The exit barrier, earlier in exit than the destructor below: Python's
 * atexit (tidemark/_boot.py) calls it before the interpreter frees what
 * the program kept, so that its last step and its last reading see that
 * memory as the program held it. */
TIDE_EXPORT void
tidemark_preload_exit_barrier (void)
{
  flush_at_exit (false);
}

/* Runs late in exit(): a preloaded object is finalized after the program
 * and its libraries.  Records made after this are sent one by one. */
__attribute__ ((destructor)) static void
tide_preload_fini (void)
{
  flush_at_exit (true);
}

/* _exit skips destructors; Python's worker processes end with os._exit. */
TIDE_EXPORT void
_exit (int status)
{
  tide_preload_fini ();
  if (tide_real._exit == NULL)
    tide_real_resolve ();
  if (tide_real._exit != NULL)
    tide_real._exit (status);
  for (;;)
    syscall (SYS_exit_group, status);
}
