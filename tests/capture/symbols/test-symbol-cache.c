/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-symbol-cache.c: TideSymbolCache over the symbolizer test libraries
 * (symbolizer-target.c built -O0 -g): one whose DWARF is in a separate file
 * found through .gnu_debuglink, a stripped one, and a stripped one without
 * a build-id.
 */
#include "config.h"

#include <dlfcn.h>
#include <gio/gio.h>
#include <link.h>
#include <string.h>
#include <sys/stat.h>

#include "tide-debuginfo.h"
#include "tide-symbol-cache.h"
#include "tide-symbolizer.h"
#include "tide-test-util.h"

typedef struct
{
  char    *dir;      /* a fresh cache directory */
  char    *scratch;  /* a fresh directory for copies of the libraries */
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  fixture->dir = tide_test_make_dir ("tide-symcache");
  fixture->scratch = tide_test_make_dir ("tide-symlibs");
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  tide_test_remove_dir (fixture->dir);
  tide_test_remove_dir (fixture->scratch);
  g_free (fixture->dir);
  g_free (fixture->scratch);
}

static char *
copy_to (const char *source,
         const char *dir)
{
  g_autofree char *name = g_path_get_basename (source);
  char *target = g_build_filename (dir, name, NULL);
  g_autoptr (GFile) from = g_file_new_for_path (source);
  g_autoptr (GFile) to = g_file_new_for_path (target);

  g_assert_true (g_file_copy (from, to, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, NULL));
  return target;
}

/* The address of @symbol in the ELF file @library's own vaddr space, as the
 * recorder hands it to the symbolizer. */
static guint64
elf_address_of (const char *library,
                const char *symbol)
{
  void *handle = dlopen (library, RTLD_NOW | RTLD_LOCAL);
  struct link_map *map = NULL;
  Dl_info info;
  void *addr;
  guint64 elf_address;

  g_assert_nonnull (handle);
  addr = dlsym (handle, symbol);
  g_assert_nonnull (addr);
  g_assert_true (dladdr1 (addr, &info, (void **) &map, RTLD_DL_LINKMAP) != 0);
  elf_address = (guintptr) addr - map->l_addr;
  dlclose (handle);
  return elf_address;
}

/* As the stack table resolves a frame, with a symbolizer of its own.
 * Returns whether the cache answered. */
static gboolean
resolve (TideSymbolCache *cache,
         const char      *path,
         guint64          elf_address,
         TideSymbol      *out)
{
  g_autoptr (TideSymbolizer) symbolizer = tide_symbolizer_new ();

  return tide_symbol_cache_resolve (cache, symbolizer, path, elf_address, out);
}

static char *
build_id_of (const char *library)
{
  gboolean has_debug_file;
  char *build_id = tide_debuginfo_identify (library, &has_debug_file);

  g_assert_nonnull (build_id);
  return build_id;
}

/* Where the cache keeps what it resolved in @library. */
static char *
cache_file_path (const Fixture *fixture,
                 const char    *library)
{
  g_autofree char *build_id = build_id_of (library);
  g_autofree char *name = g_strconcat (build_id, ".sym", NULL);

  return g_build_filename (fixture->dir, name, NULL);
}

static char *
cache_file_contents (const Fixture *fixture,
                     const char    *library)
{
  g_autofree char *path = cache_file_path (fixture, library);
  char *contents = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  return contents;
}

/* Writes @library's cache file by hand: the header for its build-id and
 * @debug_file ("yes" or "no"), then @address in hex and @rest. */
static void
plant_cache_file (const Fixture *fixture,
                  const char    *library,
                  const char    *debug_file,
                  guint64        address,
                  const char    *rest)
{
  g_autofree char *path = cache_file_path (fixture, library);
  g_autofree char *build_id = build_id_of (library);
  g_autofree char *contents =
    g_strdup_printf ("tidemark-symbol-cache 2 %s debug-file=%s\n%" G_GINT64_MODIFIER "x%s",
                     build_id, debug_file, address, rest);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
}

