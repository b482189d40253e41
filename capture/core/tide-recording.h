/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-recording.h: one recording, whichever front end feeds it.
 *
 * `tidemark record` (preload records on sockets) and `tidemark attach`
 * (eBPF records on a ring buffer) are drivers: they decode their events and
 * call the recording and its processes (tide-capture-process.h).  The recording
 * owns what a trace needs from both: the trace writer, the stack table, the
 * id counters of processes, threads, scopes and steps, every process image
 * seen, the RSS, RSS-class and NVML polls, and the end of the trace.
 *
 * Opaque to the drivers (its struct is in tide-recording-private.h, for the
 * capture core's own files): they reach the trace only through these
 * functions and the processes', so that both front ends write it alike.
 *
 * A plain struct, not a GObject: it lives for one run of one driver, on
 * that driver's event thread, which creates it and frees it; nothing else
 * holds a reference, listens to it or binds to it.
 */
#pragma once

#include <sys/types.h>

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TideCaptureProcess TideCaptureProcess;
typedef struct _TideRecording TideRecording;

gint64              tide_capture_now_ns                (void);
char               *tide_capture_read_cmdline          (pid_t               pid);
void                tide_capture_remove_trace          (const char         *output);
void                tide_capture_close_fd              (int                *fd);
gboolean            tide_capture_set_errno_error       (GError            **error,
                                                        int                 err,
                                                        const char         *what);

/* Takes in the processes that a driver has yet to meet and that started
 * by @until_ns (tide_recording_set_admit_func()). */
typedef void (*TideRecordingAdmitFunc) (gint64   until_ns,
                                        gpointer user_data);

TideRecording      *tide_recording_new                 (const char         *output,
                                                        const char         *symbol_cache_dir,
                                                        GError            **error);
void                tide_recording_free                (TideRecording      *self);
void                tide_recording_set_sync_steps      (TideRecording      *self,
                                                        gboolean            sync_steps);
void                tide_recording_set_admit_func      (TideRecording      *self,
                                                        TideRecordingAdmitFunc func,
                                                        gpointer            data);
void                tide_recording_set_start_ns        (TideRecording      *self,
                                                        gint64              start_ns);
void                tide_recording_write_run_meta      (TideRecording      *self,
                                                        const char         *mode,
                                                        const char         *command,
                                                        gint64              sample_bytes,
                                                        gboolean            all_mode);
void                tide_recording_write_meta_int      (TideRecording      *self,
                                                        const char         *key,
                                                        gint64              value);
void                tide_recording_open_nvml           (TideRecording      *self);
TideCaptureProcess *tide_recording_find_process        (TideRecording      *self,
                                                        pid_t               pid);
guint               tide_recording_get_n_processes     (TideRecording      *self);
gint64              tide_recording_get_total_steps     (TideRecording      *self);
gint64              tide_recording_get_total_dropped   (TideRecording      *self);
void                tide_recording_set_total_dropped   (TideRecording      *self,
                                                        gint64              dropped);
void                tide_recording_poll                (TideRecording      *self,
                                                        gint64              now_ns);
gboolean            tide_recording_finish              (TideRecording      *self,
                                                        gint64              end_ns,
                                                        GError            **error);
char               *tide_recording_describe_early_end  (TideRecording      *self);
char               *tide_recording_describe_counts     (TideRecording      *self);
char               *tide_recording_describe_peak       (TideRecording      *self,
                                                        const char         *path);

G_END_DECLS
