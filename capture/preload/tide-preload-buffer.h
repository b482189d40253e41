/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-buffer.h: per-thread record buffers and the flusher thread.
 *
 * Each thread appends whole records to its own buffer of at most
 * TIDE_WIRE_MAX_MESSAGE bytes, and sends it as one SEQPACKET message when the
 * next record does not fit.  A buffer has two locks: `lock` guards its bytes
 * and is held only for a memcpy; `send_lock` keeps the sends of one buffer in
 * order.  The flusher thread sends buffers whose oldest record is older than
 * TIDE_FLUSH_AGE_NS: it copies the bytes out under `lock` and sends without
 * it, so a target thread never waits on `lock` behind the recorder.
 *
 * Buffers are never freed: a thread that exits flushes its buffer and hands
 * it back for the next new thread.  The list of buffers only grows, so the
 * flusher walks it without a lock.
 */
#pragma once

#include <stdint.h>

void tide_buffer_init         (void);
void tide_buffer_append       (const void *rec,
                               uint32_t    len);
void tide_buffer_flush_self   (void);
void tide_buffer_flush_all    (void);
void tide_buffer_fork_child   (void);
void tide_flusher_start       (void);