/* What one recording resolved, the next finds in the cache, equal. */
static void
test_round_trip (Fixture       *fixture,
                 gconstpointer  data)
{
  guint64 alpha = elf_address_of (SYMTEST_DEBUGLINK_LIB, "symtest_alpha");
  guint64 nowhere = G_GUINT64_CONSTANT (0xfffffff000);
  TideSymbol first = { 0 }, again = { 0 }, none = { 0 };
  g_autofree char *contents = NULL;

  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    g_assert_false (resolve (cache, SYMTEST_DEBUGLINK_LIB, alpha, &first));
    g_assert_false (resolve (cache, SYMTEST_DEBUGLINK_LIB, nowhere, &none));
    g_assert_null (none.function);
    g_assert_true (tide_symbol_cache_save (cache, NULL));
  }
  g_assert_cmpstr (first.function, ==, "symtest_alpha");
  g_assert_true (g_str_has_suffix (first.file, "/symbolizer-target.c"));
  g_assert_cmpint (first.line, >, 0);

  contents = cache_file_contents (fixture, SYMTEST_DEBUGLINK_LIB);
  g_assert_true (g_str_has_prefix (contents, "tidemark-symbol-cache 2 "));
  g_assert_nonnull (strstr (contents, " debug-file=yes\n"));

  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    g_assert_true (resolve (cache, SYMTEST_DEBUGLINK_LIB, alpha, &again));
    g_assert_cmpstr (again.function, ==, first.function);
    g_assert_cmpstr (again.file, ==, first.file);
    g_assert_cmpint (again.line, ==, first.line);
    tide_symbol_clear (&again);
    /* "Nothing there" was kept too, so it costs no libdw lookup. */
    g_assert_true (tide_symbol_cache_lookup (cache, SYMTEST_DEBUGLINK_LIB, nowhere, &none));
    g_assert_null (none.function);
    g_assert_false (tide_symbol_cache_lookup (cache, SYMTEST_DEBUGLINK_LIB, alpha + 1, &again));
  }
  tide_symbol_clear (&first);
}

/* A lookup is answered from the file for that build-id, not by libdw. */
static void
test_answers_from_file (Fixture       *fixture,
                        gconstpointer  data)
{
  guint64 alpha = elf_address_of (SYMTEST_STRIPPED_LIB, "symtest_alpha");
  gboolean has_debug_file = TRUE;
  g_autofree char *build_id = tide_debuginfo_identify (SYMTEST_STRIPPED_LIB, &has_debug_file);
  TideSymbol symbol = { 0 };

  g_assert_nonnull (build_id);
  g_assert_false (has_debug_file);
  plant_cache_file (fixture, SYMTEST_STRIPPED_LIB, "no", alpha, "\t77\tplanted\t/src/planted.c\n");
  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    g_assert_true (tide_symbol_cache_lookup (cache, SYMTEST_STRIPPED_LIB, alpha, &symbol));
    g_assert_cmpstr (symbol.function, ==, "planted");
    g_assert_cmpstr (symbol.file, ==, "/src/planted.c");
    g_assert_cmpint (symbol.line, ==, 77);
    tide_symbol_clear (&symbol);
  }

  /* Inline levels, innermost first, after the symbol's own fields. */
  plant_cache_file (fixture, SYMTEST_STRIPPED_LIB, "no", alpha,
                    "\t77\tplanted\t/src/planted.c\tinner\t/src/inner.h\t5"
                    "\tmiddle\t\t9\n");
  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    g_assert_true (tide_symbol_cache_lookup (cache, SYMTEST_STRIPPED_LIB, alpha, &symbol));
    g_assert_cmpstr (symbol.function, ==, "planted");
    g_assert_cmpint (symbol.line, ==, 77);
    g_assert_cmpuint (symbol.n_inlines, ==, 2);
    g_assert_cmpstr (symbol.inlines[0].function, ==, "inner");
    g_assert_cmpstr (symbol.inlines[0].file, ==, "/src/inner.h");
    g_assert_cmpint (symbol.inlines[0].line, ==, 5);
    g_assert_cmpstr (symbol.inlines[1].function, ==, "middle");
    g_assert_null (symbol.inlines[1].file);
    g_assert_cmpint (symbol.inlines[1].line, ==, 9);
    tide_symbol_clear (&symbol);
  }

  /* Written when a debug file existed: this library has none now. */
  plant_cache_file (fixture, SYMTEST_STRIPPED_LIB, "yes", alpha, "\t77\tplanted\t/src/planted.c\n");
  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    g_assert_false (tide_symbol_cache_lookup (cache, SYMTEST_STRIPPED_LIB, alpha, &symbol));
  }
}

/* Installing the debug file after a recording brings source lines to the
 * next one: the cache written without it is not used. */
