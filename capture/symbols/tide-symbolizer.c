/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-symbolizer.c: one Dwfl per ELF path, reported at base 0 so that the
 * module's addresses are the file's own vaddrs (plus the Dwfl bias, which is
 * 0 for ET_DYN and ET_EXEC reported this way; we still add it).
 *
 * Function names come from our own sorted copy of the module's function
 * symbols, searched by bisection: dwfl_module_addrinfo() scans the whole
 * symbol table on every call, which in a library of libtorch_cpu.so's size
 * costs more than all else a stack's symbolization does.
 * Source lines come from dwfl_module_getsrc(), which bisects the aranges and
 * the CU's line table itself.
 *
 * Separate debug files are found by our own find_debuginfo callback
 * (tide-debuginfo.h), which never asks debuginfod.
 *
 * Each open file holds one or two fds, so at most max_files stay open, least
 * recently used first out.
 */
#include "config.h"

#include "tide-symbolizer.h"

#include "tide-debuginfo.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

#define TIDE_SYMBOLIZER_DEFAULT_MAX_FILES 256

typedef char *(*TideDemangleFunc) (const char *, char *, size_t *, int *);

typedef struct
{
  Dwarf_Addr  addr;
  guint64     size;  /* 0 for symbols without a size (some assembly) */
  const char *name;  /* in the ELF string table, alive as long as the Dwfl */
  int         rank;  /* lower wins among aliases: global, weak, local */
} TideSymEntry;

typedef struct
{
  GList        lru_link;  /* first member; in TideSymbolizer.lru, data = path key */
  GArray      *symbols;   /* TideSymEntry, sorted by addr, one per addr */
  Dwfl        *dwfl;
  Dwfl_Module *module;
  Dwarf_Addr   low;   /* module bounds, in Dwfl addresses */
  Dwarf_Addr   high;
  Dwarf_Addr   bias;  /* Dwfl address minus ELF vaddr */
} TideSymFile;

struct _TideSymbolizer
{
  GHashTable       *files;   /* path → TideSymFile */
  GHashTable       *failed;  /* paths that did not open, so they cost one try */
  GQueue            lru;     /* of TideSymFile.lru_link, most recent first */
  guint             max_files;
  TideDemangleFunc  demangle;
  void             *libstdcxx;
  gboolean          demangle_looked_up;
};

static void
tide_sym_file_free (gpointer data)
{
  TideSymFile *file = data;

  if (file == NULL)
    return;
  g_array_unref (file->symbols);
  dwfl_end (file->dwfl);
  g_free (file);
}

TideSymbolizer *
tide_symbolizer_new (void)
{
  TideSymbolizer *self = g_new0 (TideSymbolizer, 1);

  self->files = g_hash_table_new_full (g_str_hash, g_str_equal,
                                       g_free, tide_sym_file_free);
  self->failed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_queue_init (&self->lru);
  self->max_files = TIDE_SYMBOLIZER_DEFAULT_MAX_FILES;
  return self;
}

void
tide_symbolizer_free (TideSymbolizer *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->files);
  g_hash_table_unref (self->failed);
  if (self->libstdcxx != NULL)
    dlclose (self->libstdcxx);
  g_free (self);
}

static void
tide_symbolizer_drop (TideSymbolizer *self,
                      TideSymFile    *file)
{
  g_queue_unlink (&self->lru, &file->lru_link);
  g_hash_table_remove (self->files, file->lru_link.data);
}

void
tide_symbolizer_forget (TideSymbolizer *self,
                        const char     *path)
{
  TideSymFile *file;

  g_return_if_fail (self != NULL);
  g_hash_table_remove (self->failed, path);
  if ((file = g_hash_table_lookup (self->files, path)) != NULL)
    tide_symbolizer_drop (self, file);
}

/* Closes least recently used files until at most @keep stay open. */
static void
tide_symbolizer_evict_to (TideSymbolizer *self,
                          guint           keep)
{
  while (self->lru.length > keep)
    {
      /* lru_link is the first member: the link is the file. */
      tide_symbolizer_drop (self, (TideSymFile *) self->lru.tail);
    }
}

void
tide_symbolizer_set_max_files (TideSymbolizer *self,
                               guint           max_files)
{
  g_return_if_fail (self != NULL);
  self->max_files = MAX (max_files, 1);
  tide_symbolizer_evict_to (self, self->max_files);
}

guint
tide_symbolizer_get_n_open_files (TideSymbolizer *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->lru.length;
}

