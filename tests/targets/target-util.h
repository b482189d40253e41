/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * target-util.h: small helpers shared by the programs that the integration
 * tests profile.  Header-only, plain C, no GLib.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Functions that a test expects to find by name on a stack: never inlined
 * and never cloned into "name.constprop.0". */
#if defined(__clang__)
# define TARGET_NOINLINE __attribute__ ((noinline))
#else
# define TARGET_NOINLINE __attribute__ ((noinline, noclone))
#endif

/* Keeps the compiler from eliding a malloc/free pair it can see through. */
static volatile uintptr_t target_sink;

static inline void
target_keep (const void *p)
{
  target_sink ^= (uintptr_t) p;
}

/* Takes @n blocks of @size into @blocks and writes each one whole, so that
 * its pages are present; exits 2 where malloc fails. */
static inline void
target_take_blocks (void   **blocks,
                    int      n,
                    size_t   size)
{
  for (int i = 0; i < n; i++)
    {
      if ((blocks[i] = malloc (size)) == NULL)
        exit (2);
      memset (blocks[i], 1, size);
    }
}

static inline void
target_free_blocks (void **blocks,
                    int    n)
{
  for (int i = 0; i < n; i++)
    free (blocks[i]);
}

/* A fixed pseudo-random sequence, so that every run is the same. */
static inline uint32_t
target_random (uint32_t *state)
{
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

static inline void
target_sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

  while (nanosleep (&ts, &ts) != 0)
    ;
}

/* Reads "--NAME N" from argv, or returns @fallback. */
static inline long
target_int_option (int         argc,
                   char      **argv,
                   const char *name,
                   long        fallback)
{
  for (int i = 1; i + 1 < argc; i++)
    {
      if (strcmp (argv[i], name) == 0)
        return strtol (argv[i + 1], NULL, 10);
    }
  return fallback;
}

/* Waits for one line on stdin, read without stdio: a stdin buffer would be
 * one more recorded, resident block.  Returns 0 at the end of input. */
static inline int
target_read_line (void)
{
  char c;

  while (read (STDIN_FILENO, &c, 1) == 1)
    if (c == '\n')
      return 1;
  return 0;
}

/* "DIR/@name" where DIR holds this executable; free() the result. */
static inline char *
target_sibling_path (const char *name)
{
  char exe[4096];
  ssize_t len = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  char *slash;
  char *path;

  if (len <= 0)
    return NULL;
  exe[len] = '\0';
  slash = strrchr (exe, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  path = malloc (strlen (exe) + strlen (name) + 2);
  if (path != NULL)
    sprintf (path, "%s/%s", exe, name);
  return path;
}