static void
test_debug_file_installed_later (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autofree char *library = copy_to (SYMTEST_DEBUGLINK_LIB, fixture->scratch);
  g_autofree char *debug_file = NULL;
  guint64 alpha = elf_address_of (library, "symtest_alpha");
  TideSymbol symbol = { 0 };
  g_autofree char *contents = NULL;

  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    g_assert_false (resolve (cache, library, alpha, &symbol));
    g_assert_cmpstr (symbol.function, ==, "symtest_alpha");
    g_assert_null (symbol.file);
    tide_symbol_clear (&symbol);
    g_assert_true (tide_symbol_cache_save (cache, NULL));
  }
  contents = cache_file_contents (fixture, library);
  g_assert_nonnull (strstr (contents, " debug-file=no\n"));

  debug_file = copy_to (SYMTEST_DEBUGLINK_LIB ".debug", fixture->scratch);
  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    g_assert_false (resolve (cache, library, alpha, &symbol));
    g_assert_cmpstr (symbol.function, ==, "symtest_alpha");
    g_assert_true (g_str_has_suffix (symbol.file, "/symbolizer-target.c"));
    tide_symbol_clear (&symbol);
    g_assert_true (tide_symbol_cache_save (cache, NULL));
  }
  g_free (contents);
  contents = cache_file_contents (fixture, library);
  g_assert_nonnull (strstr (contents, " debug-file=yes\n"));
}

/* A damaged file is ignored, never half used, and replaced at the save. */
static void
test_damaged_file (Fixture       *fixture,
                   gconstpointer  data)
{
  guint64 alpha = elf_address_of (SYMTEST_STRIPPED_LIB, "symtest_alpha");
  const char *bodies[] = {
    "\t77\tplanted\t/src/planted.c",    /* cut: no newline */
    "\t77\tplanted\n",                  /* a field short */
    "\t-1\tplanted\t\n",                /* negative line */
    "\t1\tplanted\t\nzz\t1\tother\t\n", /* bad address on the next line */
    "\t77\tplanted\t/src/p.c\tinl\t/src/i.c\n",      /* an inline level a field short */
    "\t77\tplanted\t/src/p.c\tinl\t/src/i.c\tx\n",  /* an inline level's line not a number */
  };

  for (guint i = 0; i < G_N_ELEMENTS (bodies); i++)
    {
      g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);
      TideSymbol symbol = { 0 };

      plant_cache_file (fixture, SYMTEST_STRIPPED_LIB, "no", alpha, bodies[i]);
      g_assert_false (resolve (cache, SYMTEST_STRIPPED_LIB, alpha, &symbol));
      g_assert_cmpstr (symbol.function, ==, "symtest_alpha");
      tide_symbol_clear (&symbol);
      g_assert_true (tide_symbol_cache_save (cache, NULL));
      g_clear_pointer (&cache, tide_symbol_cache_free);

      cache = tide_symbol_cache_new (fixture->dir);
      g_assert_true (tide_symbol_cache_lookup (cache, SYMTEST_STRIPPED_LIB, alpha, &symbol));
      g_assert_cmpstr (symbol.function, ==, "symtest_alpha");
      tide_symbol_clear (&symbol);
    }
}

/* Names and paths with tabs, newlines, backslashes and UTF-8 come back
 * byte for byte. */
static void
test_escaping (Fixture       *fixture,
               gconstpointer  data)
{
  const TideSymbol odd = { (char *) "op\t<<\nweird\\name", (char *) "/src/d\xc3\xa9j\xc3\xa0 vu/a\tb.c", 12 };
  TideSymbol symbol = { 0 };

  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    tide_symbol_cache_add (cache, SYMTEST_STRIPPED_LIB, 0x1234, &odd);
    g_assert_true (tide_symbol_cache_save (cache, NULL));
  }
  {
    g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (fixture->dir);

    g_assert_true (tide_symbol_cache_lookup (cache, SYMTEST_STRIPPED_LIB, 0x1234, &symbol));
    g_assert_cmpstr (symbol.function, ==, odd.function);
    g_assert_cmpstr (symbol.file, ==, odd.file);
    g_assert_cmpint (symbol.line, ==, 12);
    tide_symbol_clear (&symbol);
  }
}