void
tide_symbol_clear (TideSymbol *symbol)
{
  g_clear_pointer (&symbol->function, g_free);
  g_clear_pointer (&symbol->file, g_free);
  symbol->line = 0;
  for (guint i = 0; i < symbol->n_inlines; i++)
    {
      g_free (symbol->inlines[i].function);
      g_free (symbol->inlines[i].file);
    }
  g_clear_pointer (&symbol->inlines, g_free);
  symbol->n_inlines = 0;
}

void
tide_symbol_copy (TideSymbol       *dest,
                  const TideSymbol *src)
{
  dest->function = g_strdup (src->function);
  dest->file = g_strdup (src->file);
  dest->line = src->line;
  dest->n_inlines = src->n_inlines;
  dest->inlines = src->n_inlines ? g_new0 (TideInlineLevel, src->n_inlines) : NULL;
  for (guint i = 0; i < src->n_inlines; i++)
    {
      dest->inlines[i].function = g_strdup (src->inlines[i].function);
      dest->inlines[i].file = g_strdup (src->inlines[i].file);
      dest->inlines[i].line = src->inlines[i].line;
    }
}

static int
tide_sym_entry_compare (gconstpointer a,
                        gconstpointer b)
{
  const TideSymEntry *ea = a;
  const TideSymEntry *eb = b;

  if (ea->addr != eb->addr)
    return ea->addr < eb->addr ? -1 : 1;
  if (ea->rank != eb->rank)
    return ea->rank - eb->rank;
  return ea->size > eb->size ? -1 : ea->size < eb->size;
}

static int
tide_sym_binding_rank (int binding)
{
  switch (binding)
    {
    case STB_GLOBAL:
      return 0;
    case STB_WEAK:
      return 1;
    default:
      return 2;
    }
}

/* The function symbols of @module (symtab of the file or its debug file,
 * else dynsym), sorted, keeping the best-ranked alias at each address. */
static GArray *
tide_sym_file_load_symbols (Dwfl_Module *module)
{
  int n = dwfl_module_getsymtab (module);
  GArray *symbols = g_array_sized_new (FALSE, FALSE, sizeof (TideSymEntry), MAX (n, 0));
  guint kept = 0;

  for (int i = 1; i < n; i++)
    {
      GElf_Sym sym;
      GElf_Addr addr;
      const char *name = dwfl_module_getsym_info (module, i, &sym, &addr, NULL, NULL, NULL);
      TideSymEntry entry;

      if (name == NULL || name[0] == '\0' || sym.st_shndx == SHN_UNDEF)
        continue;
      if (GELF_ST_TYPE (sym.st_info) != STT_FUNC
          && GELF_ST_TYPE (sym.st_info) != STT_GNU_IFUNC)
        continue;
      entry.addr = addr;
      entry.size = sym.st_size;
      entry.name = name;
      entry.rank = tide_sym_binding_rank (GELF_ST_BIND (sym.st_info));
      g_array_append_val (symbols, entry);
    }
  g_array_sort (symbols, tide_sym_entry_compare);

  for (guint i = 0; i < symbols->len; i++)
    {
      TideSymEntry *e = &g_array_index (symbols, TideSymEntry, i);

      if (kept == 0 || e->addr != g_array_index (symbols, TideSymEntry, kept - 1).addr)
        g_array_index (symbols, TideSymEntry, kept++) = *e;
    }
  g_array_set_size (symbols, kept);
  return symbols;
}

static TideSymFile *
tide_sym_file_open (const char *path)
{
  Dwfl *dwfl = dwfl_begin (&tide_debuginfo_dwfl_callbacks);
  Dwfl_Module *module;
  TideSymFile *file;
  GElf_Addr bias = 0;

  if (dwfl == NULL)
    return NULL;

  /* Base 0 with add_p_vaddr: Dwfl addresses equal the file's vaddrs. */
  dwfl_report_begin (dwfl);
  module = dwfl_report_elf (dwfl, path, path, -1, 0, true);
  if (module == NULL || dwfl_report_end (dwfl, NULL, NULL) != 0
      || dwfl_module_getelf (module, &bias) == NULL)
    {
      g_debug ("symbolizer: cannot open %s: %s", path, dwfl_errmsg (-1));
      dwfl_end (dwfl);
      return NULL;
    }

  file = g_new0 (TideSymFile, 1);
  file->dwfl = dwfl;
  file->module = module;
  file->bias = bias;
  dwfl_module_info (module, NULL, &file->low, &file->high,
                    NULL, NULL, NULL, NULL);
  file->symbols = tide_sym_file_load_symbols (module);
  return file;
}

