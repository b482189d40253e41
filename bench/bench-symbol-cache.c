/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * bench-symbol-cache: what a recording pays for the symbol cache of one
 * big library (tide-symbol-cache.h): reading its file at the first lookup,
 * the lookups, and freeing it at the end.  The file is made once, for
 * libc's build-id, with --entries addresses, one in five named with a
 * file and a line and the rest without a symbol, as a stripped library's
 * file mostly is; then each of --runs opens a new cache, looks up
 * LOOKUPS of its addresses and frees it: medians.
 *
 *   _build/bench/bench-symbol-cache [--entries N] [--runs N]
 */
#include "config.h"

#include <glib/gstdio.h>

#include "tide-bench-median.h"
#include "tide-symbol-cache.h"

#define LIBRARY "/lib/x86_64-linux-gnu/libc.so.6"
#define LOOKUPS 2000

static void
fill_cache (const char *dir,
            guint       entries)
{
  TideSymbolCache *cache = tide_symbol_cache_new (dir);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < entries; i++)
    {
      g_autofree char *function = i % 5 == 0 ? g_strdup_printf ("at::native::kernel_%u", i) : NULL;
      TideSymbol symbol = {
        .function = function,
        .file = i % 5 == 0 ? (char *) "/build/pytorch/aten/src/ATen/native/Kernel.cpp" : NULL,
        .line = i % 5 == 0 ? (int) (i % 4000) + 1 : 0,
      };

      tide_symbol_cache_add (cache, LIBRARY, 0x10000 + 16 * (guint64) i, &symbol);
    }
  if (!tide_symbol_cache_save (cache, &error))
    g_error ("bench-symbol-cache: %s", error->message);
  tide_symbol_cache_free (cache);
}

int
main (int   argc,
      char **argv)
{
  gint entries = 65000, runs = 9;
  GOptionEntry options[] = {
    { "entries", 0, 0, G_OPTION_ARG_INT, &entries, "Addresses in the file (65000)", "N" },
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Runs (9)", "N" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- the symbol cache's cost");
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree double *read_ms = NULL, *free_ms = NULL;
  guint found = 0;

  g_option_context_add_main_entries (context, options, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || runs < 1 || entries < 1)
    {
      g_printerr ("bench-symbol-cache: %s\n", error ? error->message : "--runs and --entries must be 1 or more");
      return 1;
    }
  if ((dir = g_dir_make_tmp ("bench-symbol-cache-XXXXXX", &error)) == NULL)
    g_error ("bench-symbol-cache: %s", error->message);
  fill_cache (dir, (guint) entries);
  read_ms = g_new (double, runs);
  free_ms = g_new (double, runs);
  for (gint r = 0; r < runs; r++)
    {
      TideSymbolCache *cache = tide_symbol_cache_new (dir);
      gint64 t0 = g_get_monotonic_time (), t1;

      for (guint i = 0; i < LOOKUPS; i++)
        {
          TideSymbol symbol;
          guint64 address = 0x10000 + 16 * (guint64) ((i * 7919u) % (guint) entries);

          found += tide_symbol_cache_lookup (cache, LIBRARY, address, &symbol);
          tide_symbol_clear (&symbol);
        }
      t1 = g_get_monotonic_time ();
      tide_symbol_cache_free (cache);
      read_ms[r] = (t1 - t0) / 1000.0;
      free_ms[r] = (g_get_monotonic_time () - t1) / 1000.0;
    }
  g_print ("%d entries, %d lookups (%u found over %d runs)\n", entries, LOOKUPS, found, runs);
  g_print ("read and look up  %8.2f ms (median of %d)\n", tide_bench_median (read_ms, runs), runs);
  g_print ("free              %8.2f ms\n", tide_bench_median (free_ms, runs));
  {
    g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
    const char *name;

    while (d != NULL && (name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);

        g_unlink (path);
      }
    g_rmdir (dir);
  }
  return 0;
}