/* Two recorders that saved one after the other both left their frames. */
static void
test_merge (Fixture       *fixture,
            gconstpointer  data)
{
  g_autoptr (TideSymbolCache) first = tide_symbol_cache_new (fixture->dir);
  g_autoptr (TideSymbolCache) second = tide_symbol_cache_new (fixture->dir);
  const TideSymbol one = { (char *) "one", NULL, 0 };
  const TideSymbol two = { (char *) "two", NULL, 0 };
  TideSymbol symbol = { 0 };

  /* Both read the (missing) file before either saved. */
  g_assert_false (tide_symbol_cache_lookup (first, SYMTEST_STRIPPED_LIB, 0x10, &symbol));
  g_assert_false (tide_symbol_cache_lookup (second, SYMTEST_STRIPPED_LIB, 0x20, &symbol));
  tide_symbol_cache_add (first, SYMTEST_STRIPPED_LIB, 0x10, &one);
  tide_symbol_cache_add (second, SYMTEST_STRIPPED_LIB, 0x20, &two);
  g_assert_true (tide_symbol_cache_save (first, NULL));
  g_assert_true (tide_symbol_cache_save (second, NULL));
  g_clear_pointer (&first, tide_symbol_cache_free);

  /* Each save replaced the one file: nothing else is left beside it, and
   * it may be read by everyone as before. */
  {
    gboolean has_debug_file;
    g_autofree char *build_id = tide_debuginfo_identify (SYMTEST_STRIPPED_LIB, &has_debug_file);
    g_autofree char *name = g_strconcat (build_id, ".sym", NULL);
    g_autofree char *path = g_build_filename (fixture->dir, name, NULL);
    g_autoptr (GDir) dir = g_dir_open (fixture->dir, 0, NULL);
    mode_t mask = umask (0);
    struct stat st;

    umask (mask);
    g_assert_cmpstr (g_dir_read_name (dir), ==, name);
    g_assert_null (g_dir_read_name (dir));
    g_assert_cmpint (stat (path, &st), ==, 0);
    g_assert_cmpint (st.st_mode & 0777, ==, 0644 & ~mask);
  }

  first = tide_symbol_cache_new (fixture->dir);
  g_assert_true (tide_symbol_cache_lookup (first, SYMTEST_STRIPPED_LIB, 0x10, &symbol));
  g_assert_cmpstr (symbol.function, ==, "one");
  tide_symbol_clear (&symbol);
  g_assert_true (tide_symbol_cache_lookup (first, SYMTEST_STRIPPED_LIB, 0x20, &symbol));
  g_assert_cmpstr (symbol.function, ==, "two");
  tide_symbol_clear (&symbol);
}

/* Two recorders read the same saved file; the first one forgets the name
 * of its frame and adds another, so that the file it saves has the size
 * of the one they read, and it saves within the same second.  The second
 * one's save must still see a new file and take in the first one's
 * frame. */
static void
test_merge_after_load (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr (TideSymbolCache) seed = tide_symbol_cache_new (fixture->dir);
  g_autoptr (TideSymbolCache) first = NULL;
  g_autoptr (TideSymbolCache) second = NULL;
  const TideSymbol long_name = { (char *) "abcdefghij", NULL, 0 };
  const TideSymbol unnamed = { NULL, NULL, 0 };
  const TideSymbol one = { (char *) "abc", NULL, 0 };
  const TideSymbol two = { (char *) "two", NULL, 0 };
  static const struct { guint64 address; const char *function; } expected[] = {
    { 0x10, "abcdefghij" }, { 0x20, "abc" }, { 0x30, "two" },
  };
  TideSymbol symbol = { 0 };

  tide_symbol_cache_add (seed, SYMTEST_STRIPPED_LIB, 0x10, &long_name);
  g_assert_true (tide_symbol_cache_save (seed, NULL));

  first = tide_symbol_cache_new (fixture->dir);
  second = tide_symbol_cache_new (fixture->dir);
  g_assert_true (tide_symbol_cache_lookup (first, SYMTEST_STRIPPED_LIB, 0x10, &symbol));
  tide_symbol_clear (&symbol);
  g_assert_true (tide_symbol_cache_lookup (second, SYMTEST_STRIPPED_LIB, 0x10, &symbol));
  tide_symbol_clear (&symbol);
  /* "10\t0\tabcdefghij\t\n" is as long as "10\t0\t\t\n20\t0\tabc\t\n". */
  tide_symbol_cache_add (first, SYMTEST_STRIPPED_LIB, 0x10, &unnamed);
  tide_symbol_cache_add (first, SYMTEST_STRIPPED_LIB, 0x20, &one);
  tide_symbol_cache_add (second, SYMTEST_STRIPPED_LIB, 0x30, &two);
  g_assert_true (tide_symbol_cache_save (first, NULL));
  g_assert_true (tide_symbol_cache_save (second, NULL));

  g_clear_pointer (&seed, tide_symbol_cache_free);
  seed = tide_symbol_cache_new (fixture->dir);
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_assert_true (tide_symbol_cache_lookup (seed, SYMTEST_STRIPPED_LIB, expected[i].address,
                                               &symbol));
      g_assert_cmpstr (symbol.function, ==, expected[i].function);
      tide_symbol_clear (&symbol);
    }
}

