/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * storm-bench: an allocation storm, as a program that builds objects in
 * tight loops makes one.  Each of 4 threads allocates blocks of 16 B to
 * 4 KiB, log-uniform (half of them under 256 B), writes and reads their
 * first 128 bytes, as an object is initialized and read, keeps a window
 * of 64 live blocks and frees the oldest.  alloc-bench fills and reads
 * each block whole, up to 32 KiB; this does a small part of that work per
 * block, so that it makes about ten million allocations a second on two
 * cores, three times alloc-bench's rate, and the hooks' cost on the
 * common malloc and free counts for what it does in a real storm.  Prints
 * a checksum, so a profiler that changed the results would show.
 *
 *   storm-bench [OPS]   (allocations per thread, default 4500000)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tide-bench-random.h"

#define THREADS     4
#define WINDOW      64
#define TOUCHED     128  /* bytes of a block written and read */
#define DEFAULT_OPS 4500000

typedef struct
{
  long     ops;
  uint32_t seed;
  uint64_t checksum;
} Worker;

/* 16 B to 4 KiB, log-uniform. */
static size_t
block_size (uint32_t r)
{
  size_t size = (size_t) 16 << (r % 8);

  return size + (r >> 8) % size;
}

static void *
work (void *data)
{
  Worker *w = data;
  unsigned char *live[WINDOW] = { 0 };
  uint32_t state = w->seed;

  for (long i = 0; i < w->ops; i++)
    {
      uint32_t r = tide_bench_next_random (&state);
      size_t size = block_size (r);
      unsigned char *block = malloc (size);
      unsigned char **slot = &live[i % WINDOW];

      if (block == NULL)
        abort ();
      for (size_t k = 0; k < size && k < TOUCHED; k++)
        block[k] = (unsigned char) (r + k);
      for (size_t k = 0; k < size && k < TOUCHED; k++)
        w->checksum = w->checksum * 31 + block[k];
      if (*slot != NULL)
        {
          w->checksum += (*slot)[0];
          free (*slot);
        }
      *slot = block;
    }
  for (int k = 0; k < WINDOW; k++)
    if (live[k] != NULL)
      {
        w->checksum += live[k][0];
        free (live[k]);
      }
  return NULL;
}

int
main (int    argc,
      char **argv)
{
  long ops = argc > 1 ? atol (argv[1]) : DEFAULT_OPS;
  pthread_t threads[THREADS];
  Worker workers[THREADS];
  uint64_t checksum = 0;

  if (ops <= 0)
    {
      fprintf (stderr, "usage: storm-bench [OPS]\n");
      return 2;
    }
  for (int t = 0; t < THREADS; t++)
    {
      workers[t] = (Worker) { .ops = ops, .seed = 0x9e3779b9u * (uint32_t) (t + 1) };
      if (pthread_create (&threads[t], NULL, work, &workers[t]) != 0)
        return 1;
    }
  for (int t = 0; t < THREADS; t++)
    {
      pthread_join (threads[t], NULL);
      checksum += workers[t].checksum;
    }
  printf ("storm-bench: %ld allocations, checksum %llu\n", ops * THREADS,
          (unsigned long long) checksum);
  return 0;
}
