/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-preload-resident.c: the process's resident memory at a step mark,
 * sent before the mark (TIDE_WIRE_COUNTER_RSS).  The recorder reads a step
 * end's RSS classes when it meets the mark, while the program runs on; a
 * reading after which the resident memory no longer is what it was at the
 * mark holds part of the next step, and the recorder does not give it as
 * the step end's (the step fence, tide-capture-process.c).  Read from
 * statm, whose three numbers the kernel gives at a small constant cost,
 * where status formats some fifty lines; opened at each mark, since a file
 * opened as /proc/self before a fork would name the parent in the child.
 */
#include "config.h"

#include "tide-preload-private.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

/* The second field of statm: resident pages. */
static bool
parse_resident_pages (const char *text,
                      int64_t    *pages)
{
  const char *p = text;
  int64_t value = 0;

  while (*p >= '0' && *p <= '9')
    p++;
  if (p == text || *p != ' ')
    return false;
  p++;
  if (*p < '0' || *p > '9')
    return false;
  for (; *p >= '0' && *p <= '9'; p++)
    {
      if (value > (INT64_MAX - 9) / 10)
        return false;
      value = value * 10 + (*p - '0');
    }
  *pages = value;
  return true;
}

void
tide_preload_send_resident (void)
{
  char text[128];
  int64_t pages;
  ssize_t n;
  int fd = open ("/proc/self/statm", O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return;
  n = read (fd, text, sizeof text - 1);
  close (fd);
  if (n <= 0)
    return;
  text[n] = '\0';
  if (parse_resident_pages (text, &pages))
    tidemark_preload_counter (TIDE_WIRE_COUNTER_RSS, -1, pages * (int64_t) getpagesize ());
}
