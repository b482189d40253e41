/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * heap-layout: prints where the allocator put this program's blocks, as a
 * hash of their offsets from the first block of each thread.  With fixed
 * seeds and one thread at a time the output is the same on every run; a
 * profiler that allocated from the program's heap, or changed its calls,
 * would change it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target-util.h"

#define OPS    20000
#define WINDOW 64

/* FNV-1a over every block's offset from the thread's first block. */
static void *
churn (void *data)
{
  uint32_t seed = (uint32_t) (uintptr_t) data;
  unsigned char *window[WINDOW] = { 0 };
  uintptr_t first = 0;
  uint64_t hash = 1469598103934665603ull;

  for (int op = 0; op < OPS; op++)
    {
      size_t size = (size_t) 16 << (target_random (&seed) % 11);
      unsigned char *block = malloc (size + target_random (&seed) % size);
      intptr_t offset;

      if (block == NULL)
        abort ();
      block[0] = (unsigned char) op;
      if (first == 0)
        first = (uintptr_t) block;
      offset = (intptr_t) ((uintptr_t) block - first);
      for (size_t i = 0; i < sizeof offset; i++)
        hash = (hash ^ ((uint64_t) offset >> (8 * i) & 0xff)) * 1099511628211ull;
      free (window[op % WINDOW]);
      window[op % WINDOW] = block;
    }
  for (int i = 0; i < WINDOW; i++)
    free (window[i]);
  printf ("thread %08x layout %016llx\n", (unsigned) (uintptr_t) data,
          (unsigned long long) hash);
  return NULL;
}

int
main (void)
{
  pthread_t thread;

  /* One thread at a time, so the output's order is fixed too. */
  for (uint32_t t = 1; t <= 3; t++)
    {
      pthread_create (&thread, NULL, churn, (void *) (uintptr_t) (2463534242u * t));
      pthread_join (thread, NULL);
    }
  churn ((void *) (uintptr_t) 88172645u);
  return 0;
}
