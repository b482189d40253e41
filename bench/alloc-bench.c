/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * alloc-bench: the multi-threaded, allocation-heavy program of the record
 * benchmark.  Each of 4 threads builds and tears down short-lived records
 * the way a data pipeline does: it allocates a block (16 B .. 16 KiB,
 * log-uniform), fills it, reads it back into a checksum, keeps a window of
 * 512 live blocks and frees the oldest.  About 6 million allocations.
 * Prints the checksum, so a profiler that changed the results would show.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tide-bench-random.h"

#define THREADS     4
#define WINDOW      512
#define DEFAULT_OPS 1500000

typedef struct
{
  long     ops;
  uint32_t seed;
  uint64_t checksum;
} Worker;

static uint64_t
fill_and_sum (unsigned char *block,
              size_t         size,
              uint32_t       salt)
{
  uint64_t sum = 0;

  memset (block, (int) (salt & 0xff), size);
  for (size_t i = 0; i < size; i += 64)
    sum += block[i] * (i + 1);
  return sum;
}

static void *
worker_main (void *data)
{
  Worker *w = data;
  unsigned char *window[WINDOW] = { 0 };

  for (long op = 0; op < w->ops; op++)
    {
      size_t size = (size_t) 16 << (tide_bench_next_random (&w->seed) % 11);
      unsigned char *block;

      size += tide_bench_next_random (&w->seed) % size;
      block = malloc (size);
      if (block == NULL)
        abort ();
      w->checksum += fill_and_sum (block, size, (uint32_t) op);
      free (window[op % WINDOW]);
      window[op % WINDOW] = block;
    }
  for (int i = 0; i < WINDOW; i++)
    free (window[i]);
  return NULL;
}

int
main (int   argc,
      char *argv[])
{
  long ops = argc > 1 ? atol (argv[1]) : DEFAULT_OPS;
  pthread_t threads[THREADS];
  Worker workers[THREADS];
  uint64_t checksum = 0;

  for (int t = 0; t < THREADS; t++)
    {
      workers[t] = (Worker) { ops, 2463534242u + (uint32_t) t * 7919u, 0 };
      pthread_create (&threads[t], NULL, worker_main, &workers[t]);
    }
  for (int t = 0; t < THREADS; t++)
    {
      pthread_join (threads[t], NULL);
      checksum ^= workers[t].checksum;
    }
  printf ("alloc-bench checksum %016llx\n", (unsigned long long) checksum);
  return 0;
}
