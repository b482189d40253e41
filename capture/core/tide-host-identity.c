/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <time.h>
#include <unistd.h>

#include "tide-host-identity.h"
#include "tide-output-name.h"

#define OFFSET_TRIES 5

static gint64
clock_ns (clockid_t clock)
{
  struct timespec ts;

  clock_gettime (clock, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* Real time read between two monotonic readings: the pair that lay
 * closest together gives the offset to within half their distance (a
 * preempted try can be microseconds wide). */
gint64
tide_host_realtime_offset_ns (void)
{
  gint64 best_width = G_MAXINT64, offset = 0;

  for (guint i = 0; i < OFFSET_TRIES; i++)
    {
      gint64 before = clock_ns (CLOCK_MONOTONIC);
      gint64 real = clock_ns (CLOCK_REALTIME);
      gint64 after = clock_ns (CLOCK_MONOTONIC);

      if (after - before < best_width)
        {
          best_width = after - before;
          offset = real - (before + (after - before) / 2);
        }
    }
  return offset;
}

/* Returns: (transfer full) (nullable): this boot's id, or %NULL */
char *
tide_host_boot_id (void)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents ("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
    return NULL;
  return g_strdup (g_strstrip (text));
}

void
tide_host_identity_write (TideTraceWriter *writer)
{
  char host[256] = "";
  g_autofree char *boot_id = tide_host_boot_id ();
  const char *rank = tide_output_rank_from_env ();
  guint64 rank_value;

  gethostname (host, sizeof host - 1);
  tide_trace_writer_set_meta (writer, "hostname", host);
  if (boot_id != NULL)
    tide_trace_writer_set_meta (writer, "boot_id", boot_id);
  tide_trace_writer_set_meta_int (writer, "realtime_offset_ns", tide_host_realtime_offset_ns ());
  if (rank != NULL && g_ascii_string_to_unsigned (rank, 10, 0, G_MAXINT, &rank_value, NULL))
    tide_trace_writer_set_meta_int (writer, "launcher_rank", (gint64) rank_value);
}