static TideSymFile *
tide_symbolizer_get_file (TideSymbolizer *self,
                          const char     *path)
{
  TideSymFile *file = g_hash_table_lookup (self->files, path);
  char *key;

  if (file != NULL)
    {
      g_queue_unlink (&self->lru, &file->lru_link);
      g_queue_push_head_link (&self->lru, &file->lru_link);
      return file;
    }
  if (g_hash_table_contains (self->failed, path))
    return NULL;

  /* Cache failures too, so a missing file costs one open, not one per frame. */
  if ((file = tide_sym_file_open (path)) == NULL)
    {
      g_hash_table_add (self->failed, g_strdup (path));
      return NULL;
    }
  tide_symbolizer_evict_to (self, self->max_files - 1);
  key = g_strdup (path);
  file->lru_link.data = key;
  g_hash_table_insert (self->files, key, file);
  g_queue_push_head_link (&self->lru, &file->lru_link);
  return file;
}

static char *tide_symbolizer_demangle (TideSymbolizer *self,
                                       const char     *name);

/* "__libc_start_main@@GLIBC_2.34" is __libc_start_main to a reader: the
 * symbol version (from .symtab of a versioned library) is dropped. */
static char *
tide_symbolizer_readable_name (TideSymbolizer *self,
                               const char     *name)
{
  const char *at = strchr (name, '@');
  g_autofree char *bare = NULL;

  if (at == NULL || at == name)
    return tide_symbolizer_demangle (self, name);
  bare = g_strndup (name, at - name);
  return tide_symbolizer_demangle (self, bare);
}

static char *
tide_symbolizer_demangle (TideSymbolizer *self,
                          const char     *name)
{
  char *demangled;
  char *copy;
  int status = -1;

  if (!g_str_has_prefix (name, "_Z"))
    return g_strdup (name);

  /* Borrow libstdc++'s demangler at run time rather than linking C++. */
  if (!self->demangle_looked_up)
    {
      self->demangle_looked_up = TRUE;
      self->libstdcxx = dlopen ("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
      if (self->libstdcxx != NULL)
        *(void **) &self->demangle = dlsym (self->libstdcxx, "__cxa_demangle");
    }
  if (self->demangle == NULL)
    return g_strdup (name);

  demangled = self->demangle (name, NULL, NULL, &status);
  if (demangled == NULL || status != 0)
    {
      free (demangled);
      return g_strdup (name);
    }
  copy = g_strdup (demangled);
  free (demangled);
  return copy;
}

static gboolean
tide_sym_entry_covers (const TideSymEntry *e,
                       const TideSymEntry *next,
                       Dwarf_Addr          addr)
{
  if (e->size > 0)
    return addr - e->addr < e->size;
  /* Sizeless: trust it up to the next symbol, never past the last one. */
  return next != NULL && addr < next->addr;
}

static const char *
tide_sym_file_symbol_name (TideSymFile *file,
                           Dwarf_Addr   addr)
{
  const TideSymEntry *entries = (const TideSymEntry *) file->symbols->data;
  guint lo = 0;
  guint hi = file->symbols->len;

  /* lo = number of symbols starting at or below addr */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;

      if (entries[mid].addr <= addr)
        lo = mid + 1;
      else
        hi = mid;
    }

  /* The closest start usually covers addr; a few steps back find an
   * enclosing symbol when a smaller one (a local label) sits in between. */
  for (guint i = lo, steps = 0; i > 0 && steps < 8; i--, steps++)
    {
      const TideSymEntry *next = i < file->symbols->len ? &entries[i] : NULL;

      if (tide_sym_entry_covers (&entries[i - 1], next, addr))
        return entries[i - 1].name;
    }
  return NULL;
}

/* The name of the innermost function DIE around @addr, for files whose
 * symbol tables lack it but whose DWARF has it. */
static const char *
tide_sym_file_dwarf_name (TideSymFile *file,
                          Dwarf_Addr   addr)
{
  Dwarf_Addr cu_bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie (file->module, addr, &cu_bias);
  Dwarf_Die *scopes = NULL;
  const char *name = NULL;
  int n;

  if (cu == NULL)
    return NULL;
  n = dwarf_getscopes (cu, addr - cu_bias, &scopes);
  for (int i = 0; i < n && name == NULL; i++)
    {
      if (dwarf_tag (&scopes[i]) == DW_TAG_subprogram)
        name = dwarf_diename (&scopes[i]);
    }
  free (scopes);
  return name;
}

/* Line tables often hold paths relative to the compilation directory. */
static char *
tide_source_path (const char *source,
                  const char *comp_dir)
{
  if (g_path_is_absolute (source) || comp_dir == NULL)
    return g_strdup (source);
  if (g_path_is_absolute (comp_dir))
    return g_canonicalize_filename (source, comp_dir);
  return g_build_filename (comp_dir, source, NULL);
}

