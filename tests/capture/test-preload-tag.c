/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-preload-tag.c: the tag in front of a sampled block, and the glibc
 * layout it relies on.  Never sanitized: the blocks must be glibc's.
 */
#include "config.h"

#include "tide-preload-tag.h"

#include <glib.h>
#include <malloc.h>
#include <stdlib.h>

#define EPOCH UINT64_C (0x5eed5eed12345678)

static void
assert_untagged (void *p)
{
  g_assert_nonnull (p);
  if (tide_tag_marked (p))
    g_error ("glibc block %p reads as tagged", p);
}

/* Every block glibc hands out, whatever its size, alignment or history,
 * has bit 3 of the word in front of it clear. */
static void
test_glibc_blocks_untagged (void)
{
  GPtrArray *blocks = g_ptr_array_new ();
  guint32 seed = 12345;

  for (guint i = 0; i < 20000; i++)
    {
      size_t size;
      void *p = NULL;

      seed = seed * 1103515245u + 12345u;
      size = (size_t) 1 << (seed >> 8) % 21;
      size += (seed >> 3) % size;
      switch (i % 5)
        {
        case 0: p = malloc (size); break;
        case 1: p = calloc (1, size); break;
        case 2: g_assert_cmpint (posix_memalign (&p, (size_t) 16 << (i % 9), size), ==, 0); break;
        case 3: p = memalign ((size_t) 8 << (i % 10), size); break;
        default: p = realloc (malloc (size / 2 + 1), size); break;
        }
      assert_untagged (p);
      g_ptr_array_add (blocks, p);
      /* Free some, so that later blocks reuse split and merged chunks. */
      if (i % 3 == 0)
        {
          guint k = (seed >> 5) % blocks->len;

          free (g_ptr_array_steal_index_fast (blocks, k));
        }
    }
  for (guint i = 0; i < blocks->len; i++)
    {
      assert_untagged (blocks->pdata[i]);
      free (blocks->pdata[i]);
    }
  g_ptr_array_unref (blocks);
}

static void
test_round_trip (void)
{
  static const size_t offsets[] = { 16, 64, 4096 };

  for (guint i = 0; i < G_N_ELEMENTS (offsets); i++)
    {
      size_t offset = offsets[i];
      size_t size = 100003 + i;
      void *base = NULL;
      void *p;

      g_assert_cmpint (posix_memalign (&base, offset, size + offset), ==, 0);
      p = tide_tag_put (base, offset, size, EPOCH, TRUE);
      g_assert_true ((char *) p == (char *) base + offset);
      g_assert_cmpuint ((uintptr_t) p % offset, ==, 0);
      g_assert_true (tide_tag_marked (p));
      g_assert_cmpuint (tide_tag_size (p), ==, size);
      g_assert_cmpuint (tide_tag_offset (p), ==, offset);
      g_assert_true (tide_tag_base (p) == base);
      g_assert_true (tide_tag_owned (p, EPOCH));
      /* Another process image, or a block tagged as not recorded. */
      g_assert_false (tide_tag_owned (p, EPOCH + 1));
      tide_tag_put (base, offset, size, EPOCH, FALSE);
      g_assert_true (tide_tag_marked (p));
      g_assert_false (tide_tag_owned (p, EPOCH));
      free (base);
    }
}

static void
test_largest_size (void)
{
  uint64_t words[3];
  void *p = tide_tag_put (words, 16, TIDE_TAG_MAX_SIZE, EPOCH, TRUE);

  g_assert_cmpuint (tide_tag_size (p), ==, TIDE_TAG_MAX_SIZE);
  g_assert_cmpuint (tide_tag_offset (p), ==, 16);
}

static void
test_offset_for (void)
{
  g_assert_cmpuint (tide_tag_offset_for (0), ==, 0);
  g_assert_cmpuint (tide_tag_offset_for (1), ==, 16);
  g_assert_cmpuint (tide_tag_offset_for (8), ==, 16);
  g_assert_cmpuint (tide_tag_offset_for (16), ==, 16);
  g_assert_cmpuint (tide_tag_offset_for (64), ==, 64);
  g_assert_cmpuint (tide_tag_offset_for (4096), ==, 4096);
  /* memalign rounds these up; they are not tagged. */
  g_assert_cmpuint (tide_tag_offset_for (48), ==, 0);
  g_assert_cmpuint (tide_tag_offset_for ((size_t) 1 << 31), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture/preload/tag/glibc-blocks-untagged", test_glibc_blocks_untagged);
  g_test_add_func ("/capture/preload/tag/round-trip", test_round_trip);
  g_test_add_func ("/capture/preload/tag/largest-size", test_largest_size);
  g_test_add_func ("/capture/preload/tag/offset-for", test_offset_for);
  return g_test_run ();
}
