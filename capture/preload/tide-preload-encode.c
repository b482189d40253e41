/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-preload-encode.h"

#include <stddef.h>
#include <string.h>

static void
header_fill (void      *dst,
             uint16_t   type,
             uint32_t   len,
             TideStamp  st)
{
  TideWireHeader *h = dst;

  h->type = type;
  h->len = (uint16_t) len;
  h->tid = st.tid;
  h->time_ns = st.time_ns;
}

/* Fixed part of `base` bytes followed by a NUL-terminated string. */
static uint32_t
string_record (void       *dst,
               uint32_t    cap,
               uint32_t    base,
               const char *text,
               size_t     *text_len)
{
  size_t n = text != NULL ? strnlen (text, TIDE_WIRE_MAX_STRING - 1) : 0;
  uint32_t len = tide_wire_align (base + (uint32_t) n + 1);

  if (len > cap)
    return 0;
  memset ((char *) dst + base, 0, len - base);
  if (n > 0)
    memcpy ((char *) dst + base, text, n);
  *text_len = n;
  return len;
}

uint32_t
tide_encode_hello (void       *dst,
                   uint32_t    cap,
                   TideStamp   st,
                   uint32_t    pid,
                   uint32_t    ppid,
                   uint32_t    flags,
                   uint64_t    sample_bytes,
                   const char *exe)
{
  TideWireHello *r = dst;
  size_t n;
  uint32_t len = string_record (dst, cap, sizeof *r, exe, &n);

  if (len == 0)
    return 0;
  header_fill (r, TIDE_WIRE_HELLO, len, st);
  r->pid = pid;
  r->ppid = ppid;
  r->wire_version = TIDE_WIRE_VERSION;
  r->flags = flags;
  r->sample_bytes = sample_bytes;
  return len;
}

uint32_t
tide_encode_mapping (void       *dst,
                     uint32_t    cap,
                     TideStamp   st,
                     uint64_t    start,
                     uint64_t    end,
                     uint64_t    load_bias,
                     const char *path)
{
  TideWireMapping *r = dst;
  size_t n;
  uint32_t len = string_record (dst, cap, sizeof *r, path, &n);

  if (len == 0)
    return 0;
  header_fill (r, TIDE_WIRE_MAPPING, len, st);
  r->start = start;
  r->end = end;
  r->load_bias = load_bias;
  return len;
}

uint32_t
tide_encode_alloc (void           *dst,
                   uint32_t        cap,
                   TideStamp       st,
                   uint64_t        addr,
                   uint64_t        size,
                   double          weight,
                   uint32_t        scope_id,
                   uint16_t        kind,
                   const uint64_t *frames,
                   uint32_t        n_frames)
{
  TideWireAlloc *r = dst;
  uint32_t len;

  if (n_frames > TIDE_WIRE_MAX_FRAMES)
    n_frames = TIDE_WIRE_MAX_FRAMES;
  len = (uint32_t) sizeof *r + 8u * n_frames;
  if (len > cap)
    return 0;
  header_fill (r, TIDE_WIRE_ALLOC, len, st);
  r->addr = addr;
  r->size = size;
  r->weight = weight;
  r->scope_id = scope_id;
  r->kind = kind;
  r->device = -1;
  r->n_frames = n_frames;
  r->lifetime_ns = 0;
  if (n_frames > 0)
    memcpy (r->frames, frames, 8u * n_frames);
  return len;
}

/* Writes into the ALLOC record @rec, not sent yet, that its block at @addr
 * was freed at @free_ns.  False, and @rec untouched, when @rec is not a
 * live ALLOC of @addr and @kind or the lifetime does not fit its field: the
 * free must then go as a FREE record. */
bool
tide_encode_fold_free (void     *rec,
                       uint64_t  addr,
                       uint16_t  kind,
                       uint64_t  free_ns)
{
  TideWireAlloc *r = rec;
  uint64_t lifetime;

  if (r->h.type != TIDE_WIRE_ALLOC || r->addr != addr || r->kind != kind ||
      r->lifetime_ns != 0 || free_ns < r->h.time_ns)
    return false;
  lifetime = free_ns - r->h.time_ns;
  if (lifetime >= UINT32_MAX)
    return false;
  r->lifetime_ns = lifetime > 0 ? (uint32_t) lifetime : 1u;
  return true;
}

uint32_t
tide_encode_free (void      *dst,
                  uint32_t   cap,
                  TideStamp  st,
                  uint64_t   addr,
                  uint16_t   kind)
{
  TideWireFree *r = dst;

  if (sizeof *r > cap)
    return 0;
  header_fill (r, TIDE_WIRE_FREE, sizeof *r, st);
  r->addr = addr;
  r->kind = kind;
  r->device = -1;
  r->reserved = 0;
  return sizeof *r;
}

/* THREAD: a header and one string. */
uint32_t
tide_encode_text (void       *dst,
                  uint32_t    cap,
                  TideStamp   st,
                  uint16_t    type,
                  const char *text)
{
  size_t n;
  uint32_t len = string_record (dst, cap, sizeof (TideWireHeader), text, &n);

  if (len == 0)
    return 0;
  header_fill (dst, type, len, st);
  return len;
}

uint32_t
tide_encode_step (void       *dst,
                  uint32_t    cap,
                  TideStamp   st,
                  uint32_t    wait_ms,
                  const char *label)
{
  TideWireStep *r = dst;
  size_t n;
  uint32_t len = string_record (dst, cap, offsetof (TideWireStep, label), label, &n);

  if (len == 0)
    return 0;
  header_fill (r, TIDE_WIRE_STEP, len, st);
  r->wait_ms = wait_ms;
  r->reserved = 0;
  return len;
}

uint32_t
tide_encode_scope_def (void       *dst,
                       uint32_t    cap,
                       TideStamp   st,
                       uint32_t    id,
                       uint32_t    parent_id,
                       const char *name)
{
  TideWireScopeDef *r = dst;
  size_t n;
  uint32_t len = string_record (dst, cap, offsetof (TideWireScopeDef, name), name, &n);

  if (len == 0)
    return 0;
  header_fill (r, TIDE_WIRE_SCOPE_DEF, len, st);
  r->id = id;
  r->parent_id = parent_id;
  return len;
}

uint32_t
tide_encode_dropped (void      *dst,
                     uint32_t   cap,
                     TideStamp  st,
                     uint64_t   count)
{
  TideWireDropped *r = dst;

  if (sizeof *r > cap)
    return 0;
  header_fill (r, TIDE_WIRE_DROPPED, sizeof *r, st);
  r->count = count;
  return sizeof *r;
}

/* Records in one message; stops at a malformed length. */
uint32_t
tide_wire_count_records (const void *msg,
                         uint32_t    len)
{
  const unsigned char *p = msg;
  uint32_t off = 0;
  uint32_t n = 0;

  while (off + sizeof (TideWireHeader) <= len)
    {
      const TideWireHeader *h = (const void *) (p + off);

      if (h->len < sizeof (TideWireHeader) || (h->len & 7u) != 0 || off + h->len > len)
        break;
      off += h->len;
      n++;
    }
  return n;
}
