/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-symbolizer.c: TideSymbolizer against functions of this very test
 * (symbolizer-target.c, built -O0 -g) and of a stripped copy of them.
 */
#include "config.h"

#include <dlfcn.h>
#include <glib/gstdio.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "tide-debuginfo.h"
#include "tide-symbolizer.h"
#include "tide-test-util.h"
#include "symbolizer-target.h"

typedef struct
{
  const void *addr;
  char       *path;
  guint64     bias;
} FindObject;

static int
find_object_cb (struct dl_phdr_info *info,
                size_t               size,
                void                *data)
{
  FindObject *find = data;
  guint64 addr = (guintptr) find->addr;

  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      guint64 start = info->dlpi_addr + ph->p_vaddr;

      if (ph->p_type != PT_LOAD || addr < start || addr >= start + ph->p_memsz)
        continue;
      /* The main program has an empty name. */
      if (info->dlpi_name[0] == '\0')
        find->path = g_file_read_link ("/proc/self/exe", NULL);
      else
        find->path = g_strdup (info->dlpi_name);
      find->bias = info->dlpi_addr;
      return 1;
    }
  return 0;
}

/* The ELF path and file vaddr of a runtime address, as the recorder gets
 * them from TideAddressSpace. */
static char *
locate (const void *addr,
        guint64    *elf_address)
{
  FindObject find = { addr, NULL, 0 };

  dl_iterate_phdr (find_object_cb, &find);
  g_assert_nonnull (find.path);
  *elf_address = (guintptr) addr - find.bias;
  return find.path;
}

#define TARGET_SOURCE "tests/capture/symbols/symbolizer-target.c"

/* The line of symbolizer-target.c that carries "MARK:@name". */
static int
marker_line (const char *name)
{
  g_autofree char *marker = g_strdup_printf ("MARK:%s ", name);

  return tide_test_source_line (TARGET_SOURCE, marker);
}

static void
assert_symbol (TideSymbolizer *symbolizer,
               const void     *runtime_addr,
               const char     *function,
               const char     *marker)
{
  guint64 elf_address;
  g_autofree char *path = locate (runtime_addr, &elf_address);
  g_autofree char *basename = NULL;
  TideSymbol sym;

  g_assert_true (tide_symbolizer_lookup (symbolizer, path, elf_address, &sym));
  g_assert_cmpstr (sym.function, ==, function);
  g_assert_nonnull (sym.file);
  g_assert_true (g_path_is_absolute (sym.file));
  basename = g_path_get_basename (sym.file);
  g_assert_cmpstr (basename, ==, "symbolizer-target.c");
  g_assert_cmpint (sym.line, ==, marker_line (marker));
  tide_symbol_clear (&sym);
}

static void
test_entry (void)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();

  assert_symbol (symbolizer, (const void *) symtest_alpha, "symtest_alpha", "alpha-entry");
  assert_symbol (symbolizer, (const void *) symtest_beta_pointer,
                 "symtest_hidden_beta", "beta-entry");
}

static void
test_middle (void)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();

  /* A return address minus 1, as the unwinder hands them over. */
  g_assert_cmpint (symtest_alpha (1), ==, 4);
  assert_symbol (symbolizer, (const char *) symtest_captured_pc - 1,
                 "symtest_alpha", "alpha-first");
}

static void
test_demangle (void)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();

  assert_symbol (symbolizer, (const void *) symtest_mangled,
                 "tide::symtest::mangled(int)", "mangled-entry");
}

static void
test_stripped (void)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();
  void *lib = dlopen (SYMTEST_STRIPPED_LIB, RTLD_NOW | RTLD_LOCAL);
  int (**beta) (int);
  void *alpha;
  guint64 elf_address;
  g_autofree char *path = NULL;
  TideSymbol sym;

  g_assert_nonnull (lib);
  alpha = dlsym (lib, "symtest_alpha");
  beta = dlsym (lib, "symtest_beta_pointer");
  g_assert_nonnull (alpha);
  g_assert_nonnull (beta);

  /* Exported: named from .dynsym, but no source. */
  path = locate (alpha, &elf_address);
  g_assert_true (g_str_has_suffix (path, "libtide-symtest-stripped.so"));
  g_assert_true (tide_symbolizer_lookup (symbolizer, path, elf_address, &sym));
  g_assert_cmpstr (sym.function, ==, "symtest_alpha");
  g_assert_null (sym.file);
  g_assert_cmpint (sym.line, ==, 0);
  tide_symbol_clear (&sym);

  /* Static: no name at all, so the caller shows library + offset. */
  g_free (path);
  path = locate ((const void *) *beta, &elf_address);
  g_assert_false (tide_symbolizer_lookup (symbolizer, path, elf_address, &sym));
  g_assert_null (sym.function);
  g_assert_null (sym.file);
  dlclose (lib);
}