static void
tide_sym_file_source (TideSymFile *file,
                      Dwarf_Addr   addr,
                      TideSymbol  *out)
{
  Dwfl_Line *line = dwfl_module_getsrc (file->module, addr);
  const char *source;
  int lineno = 0;

  if (line == NULL)
    return;
  source = dwfl_lineinfo (line, NULL, &lineno, NULL, NULL, NULL);
  if (source == NULL)
    return;
  out->file = tide_source_path (source, dwfl_line_comp_dir (line));
  out->line = lineno;
}

/* The name of an inlined subroutine comes from its abstract origin; the
 * linkage name, when there is one, demangles to the same text as the
 * symbol tables give for C++. */
static char *
tide_symbolizer_die_name (TideSymbolizer *self,
                          Dwarf_Die      *die)
{
  Dwarf_Attribute attr;
  const char *name = NULL;

  if (dwarf_attr_integrate (die, DW_AT_linkage_name, &attr) != NULL)
    name = dwarf_formstring (&attr);
  if (name == NULL && dwarf_attr_integrate (die, DW_AT_name, &attr) != NULL)
    name = dwarf_formstring (&attr);
  return tide_symbolizer_readable_name (self, name != NULL ? name : "??");
}

/* Where the inlined subroutine @die was called from: DW_AT_call_file is an
 * index into the file table of its compilation unit. */
static void
tide_die_call_site (Dwarf_Die  *cu,
                    Dwarf_Die  *die,
                    char      **file,
                    int        *line)
{
  Dwarf_Attribute attr;
  Dwarf_Word value;
  Dwarf_Files *files;
  size_t n_files;

  *file = NULL;
  *line = 0;
  if (dwarf_formudata (dwarf_attr (die, DW_AT_call_line, &attr), &value) == 0)
    *line = (int) value;
  if (dwarf_formudata (dwarf_attr (die, DW_AT_call_file, &attr), &value) == 0 &&
      dwarf_getsrcfiles (cu, &files, &n_files) == 0 && value < n_files)
    {
      const char *name = dwarf_filesrc (files, value, NULL, NULL);

      if (name != NULL)
        *file = tide_source_path (name, dwarf_formstring (dwarf_attr (cu, DW_AT_comp_dir,
                                                                       &attr)));
    }
}

/* Expands the calls inlined at @addr, innermost first.  @out holds the line
 * table's position on entry, which is inside the innermost inlined call;
 * each level takes the position it has, and passes its call site on to the
 * next level out, the last to @out itself. */
static void
tide_sym_file_inlines (TideSymbolizer *self,
                       TideSymFile    *file,
                       Dwarf_Addr      addr,
                       TideSymbol     *out)
{
  Dwarf_Addr cu_bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie (file->module, addr, &cu_bias);
  Dwarf_Die *scopes = NULL;
  GArray *levels;
  int n;

  if (cu == NULL || (n = dwarf_getscopes (cu, addr - cu_bias, &scopes)) <= 0)
    return;
  levels = g_array_new (FALSE, TRUE, sizeof (TideInlineLevel));
  for (int i = 0; i < n && dwarf_tag (&scopes[i]) != DW_TAG_subprogram; i++)
    {
      TideInlineLevel level;

      if (dwarf_tag (&scopes[i]) != DW_TAG_inlined_subroutine)
        continue;
      level.function = tide_symbolizer_die_name (self, &scopes[i]);
      level.file = out->file;
      level.line = out->line;
      g_array_append_val (levels, level);
      tide_die_call_site (cu, &scopes[i], &out->file, &out->line);
    }
  free (scopes);
  out->n_inlines = levels->len;
  out->inlines = (TideInlineLevel *) (void *) g_array_free (levels, levels->len == 0);
}

gboolean
tide_symbolizer_lookup (TideSymbolizer *self,
                        const char     *path,
                        guint64         elf_address,
                        TideSymbol     *out)
{
  TideSymFile *file;
  Dwarf_Addr addr;
  const char *name;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  memset (out, 0, sizeof *out);
  if (path == NULL || (file = tide_symbolizer_get_file (self, path)) == NULL)
    return FALSE;

  addr = elf_address + file->bias;
  if (addr < file->low || addr >= file->high)
    return FALSE;

  name = tide_sym_file_symbol_name (file, addr);
  if (name == NULL)
    name = tide_sym_file_dwarf_name (file, addr);
  if (name == NULL)
    return FALSE;

  out->function = tide_symbolizer_readable_name (self, name);
  tide_sym_file_source (file, addr, out);
  tide_sym_file_inlines (self, file, addr, out);
  return TRUE;
}
