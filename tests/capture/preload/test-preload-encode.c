/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-preload-encode.c: the records libtidemark-preload.so builds.
 */
#include "config.h"

#include "tide-preload-encode.h"

#include <glib.h>
#include <string.h>

static const TideStamp stamp = { .tid = 77, .time_ns = 123456789 };

static void
check_header (const void *rec,
              uint32_t    len,
              uint16_t    type)
{
  const TideWireHeader *h = rec;

  g_assert_cmpuint (len, >, 0);
  g_assert_cmpuint (len % 8, ==, 0);
  g_assert_cmpuint (h->len, ==, len);
  g_assert_cmpuint (h->type, ==, type);
  g_assert_cmpuint (h->tid, ==, 77);
  g_assert_cmpuint (h->time_ns, ==, 123456789);
}

static void
test_alloc (void)
{
  _Alignas (8) guint8 buf[TIDE_ENCODE_ALLOC_MAX + 64];
  guint64 frames[TIDE_WIRE_MAX_FRAMES + 10];
  const TideWireAlloc *a = (const void *) buf;
  uint32_t len;

  for (guint i = 0; i < G_N_ELEMENTS (frames); i++)
    frames[i] = 0x400000 + i;
  len = tide_encode_alloc (buf, sizeof buf, stamp, 0xabc0, 4096, 2.5, 9, TIDE_KIND_MMAP,
                           frames, 3);
  check_header (buf, len, TIDE_WIRE_ALLOC);
  g_assert_cmpuint (len, ==, 56 + 3 * 8);
  g_assert_cmpuint (a->addr, ==, 0xabc0);
  g_assert_cmpuint (a->size, ==, 4096);
  g_assert_cmpfloat (a->weight, ==, 2.5);
  g_assert_cmpuint (a->scope_id, ==, 9);
  g_assert_cmpuint (a->kind, ==, TIDE_KIND_MMAP);
  g_assert_cmpint (a->device, ==, -1);
  g_assert_cmpuint (a->n_frames, ==, 3);
  g_assert_cmpuint (a->frames[2], ==, 0x400002);
  /* Frames are capped; no frames is fine; too small a buffer is 0. */
  len = tide_encode_alloc (buf, sizeof buf, stamp, 1, 1, 1, 0, 1, frames, G_N_ELEMENTS (frames));
  g_assert_cmpuint (len, ==, TIDE_ENCODE_ALLOC_MAX);
  g_assert_cmpuint (a->n_frames, ==, TIDE_WIRE_MAX_FRAMES);
  g_assert_cmpuint (tide_encode_alloc (buf, sizeof buf, stamp, 1, 1, 1, 0, 1, NULL, 0), ==, 56);
  g_assert_cmpuint (tide_encode_alloc (buf, 60, stamp, 1, 1, 1, 0, 1, frames, 1), ==, 0);
}

/* A free folds into the live ALLOC of its own address and kind, once, with
 * a lifetime that fits the field; anything else leaves the record as it was. */
static void
test_fold_free (void)
{
  _Alignas (8) guint8 buf[TIDE_ENCODE_ALLOC_MAX];
  _Alignas (8) guint8 before[TIDE_ENCODE_ALLOC_MAX];
  const TideWireAlloc *a = (const void *) buf;
  uint32_t len = tide_encode_alloc (buf, sizeof buf, stamp, 0xabc0, 64, 1.0, 0, TIDE_KIND_MALLOC,
                                    NULL, 0);

  g_assert_cmpuint (a->lifetime_ns, ==, 0);
  memcpy (before, buf, len);
  g_assert_false (tide_encode_fold_free (buf, 0xabc8, TIDE_KIND_MALLOC, stamp.time_ns + 10));
  g_assert_false (tide_encode_fold_free (buf, 0xabc0, TIDE_KIND_MMAP, stamp.time_ns + 10));
  g_assert_false (tide_encode_fold_free (buf, 0xabc0, TIDE_KIND_MALLOC, stamp.time_ns - 1));
  g_assert_false (tide_encode_fold_free (buf, 0xabc0, TIDE_KIND_MALLOC,
                                         stamp.time_ns + G_MAXUINT32));
  g_assert_cmpmem (buf, len, before, len);

  g_assert_true (tide_encode_fold_free (buf, 0xabc0, TIDE_KIND_MALLOC,
                                        stamp.time_ns + G_MAXUINT32 - 1));
  g_assert_cmpuint (a->lifetime_ns, ==, G_MAXUINT32 - 1);
  /* Freed once: a second free of the address is another block's. */
  g_assert_false (tide_encode_fold_free (buf, 0xabc0, TIDE_KIND_MALLOC, stamp.time_ns + 10));
  g_assert_cmpuint (a->lifetime_ns, ==, G_MAXUINT32 - 1);

  /* A free in the same nanosecond still says "freed". */
  tide_encode_alloc (buf, sizeof buf, stamp, 0xabc0, 64, 1.0, 0, TIDE_KIND_MALLOC, NULL, 0);
  g_assert_true (tide_encode_fold_free (buf, 0xabc0, TIDE_KIND_MALLOC, stamp.time_ns));
  g_assert_cmpuint (a->lifetime_ns, ==, 1);

  /* Only an ALLOC takes a free. */
  len = tide_encode_free (buf, sizeof buf, stamp, 0xabc0, TIDE_KIND_MALLOC);
  memcpy (before, buf, len);
  g_assert_false (tide_encode_fold_free (buf, 0xabc0, TIDE_KIND_MALLOC, stamp.time_ns + 10));
  g_assert_cmpmem (buf, len, before, len);
}

