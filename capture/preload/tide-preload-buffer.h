/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-buffer.h: per-thread record buffers and the flusher thread.
 *
 * Each thread appends whole records to its own buffer of at most
 * TIDE_WIRE_MAX_MESSAGE bytes, and sends it as one SEQPACKET message when the
 * next record does not fit.  A buffer has two locks: `lock` guards its bytes
 * and is held only for a memcpy (and, for a sampled block, the insert of its
 * addrset entry: a shard's lock is taken inside `lock`, never around it);
 * `send_lock` keeps the sends of one buffer in order.  The flusher thread
 * sends buffers whose oldest record is older than TIDE_FLUSH_AGE_NS: it
 * copies the bytes out under `lock` and sends without it, so a target
 * thread never waits on `lock` behind the recorder.
 *
 * Buffers are never freed: a thread that exits flushes its buffer and hands
 * it back for the next new thread.  The list of buffers only grows, so the
 * flusher walks it without a lock.
 *
 * Folded frees.  Most sampled blocks die young, freed by the thread that
 * made them while their ALLOC record still waits in its buffer (in
 * alloc-bench, a block lives a small part of the time a buffer takes to
 * fill).  The free then writes the block's lifetime into that record
 * (tide_encode_fold_free) instead of sending a FREE: fewer bytes to send,
 * and the recorder writes the row at once, without keeping the block in
 * its live table.  To find the record, a sampled block's addrset entry
 * holds the serial of its buffer's bytes and the record's offset in them;
 * every emptying of a buffer gives it a new serial, so an entry whose
 * record has left matches no buffer.  A free by another thread, or after
 * a flush, sends a FREE.  The flush before every STEP
 * (tide_buffer_flush_all) keeps a folded allocation and its free in one
 * step.
 */
#pragma once

#include "tide-preload-addrset.h"

#include <stdbool.h>
#include <stdint.h>

void tide_buffer_init         (void);
void tide_buffer_append       (const void *rec,
                               uint32_t    len);
/* Appends the ALLOC record @rec of a block and puts @entry (its addr, size
 * and kind filled in) into @set, naming where the record went.  False, and
 * nothing appended, when the set could not take the entry. */
bool tide_buffer_append_tracked (const void    *rec,
                                 uint32_t       len,
                                 TideAddrSet   *set,
                                 TideAddrEntry *entry);
/* Writes the free of @entry's block, recorded at @addr, into its ALLOC
 * record if that is still in this thread's buffer.  False: send a FREE. */
bool tide_buffer_fold_free    (const TideAddrEntry *entry,
                               uint64_t             addr,
                               uint16_t             kind,
                               uint64_t             free_ns);
void tide_buffer_flush_self   (void);
void tide_buffer_flush_all    (void);
void tide_buffer_fork_child   (void);
void tide_flusher_start       (void);