/* Debug info only in a separate file named by .gnu_debuglink. */
static void
test_debuglink (void)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();
  void *lib = dlopen (SYMTEST_DEBUGLINK_LIB, RTLD_NOW | RTLD_LOCAL);
  int (**beta) (int);

  g_assert_nonnull (lib);
  beta = dlsym (lib, "symtest_beta_pointer");
  g_assert_nonnull (beta);
  assert_symbol (symbolizer, dlsym (lib, "symtest_alpha"), "symtest_alpha", "alpha-entry");
  /* A static function: only the debug file's .symtab knows it. */
  assert_symbol (symbolizer, (const void *) *beta, "symtest_hidden_beta", "beta-entry");
  dlclose (lib);
}

/* Looks up symtest_alpha of the library at @path (loaded) with a new
 * symbolizer: what a recording that starts now would resolve. */
static void
lookup_alpha (void       *lib,
              TideSymbol *sym)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();
  g_autofree char *path = NULL;
  guint64 elf_address;

  path = locate (dlsym (lib, "symtest_alpha"), &elf_address);
  g_assert_true (g_str_has_suffix (path, "libtide-symtest-build-id.so"));
  g_assert_true (tide_symbolizer_lookup (symbolizer, path, elf_address, sym));
  g_assert_cmpstr (sym->function, ==, "symtest_alpha");
}

/* Debug info only under the debug root's .build-id/xx/yyyy.debug (a
 * temporary root, through TIDEMARK_DEBUGINFO_DIR): found by the library's
 * build-id, and only a file with that build-id is taken. */
static void
test_build_id (void)
{
  g_autofree char *root = tide_test_make_dir ("tide-debug-root");
  void *lib = dlopen (SYMTEST_BUILD_ID_LIB, RTLD_NOW | RTLD_LOCAL);
  g_autofree char *hex = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *debug_path = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *other = NULL;
  gboolean has_debug_file = TRUE;
  gsize length;
  TideSymbol sym;

  g_assert_nonnull (root);
  g_assert_nonnull (lib);
  g_setenv (TIDE_DEBUGINFO_DIR_ENV, root, TRUE);
  hex = tide_debuginfo_identify (SYMTEST_BUILD_ID_LIB, &has_debug_file);
  g_assert_nonnull (hex);
  g_assert_cmpuint (strlen (hex), ==, 40);
  g_assert_false (has_debug_file);
  dir = g_strdup_printf ("%s/.build-id/%.2s", root, hex);
  debug_path = g_strdup_printf ("%s/%s.debug", dir, hex + 2);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);

  /* No debug file yet: the name from .dynsym, no source. */
  lookup_alpha (lib, &sym);
  g_assert_null (sym.file);
  g_assert_cmpint (sym.line, ==, 0);
  tide_symbol_clear (&sym);

  /* A file of another build-id at that name is not the debug file. */
  g_assert_true (g_file_get_contents (SYMTEST_STRIPPED_LIB, &other, &length, NULL));
  g_assert_true (g_file_set_contents (debug_path, other, (gssize) length, NULL));
  lookup_alpha (lib, &sym);
  g_assert_null (sym.file);
  tide_symbol_clear (&sym);

  /* The real one: source file and line. */
  g_assert_true (g_file_get_contents (SYMTEST_DEBUG_FILE, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (debug_path, contents, (gssize) length, NULL));
  g_free (tide_debuginfo_identify (SYMTEST_BUILD_ID_LIB, &has_debug_file));
  g_assert_true (has_debug_file);
  lookup_alpha (lib, &sym);
  g_assert_nonnull (sym.file);
  g_assert_true (g_str_has_suffix (sym.file, "/symbolizer-target.c"));
  g_assert_cmpint (sym.line, ==, marker_line ("alpha-entry"));
  tide_symbol_clear (&sym);

  g_unsetenv (TIDE_DEBUGINFO_DIR_ENV);
  g_unlink (debug_path);
  g_rmdir (dir);
  g_free (dir);
  dir = g_build_filename (root, ".build-id", NULL);
  g_rmdir (dir);
  g_rmdir (root);
  dlclose (lib);
}

