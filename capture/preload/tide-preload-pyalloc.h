/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-pyalloc.h: CPython's allocator API, as the preload wraps it
 * (tide-preload-pyalloc.c), and the wrappers used while pymalloc is the
 * allocator (tide-preload-pymalloc.c).
 */
#pragma once

#include <stddef.h>

/* PyMemAllocatorEx of CPython's cpython/pymem.h, unchanged from 3.5 to
 * 3.13. */
typedef struct
{
  void  *ctx;
  void *(*malloc)  (void *ctx, size_t size);
  void *(*calloc)  (void *ctx, size_t nelem, size_t elsize);
  void *(*realloc) (void *ctx, void *ptr, size_t new_size);
  void  (*free)    (void *ctx, void *ptr);
} TidePyMemAllocator;

/* pymalloc serves a request of 1 to PYMALLOC_SMALL_MAX bytes from its
 * pools (SMALL_REQUEST_THRESHOLD of obmalloc.c, 3.8 to 3.13); a larger one
 * it hands on to the raw allocator (malloc). */
#define PYMALLOC_SMALL_MAX 512

/* The allocator to set for a domain whose allocator is @pymalloc,
 * pymalloc's own table (no context), in sampled mode. */
void tide_pymalloc_wrappers (const TidePyMemAllocator *pymalloc,
                             TidePyMemAllocator       *ours);