static void
test_free_dropped (void)
{
  _Alignas (8) guint8 buf[64];
  const TideWireFree *f = (const void *) buf;
  const TideWireDropped *d = (const void *) buf;
  uint32_t len;

  len = tide_encode_free (buf, sizeof buf, stamp, 0x5550, TIDE_KIND_MALLOC);
  check_header (buf, len, TIDE_WIRE_FREE);
  g_assert_cmpuint (len, ==, 32);
  g_assert_cmpuint (f->addr, ==, 0x5550);
  g_assert_cmpint (f->device, ==, -1);
  len = tide_encode_dropped (buf, sizeof buf, stamp, 17);
  check_header (buf, len, TIDE_WIRE_DROPPED);
  g_assert_cmpuint (len, ==, 24);
  g_assert_cmpuint (d->count, ==, 17);
  g_assert_cmpuint (tide_encode_free (buf, 31, stamp, 1, 1), ==, 0);
}

/* Strings: NUL-terminated, padded with NULs to a multiple of 8, cut at
 * TIDE_WIRE_MAX_STRING - 1 bytes. */
static void
test_strings (void)
{
  _Alignas (8) guint8 buf[TIDE_ENCODE_STRING_MAX];
  g_autofree char *long_name = g_strnfill (TIDE_WIRE_MAX_STRING + 100, 'x');
  const TideWireHello *hello = (const void *) buf;
  const TideWireMapping *m = (const void *) buf;
  const TideWireScopeDef *s = (const void *) buf;
  uint32_t len;

  memset (buf, 0xee, sizeof buf);
  len = tide_encode_hello (buf, sizeof buf, stamp, 10, 1, TIDE_HELLO_ALL, 4096, "/bin/true");
  check_header (buf, len, TIDE_WIRE_HELLO);
  g_assert_cmpuint (len, ==, 40 + 16);
  g_assert_cmpstr (hello->exe, ==, "/bin/true");
  for (uint32_t i = 40 + 9; i < len; i++)
    g_assert_cmpuint (buf[i], ==, 0);
  g_assert_cmpuint (hello->wire_version, ==, TIDE_WIRE_VERSION);
  g_assert_cmpuint (hello->sample_bytes, ==, 4096);

  len = tide_encode_mapping (buf, sizeof buf, stamp, 0x1000, 0x2000, 0x800, "/lib/x.so");
  check_header (buf, len, TIDE_WIRE_MAPPING);
  g_assert_cmpuint (len, ==, 40 + 16);
  g_assert_cmpstr (m->path, ==, "/lib/x.so");
  g_assert_cmpuint (m->load_bias, ==, 0x800);

  len = tide_encode_scope_def (buf, sizeof buf, stamp, 3, 2, long_name);
  check_header (buf, len, TIDE_WIRE_SCOPE_DEF);
  g_assert_cmpuint (len, ==, tide_wire_align (24 + TIDE_WIRE_MAX_STRING));
  g_assert_cmpuint (strlen (s->name), ==, TIDE_WIRE_MAX_STRING - 1);
  g_assert_cmpuint (s->id, ==, 3);
  g_assert_cmpuint (s->parent_id, ==, 2);

  len = tide_encode_step (buf, sizeof buf, stamp, TIDE_WIRE_FIRST_STEP_WAIT_MS, "");
  check_header (buf, len, TIDE_WIRE_STEP);
  g_assert_cmpuint (len, ==, 32);
  g_assert_cmpstr (((const TideWireStep *) buf)->label, ==, "");
  g_assert_cmpuint (((const TideWireStep *) buf)->wait_ms, ==, TIDE_WIRE_FIRST_STEP_WAIT_MS);
  len = tide_encode_step (buf, sizeof buf, stamp, 0, "epoch 1");
  g_assert_cmpuint (len, ==, 32);
  g_assert_cmpstr (((const TideWireStep *) buf)->label, ==, "epoch 1");
  g_assert_cmpuint (((const TideWireStep *) buf)->wait_ms, ==, 0);
  len = tide_encode_text (buf, sizeof buf, stamp, TIDE_WIRE_THREAD, "1234567");
  g_assert_cmpuint (len, ==, 24);
  len = tide_encode_text (buf, sizeof buf, stamp, TIDE_WIRE_THREAD, "12345678");
  g_assert_cmpuint (len, ==, 32);
  g_assert_cmpuint (tide_encode_text (buf, 20, stamp, TIDE_WIRE_THREAD, ""), ==, 0);
  g_assert_cmpuint (tide_encode_step (buf, 28, stamp, 0, ""), ==, 0);
}

static void
test_count (void)
{
  _Alignas (8) guint8 msg[256];
  uint32_t len = 0;

  len += tide_encode_free (msg + len, sizeof msg - len, stamp, 1, 1);
  len += tide_encode_step (msg + len, sizeof msg - len, stamp, 0, "a step");
  len += tide_encode_dropped (msg + len, sizeof msg - len, stamp, 1);
  g_assert_cmpuint (tide_wire_count_records (msg, len), ==, 3);
  g_assert_cmpuint (tide_wire_count_records (msg, len - 8), ==, 2);
  g_assert_cmpuint (tide_wire_count_records (msg, 0), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture/preload/encode/alloc", test_alloc);
  g_test_add_func ("/capture/preload/encode/fold-free", test_fold_free);
  g_test_add_func ("/capture/preload/encode/free-dropped", test_free_dropped);
  g_test_add_func ("/capture/preload/encode/strings", test_strings);
  g_test_add_func ("/capture/preload/encode/count", test_count);
  return g_test_run ();
}
