/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * anon-split: anonymous memory that no hook sees, one kind a step, so that
 * a test can read each at the end of the step that made it.
 *
 *   step 1  nothing: the baseline;
 *   step 2  four threads, each of which writes 512 KiB of its own stack
 *           and waits: 2 MiB of thread stacks;
 *   step 3  8 MiB of the program's bss written: library data;
 *   step 4  4 MiB of its initialized data written, never read before:
 *           library data too, the kernel's copies of the file's pages.
 *
 * Then the threads end, and it exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "target-util.h"
#include "tidemark.h"

#define KIB          1024
#define MIB          (1024 * 1024)
#define N_THREADS    4
#define STACK_TOUCH  (512 * KIB)
#define STACK_SIZE   (2 * MIB)
#define BSS_TOUCH    (8 * MIB)
#define DATA_TOUCH   (4 * MIB)

static char bss[16 * MIB];
/* In .data, from the file: one byte that is not zero puts it there. */
static char data[DATA_TOUCH + 4 * KIB] = { 1 };
static int ready[2], go[2];

/* Writes @STACK_TOUCH bytes of this thread's stack, which stay resident
 * while the thread lives. */
static TARGET_NOINLINE void
touch_stack (void)
{
  volatile char frame[STACK_TOUCH];

  /* Through the volatile array, so that no write is left out. */
  for (size_t i = 0; i < sizeof frame; i += 512)
    frame[i] = 1;
}

static void *
thread_main (void *unused)
{
  char c = 0;

  touch_stack ();
  if (write (ready[1], "r", 1) != 1 || read (go[0], &c, 1) != 1)
    _exit (3);
  return NULL;
}

int
main (void)
{
  pthread_t threads[N_THREADS];
  pthread_attr_t attr;
  char c = 0;

  if (pipe (ready) != 0 || pipe (go) != 0)
    return 2;
  /* Pages of 4 KiB, whatever the machine's transparent huge pages. */
  madvise ((char *) (((uintptr_t) bss + 4095) & ~(uintptr_t) 4095), sizeof bss - 4096,
           MADV_NOHUGEPAGE);
  tidemark_step ("baseline");

  pthread_attr_init (&attr);
  pthread_attr_setstacksize (&attr, STACK_SIZE);
  for (int i = 0; i < N_THREADS; i++)
    if (pthread_create (&threads[i], &attr, thread_main, NULL) != 0)
      return 2;
  for (int i = 0; i < N_THREADS; i++)
    if (read (ready[0], &c, 1) != 1)
      return 2;
  tidemark_step ("threads");

  memset (bss, 2, BSS_TOUCH);
  tidemark_step ("bss");

  /* From its second page on: the first may share one with what comes
   * before it, which the loader wrote. */
  memset ((char *) (((uintptr_t) data + 4095) & ~(uintptr_t) 4095), 3, DATA_TOUCH);
  tidemark_step ("data");

  /* Any thread may read any "g": all are told before one is joined. */
  for (int i = 0; i < N_THREADS; i++)
    if (write (go[1], "g", 1) != 1)
      return 2;
  for (int i = 0; i < N_THREADS; i++)
    if (pthread_join (threads[i], NULL) != 0)
      return 2;
  printf ("done\n");
  return 0;
}
