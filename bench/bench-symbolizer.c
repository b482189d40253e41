/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * bench-symbolizer: what the recorder's symbolizer costs per address, against
 * libdw alone in the same invocation.  Both resolve LOOKUPS addresses spread
 * evenly over the executable segment of one library (libc, or --library),
 * from a cold start: medians of --runs.
 *
 *   libdw alone      an offline Dwfl: dwfl_module_addrname() and
 *                    dwfl_module_getsrc(), the function and its line;
 *   tide symbolizer  tide_symbolizer_lookup(): the same, plus the inline
 *                    levels at the address (dwarf_getscopes()), C++ names
 *                    demangled and the symbol version dropped.
 *
 * A recording resolves each address once, on the symbolizer's own thread.
 *
 *   _build/bench/bench-symbolizer [--library PATH] [--runs N]
 */
#include "config.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "tide-bench-median.h"
#include "tide-symbolizer.h"

#define LOOKUPS 10000

typedef struct
{
  double first_ms;     /* opening the file and the first lookup */
  double lookups_ms;   /* all LOOKUPS after it */
  guint  named;
  guint  with_line;
} Run;

typedef void (*LookupFunc) (const char *path,
                            guint64     text_start,
                            guint64     text_size,
                            Run        *run);

static int
find_libc_cb (struct dl_phdr_info *info,
              size_t               size,
              void                *data)
{
  if (strstr (info->dlpi_name, "/libc.so") == NULL)
    return 0;
  *(char **) data = g_strdup (info->dlpi_name);
  return 1;
}

/* The vaddr range of the executable PT_LOAD segment of @path. */
static gboolean
text_segment (const char *path,
              guint64    *start,
              guint64    *size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  Elf *elf;
  size_t phnum = 0;
  gboolean found = FALSE;

  if (fd < 0)
    return FALSE;
  elf_version (EV_CURRENT);
  elf = elf_begin (fd, ELF_C_READ, NULL);
  if (elf != NULL && elf_getphdrnum (elf, &phnum) == 0)
    for (size_t i = 0; i < phnum && !found; i++)
      {
        GElf_Phdr ph;

        if (gelf_getphdr (elf, i, &ph) == NULL || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
          continue;
        *start = ph.p_vaddr;
        *size = ph.p_memsz;
        found = TRUE;
      }
  elf_end (elf);
  close (fd);
  return found;
}

static guint64
address_at (guint64 text_start,
            guint64 text_size,
            guint   i)
{
  return text_start + text_size / LOOKUPS * i;
}

static const Dwfl_Callbacks offline_callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = dwfl_standard_find_debuginfo,
  .section_address = dwfl_offline_section_address,
};

/* One libdw lookup: the function's name and, where there is one, its line.
 * A line is counted only with a name, as the symbolizer gives one. */
static void
libdw_lookup (Dwfl_Module *module,
              GElf_Addr    address,
              Run         *run)
{
  Dwfl_Line *line = dwfl_module_getsrc (module, address);
  gboolean named = dwfl_module_addrname (module, address) != NULL;
  int number = 0;

  run->named += named;
  if (named && line != NULL && dwfl_lineinfo (line, NULL, &number, NULL, NULL, NULL) != NULL)
    run->with_line += number > 0;
}

static void
libdw_run (const char *path,
           guint64     text_start,
           guint64     text_size,
           Run        *run)
{
  gint64 t0 = g_get_monotonic_time (), t1;
  Dwfl *dwfl = dwfl_begin (&offline_callbacks);
  Dwfl_Module *module = dwfl_report_offline (dwfl, path, path, -1);
  GElf_Addr bias = 0;

  dwfl_report_end (dwfl, NULL, NULL);
  if (module == NULL || dwfl_module_getelf (module, &bias) == NULL)
    g_error ("libdw cannot read %s: %s", path, dwfl_errmsg (-1));
  libdw_lookup (module, bias + text_start, &(Run) { 0 });
  t1 = g_get_monotonic_time ();
  for (guint i = 0; i < LOOKUPS; i++)
    libdw_lookup (module, bias + address_at (text_start, text_size, i), run);
  run->lookups_ms = (g_get_monotonic_time () - t1) / 1000.0;
  run->first_ms = (t1 - t0) / 1000.0;
  dwfl_end (dwfl);
}

