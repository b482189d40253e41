/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The documented names of the preload library, tidemark_step,
 * tidemark_scope_push and tidemark_scope_pop, as callers in other languages
 * reach them: exported beside the tidemark_preload_* names as the same
 * code; found with dlsym by a C program that does not include tidemark.h;
 * found with ctypes.CDLL(None) by a Python program.  In both recordings
 * every step and every scoped block lands in the trace.
 */
#include "config.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/wait.h>
#include <unistd.h>

#include "named-steps.h"
#include "tide-test-util.h"

typedef TideTestRecording Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  tide_test_recording_init (f, "tide-exported");
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  tide_test_recording_clear (f);
}

/* tidemark record -q -o TRACE -- ARGV...; returns the program's stdout. */
static char *
record (Fixture            *f,
        const char * const *program)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  char *out = NULL;
  int status = 0;

  g_ptr_array_add (argv, (char *) TIDE_TIDEMARK_EXE);
  g_ptr_array_add (argv, (char *) "record");
  g_ptr_array_add (argv, (char *) "--force");
  g_ptr_array_add (argv, (char *) "-q");
  g_ptr_array_add (argv, (char *) "-o");
  g_ptr_array_add (argv, f->path);
  g_ptr_array_add (argv, (char *) "--");
  for (guint i = 0; program[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) program[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                &status, &error);
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("recording %s failed (status %d): %s", program[0], status, err);
  g_assert_cmpstr (err, ==, "");
  return out;
}

/* The steps of the trace's one process, "number:label" in order. */
static char *
step_labels (TideTrace *trace)
{
  return tide_test_query_text (trace, "SELECT group_concat (number || ':' || label, ' ')"
                                      " FROM (SELECT number, label FROM steps ORDER BY number)");
}

/* Blocks of @size bytes allocated inside the scope @name and live at the
 * end of the last step (Python frees them at its exit). */
static gint64
scoped_blocks (TideTrace  *trace,
               const char *name,
               gint64      size)
{
  g_autofree char *sql = g_strdup_printf ("SELECT count (*) FROM allocations a"
                                          " JOIN scopes s ON s.id = a.scope_id"
                                          " WHERE s.name = '%s' AND a.size = %" G_GINT64_FORMAT
                                          " AND a.weight = 1 AND (a.free_ns IS NULL"
                                          "  OR a.free_ns > (SELECT max (end_ns) FROM steps))",
                                          name, size);
  return tide_test_query_int (trace, sql);
}

/* The address of @name among the library's exported functions, 0: none. */
static GElf_Addr
exported_function (Elf        *elf,
                   const char *name)
{
  Elf_Scn *scn = NULL;

  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr shdr;
      Elf_Data *data;

      if (gelf_getshdr (scn, &shdr) == NULL || shdr.sh_type != SHT_DYNSYM)
        continue;
      data = elf_getdata (scn, NULL);
      for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++)
        {
          GElf_Sym sym;

          if (gelf_getsym (data, (int) i, &sym) != NULL && sym.st_shndx != SHN_UNDEF &&
              GELF_ST_TYPE (sym.st_info) == STT_FUNC &&
              GELF_ST_BIND (sym.st_info) == STB_GLOBAL &&
              GELF_ST_VISIBILITY (sym.st_other) == STV_DEFAULT &&
              g_strcmp0 (elf_strptr (elf, shdr.sh_link, sym.st_name), name) == 0)
            return sym.st_value;
        }
    }
  return 0;
}

/* Each documented name is in the library's dynamic symbol table (what
 * `nm -D` lists), at the address of its tidemark_preload_* name. */
static void
test_symbols (void)
{
  const char *names[][2] = {
    { "tidemark_step", "tidemark_preload_step" },
    { "tidemark_scope_push", "tidemark_preload_scope_push" },
    { "tidemark_scope_pop", "tidemark_preload_scope_pop" },
  };
  int fd = open (TIDE_PRELOAD_LIB, O_RDONLY | O_CLOEXEC);
  Elf *elf;

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (elf_version (EV_CURRENT), !=, EV_NONE);
  elf = elf_begin (fd, ELF_C_READ, NULL);
  g_assert_nonnull (elf);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GElf_Addr documented = exported_function (elf, names[i][0]);

      g_test_message ("%s at 0x%" G_GINT64_MODIFIER "x", names[i][0], (guint64) documented);
      g_assert_cmpuint (documented, !=, 0);
      g_assert_cmpuint (documented, ==, exported_function (elf, names[i][1]));
    }
  elf_end (elf);
  close (fd);
}

static void
test_dlsym (Fixture       *f,
            gconstpointer  data)
{
  const char *program[] = { TIDE_NAMED_STEPS_EXE, NULL };
  g_autofree char *out = record (f, program);
  g_autoptr(TideTrace) trace = tide_test_open_trace (f->path);
  g_autofree char *labels = step_labels (trace);

  g_assert_cmpstr (out, ==, "named-steps: 7 steps, first byte 7\n");
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, NAMED_STEPS);
  g_assert_cmpstr (labels, ==,
                   "1:named-1 2:named-2 3:named-3 4:named-4 5:named-5 6:named-6 7:named-7");
  g_assert_cmpint (scoped_blocks (trace, "named.block", NAMED_BLOCK), ==, NAMED_STEPS);
}

static void
test_ctypes (Fixture       *f,
             gconstpointer  data)
{
  g_autofree char *script = g_build_filename (TIDE_EXPORTED_TESTS_DIR, "named-steps.py", NULL);
  const char *program[] = { "/usr/bin/python3", script, NULL };
  g_autofree char *out = record (f, program);
  g_autoptr(TideTrace) trace = tide_test_open_trace (f->path);
  g_autofree char *labels = step_labels (trace);

  g_assert_cmpstr (out, ==, "named-steps.py: 5 steps\n");
  g_assert_cmpint (tide_test_query_int (trace, "SELECT count (*) FROM steps"), ==, CTYPES_STEPS);
  g_assert_cmpstr (labels, ==, "1:ctypes-1 2:ctypes-2 3:ctypes-3 4:ctypes-4 5:ctypes-5");
  g_assert_cmpint (scoped_blocks (trace, "ctypes.block", CTYPES_BLOCK), ==, CTYPES_STEPS);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/exported/symbols", test_symbols);
  g_test_add ("/exported/dlsym", Fixture, NULL, fixture_setup, test_dlsym, fixture_teardown);
  g_test_add ("/exported/ctypes", Fixture, NULL, fixture_setup, test_ctypes, fixture_teardown);
  return g_test_run ();
}
