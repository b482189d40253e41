/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-recorder-private.h: the state of `tidemark record`, shared by its files.
 */
#pragma once

#include <sys/types.h>

#include "tide-capture-process.h"
#include "tide-recorder.h"
#include "tide-recording.h"

G_BEGIN_DECLS

typedef struct _TideRecorder TideRecorder;

/* One connected process image (a fork or an exec makes a new one): the
 * connection, and the image the recording keeps for it. */
typedef struct
{
  TideRecorder       *recorder;
  TideCaptureProcess *core;           /* owned by the recording */
  int                 fd;             /* -1 once the connection closed */
  gint64              protocol_errors;
} TideRecProcess;

/* A child that its parent reaped (CHILD_END) before the recorder saw its
 * connection close. */
typedef struct
{
  int    wait_status;
  gint64 ns;                          /* when the parent's wait returned */
} TideReaped;

struct _TideRecorder
{
  const TideRecordOptions *options;
  TideRecording           *recording;

  char                    *socket_dir;
  char                    *socket_path;
  int                      listen_fd;
  int                      signal_fd;
  int                      timer_fd;

  GPtrArray               *connections;    /* TideRecProcess*, every image seen */
  GPtrArray               *pending;        /* accepted fds whose HELLO has not come */
  guint64                  pending_admitted; /* of them, taken in by a snapshot */
  GHashTable              *reaped;         /* pid -> TideReaped (CHILD_END) of an image
                                            * whose connection is still open */

  pid_t                    child;
  int                      child_status;    /* as a shell says it: 128 + signal */
  int                      child_wait_status; /* as waitpid() said it */
  gint64                   child_exit_ns;
  gboolean                 child_exited;
  gboolean                 finishing;       /* the connections still open are closed */
  gboolean                 restore_sigxfsz; /* the target gets SIGXFSZ's default back */
  guint8                  *rx_buffer;
  guint8                  *await_buffer;    /* a process's messages taken in while the
                                             * recorder waits for its figures */
};

TideRecProcess *tide_rec_process_new           (TideRecorder   *recorder,
                                                int             fd,
                                                const void     *hello,
                                                gsize           hello_len,
                                                GError        **error);
gboolean        tide_rec_process_receive       (TideRecProcess *self,
                                                const guint8   *message,
                                                gsize           len);
void            tide_rec_process_end           (TideRecProcess *self,
                                                gint64          end_ns);
void            tide_rec_process_free          (TideRecProcess *self);

G_END_DECLS
