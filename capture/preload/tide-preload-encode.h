/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-encode.h: builds tide-wire.h records in place.
 *
 * Every function writes one whole record into dst and returns its length (a
 * multiple of 8, padding zeroed), or 0 when it does not fit in cap.  Strings
 * longer than TIDE_WIRE_MAX_STRING - 1 bytes are cut.  Pure code.
 */
#pragma once

#include "tide-wire.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct
{
  uint32_t tid;
  uint64_t time_ns;
} TideStamp;

/* Largest records the preload builds. */
#define TIDE_ENCODE_ALLOC_MAX  (sizeof (TideWireAlloc) + 8u * TIDE_WIRE_MAX_FRAMES)
#define TIDE_ENCODE_STRING_MAX (sizeof (TideWireHello) + TIDE_WIRE_MAX_STRING)

uint32_t tide_encode_hello      (void          *dst,
                                 uint32_t       cap,
                                 TideStamp      st,
                                 uint32_t       pid,
                                 uint32_t       ppid,
                                 uint32_t       flags,
                                 uint64_t       sample_bytes,
                                 const char    *exe);
uint32_t tide_encode_mapping    (void          *dst,
                                 uint32_t       cap,
                                 TideStamp      st,
                                 uint64_t       start,
                                 uint64_t       end,
                                 uint64_t       load_bias,
                                 const char    *path);
uint32_t tide_encode_alloc      (void          *dst,
                                 uint32_t       cap,
                                 TideStamp      st,
                                 uint64_t       addr,
                                 uint64_t       size,
                                 double         weight,
                                 uint32_t       scope_id,
                                 uint16_t       kind,
                                 const uint64_t *frames,
                                 uint32_t       n_frames);
bool     tide_encode_fold_free  (void          *rec,
                                 uint64_t       addr,
                                 uint16_t       kind,
                                 uint64_t       free_ns);
uint32_t tide_encode_free       (void          *dst,
                                 uint32_t       cap,
                                 TideStamp      st,
                                 uint64_t       addr,
                                 uint16_t       kind);
uint32_t tide_encode_text       (void          *dst,
                                 uint32_t       cap,
                                 TideStamp      st,
                                 uint16_t       type,
                                 const char    *text);
uint32_t tide_encode_step       (void          *dst,
                                 uint32_t       cap,
                                 TideStamp      st,
                                 uint32_t       wait_ms,
                                 const char    *label);
uint32_t tide_encode_scope_def  (void          *dst,
                                 uint32_t       cap,
                                 TideStamp      st,
                                 uint32_t       id,
                                 uint32_t       parent_id,
                                 const char    *name);
uint32_t tide_encode_dropped    (void          *dst,
                                 uint32_t       cap,
                                 TideStamp      st,
                                 uint64_t       count);
uint32_t tide_wire_count_records (const void   *msg,
                                  uint32_t      len);