static void
tide_run (const char *path,
          guint64     text_start,
          guint64     text_size,
          Run        *run)
{
  gint64 t0 = g_get_monotonic_time (), t1;
  TideSymbolizer *symbolizer = tide_symbolizer_new ();
  TideSymbol symbol;

  tide_symbolizer_lookup (symbolizer, path, text_start, &symbol);
  tide_symbol_clear (&symbol);
  t1 = g_get_monotonic_time ();
  for (guint i = 0; i < LOOKUPS; i++)
    {
      run->named += tide_symbolizer_lookup (symbolizer, path,
                                            address_at (text_start, text_size, i), &symbol);
      run->with_line += symbol.line > 0;
      tide_symbol_clear (&symbol);
    }
  run->lookups_ms = (g_get_monotonic_time () - t1) / 1000.0;
  run->first_ms = (t1 - t0) / 1000.0;
  tide_symbolizer_free (symbolizer);
}

static double
median (GArray *values)
{
  return tide_bench_median ((double *) (void *) values->data, values->len);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *library = NULL;
  gint runs = 5;
  GOptionEntry entries[] = {
    { "library", 0, 0, G_OPTION_ARG_FILENAME, &library, "The ELF file to look up in", "PATH" },
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Runs of each (5)", "N" },
    { NULL },
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- the symbolizer against libdw");
  g_autoptr(GError) error = NULL;
  const struct { const char *name; LookupFunc run; } ways[] = {
    { "libdw alone", libdw_run },
    { "tide symbolizer", tide_run },
  };
  GArray *first[G_N_ELEMENTS (ways)], *lookups[G_N_ELEMENTS (ways)];
  Run last[G_N_ELEMENTS (ways)];
  guint64 text_start, text_size;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || runs < 1)
    {
      g_printerr ("bench-symbolizer: %s\n", error ? error->message : "--runs must be 1 or more");
      return 2;
    }
  if (library == NULL)
    dl_iterate_phdr (find_libc_cb, &library);
  if (library == NULL || !text_segment (library, &text_start, &text_size))
    {
      g_printerr ("bench-symbolizer: no executable segment in %s\n", library ? library : "libc");
      return 2;
    }

  g_print ("%u lookups over the text of %s, medians of %d runs, alternating\n", LOOKUPS,
           library, runs);
  g_print ("  %-16s %12s %14s %8s %10s\n", "", "open+first", "lookups", "named", "with line");
  for (guint w = 0; w < G_N_ELEMENTS (ways); w++)
    {
      first[w] = g_array_new (FALSE, FALSE, sizeof (double));
      lookups[w] = g_array_new (FALSE, FALSE, sizeof (double));
    }
  for (gint r = 0; r < runs; r++)
    for (guint w = 0; w < G_N_ELEMENTS (ways); w++)
      {
        last[w] = (Run) { 0 };
        ways[w].run (library, text_start, text_size, &last[w]);
        g_array_append_val (first[w], last[w].first_ms);
        g_array_append_val (lookups[w], last[w].lookups_ms);
      }
  for (guint w = 0; w < G_N_ELEMENTS (ways); w++)
    {
      double lookups_ms = median (lookups[w]);

      g_print ("  %-16s %9.1f ms %11.1f ms %8u %10u", ways[w].name, median (first[w]),
               lookups_ms, last[w].named, last[w].with_line);
      if (w > 0)
        g_print ("   %.3gx libdw", lookups_ms / median (lookups[0]));
      g_print ("\n");
    }
  for (guint w = 0; w < G_N_ELEMENTS (ways); w++)
    {
      g_array_unref (first[w]);
      g_array_unref (lookups[w]);
    }
  return 0;
}