/* Without a build-id nothing tells two versions of a file apart, so
 * nothing is kept; neither for files that are not ELF. */
static void
test_uncacheable (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *cache_dir = g_build_filename (fixture->scratch, "cache", NULL);
  g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (cache_dir);
  const TideSymbol some = { (char *) "some", NULL, 0 };
  gboolean has_debug_file = TRUE;
  TideSymbol symbol = { 0 };
  g_autofree char *no_build_id = tide_debuginfo_identify (SYMTEST_NO_BUILD_ID_LIB,
                                                          &has_debug_file);

  g_assert_null (no_build_id);
  g_assert_false (has_debug_file);
  tide_symbol_cache_add (cache, SYMTEST_NO_BUILD_ID_LIB, 0x10, &some);
  tide_symbol_cache_add (cache, "/etc/hostname", 0x10, &some);
  tide_symbol_cache_add (cache, "/nonexistent/libnothing.so", 0x10, &some);
  g_assert_false (tide_symbol_cache_lookup (cache, SYMTEST_NO_BUILD_ID_LIB, 0x10, &symbol));
  g_assert_false (tide_symbol_cache_lookup (cache, "/etc/hostname", 0x10, &symbol));
  g_assert_true (tide_symbol_cache_save (cache, NULL));
  g_assert_false (g_file_test (cache_dir, G_FILE_TEST_EXISTS));
}

static void
test_disabled (void)
{
  g_autoptr (TideSymbolCache) cache = tide_symbol_cache_new (NULL);
  const TideSymbol some = { (char *) "some", NULL, 0 };
  TideSymbol symbol = { 0 };

  tide_symbol_cache_add (cache, SYMTEST_STRIPPED_LIB, 0x10, &some);
  g_assert_false (tide_symbol_cache_lookup (cache, SYMTEST_STRIPPED_LIB, 0x10, &symbol));
  g_assert_true (tide_symbol_cache_save (cache, NULL));
}

static void
test_default_dir (void)
{
  g_autofree char *fallback = NULL;
  g_autofree char *chosen = NULL;
  g_autofree char *expected = g_build_filename (g_get_user_cache_dir (), "tidemark", "symbols",
                                                NULL);

  g_unsetenv (TIDE_SYMBOL_CACHE_ENV);
  fallback = tide_symbol_cache_default_dir ();
  g_assert_cmpstr (fallback, ==, expected);
  g_setenv (TIDE_SYMBOL_CACHE_ENV, "/var/tmp/symbols", TRUE);
  chosen = tide_symbol_cache_default_dir ();
  g_assert_cmpstr (chosen, ==, "/var/tmp/symbols");
  g_setenv (TIDE_SYMBOL_CACHE_ENV, "", TRUE);
  g_assert_null (tide_symbol_cache_default_dir ());
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/capture/symbol-cache/round-trip", test_round_trip);
  ADD ("/capture/symbol-cache/answers-from-file", test_answers_from_file);
  ADD ("/capture/symbol-cache/debug-file-installed-later", test_debug_file_installed_later);
  ADD ("/capture/symbol-cache/damaged-file", test_damaged_file);
  ADD ("/capture/symbol-cache/escaping", test_escaping);
  ADD ("/capture/symbol-cache/merge", test_merge);
  ADD ("/capture/symbol-cache/merge-after-load", test_merge_after_load);
  ADD ("/capture/symbol-cache/uncacheable", test_uncacheable);
#undef ADD
  g_test_add_func ("/capture/symbol-cache/disabled", test_disabled);
  g_test_add_func ("/capture/symbol-cache/default-dir", test_default_dir);
  return g_test_run ();
}