/* With room for one file, switching files closes the other, and both still
 * symbolize. */
static void
test_lru (void)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();
  void *lib = dlopen (SYMTEST_DEBUGLINK_LIB, RTLD_NOW | RTLD_LOCAL);
  const void *lib_alpha;

  g_assert_nonnull (lib);
  lib_alpha = dlsym (lib, "symtest_alpha");
  assert_symbol (symbolizer, (const void *) symtest_alpha, "symtest_alpha", "alpha-entry");
  assert_symbol (symbolizer, lib_alpha, "symtest_alpha", "alpha-entry");
  g_assert_cmpuint (tide_symbolizer_get_n_open_files (symbolizer), ==, 2);

  tide_symbolizer_set_max_files (symbolizer, 1);
  g_assert_cmpuint (tide_symbolizer_get_n_open_files (symbolizer), ==, 1);
  for (guint i = 0; i < 3; i++)
    {
      assert_symbol (symbolizer, (const void *) symtest_alpha, "symtest_alpha", "alpha-entry");
      assert_symbol (symbolizer, lib_alpha, "symtest_alpha", "alpha-entry");
      g_assert_cmpuint (tide_symbolizer_get_n_open_files (symbolizer), ==, 1);
    }
  tide_symbolizer_forget (symbolizer, "/not/cached.so");
  dlclose (lib);
}

static void
test_bogus (void)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();
  g_autofree char *source = g_build_filename (TIDE_SOURCE_ROOT, TARGET_SOURCE, NULL);
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  TideSymbol sym;

  /* Twice: the second answer comes from the failure cache. */
  for (guint i = 0; i < 2; i++)
    g_assert_false (tide_symbolizer_lookup (symbolizer, "/nonexistent/libnothing.so", 0x1000,
                                            &sym));
  g_assert_false (tide_symbolizer_lookup (symbolizer, source, 0x10, &sym));
  g_assert_false (tide_symbolizer_lookup (symbolizer, "/dev/null", 0x10, &sym));
  g_assert_false (tide_symbolizer_lookup (symbolizer, NULL, 0x10, &sym));
  g_assert_false (tide_symbolizer_lookup (symbolizer, exe, G_GUINT64_CONSTANT (0xfffffffff000),
                                          &sym));
  g_assert_false (tide_symbolizer_lookup (symbolizer, exe, G_MAXUINT64, &sym));
  g_assert_null (sym.function);

  /* The file still symbolizes after the failures. */
  assert_symbol (symbolizer, (const void *) symtest_alpha, "symtest_alpha", "alpha-entry");
  tide_symbolizer_forget (symbolizer, exe);
  assert_symbol (symbolizer, (const void *) symtest_alpha, "symtest_alpha", "alpha-entry");
}

/* A versioned library's .symtab names "__libc_start_main@@GLIBC_2.34";
 * people read __libc_start_main. */
static void
test_symbol_version_dropped (void)
{
  g_autoptr(TideSymbolizer) symbolizer = tide_symbolizer_new ();
  void *fn = dlsym (RTLD_DEFAULT, "__libc_start_main");
  TideSymbol symbol = { 0 };
  Dl_info info;

  g_assert_nonnull (fn);
  g_assert_true (dladdr (fn, &info) != 0);
  g_assert_true (tide_symbolizer_lookup (symbolizer, info.dli_fname,
                                         (guint64) ((char *) fn - (char *) info.dli_fbase) + 16,
                                         &symbol));
  g_assert_cmpstr (symbol.function, ==, "__libc_start_main");
  tide_symbol_clear (&symbol);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/symbolizer/entry", test_entry);
  g_test_add_func ("/symbolizer/middle", test_middle);
  g_test_add_func ("/symbolizer/demangle", test_demangle);
  g_test_add_func ("/symbolizer/stripped", test_stripped);
  g_test_add_func ("/symbolizer/debuglink", test_debuglink);
  g_test_add_func ("/symbolizer/build-id", test_build_id);
  g_test_add_func ("/symbolizer/lru", test_lru);
  g_test_add_func ("/symbolizer/bogus", test_bogus);
  g_test_add_func ("/symbolizer/symbol-version", test_symbol_version_dropped);

  return g_test_run ();
}
