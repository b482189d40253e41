/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * What `tidemark attach` makes of a CPython process from outside
 * (capture/attach/tide-attach-python.c), without BPF: the lines that its
 * readers of line tables give (3.8-3.9 lnotab, 3.10 linetable, 3.11+
 * location tables) match CPython's own, instruction by instruction; 3.13's
 * published offsets are taken once checked; a running python3 is found
 * with its _PyRuntime; frames whose code objects cannot be read (a frame
 * chain that changed under the BPF program) leave the native stack as it
 * was; a process without Python has no message.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <gio/gio.h>

#include "tide-attach-python.h"
#include "tide-attach-pylayout.h"
#include "tide-stack-table.h"

#define PYTHON "/usr/bin/python3"

/* Prints, for every code object compiled from each file given: its first
 * line, its location table in hex, and the line of each code unit as
 * co_positions() says (0: none). */
static const char dump_lines[] =
  "import sys\n"
  "def walk(co):\n"
  "    yield co\n"
  "    for c in co.co_consts:\n"
  "        if hasattr(c, 'co_linetable'):\n"
  "            yield from walk(c)\n"
  "for path in sys.argv[1:]:\n"
  "    for co in walk(compile(open(path).read(), path, 'exec')):\n"
  "        lines = [p[0] or 0 for p in co.co_positions()]\n"
  "        print(co.co_firstlineno, co.co_linetable.hex() or '-', ','.join(map(str, lines)))\n";

typedef gint (*LineDecoder) (const guint8 *table,
                             gsize         len,
                             gint          first_line,
                             gint          offset);

/* One code object as a dump prints it: @decode gives, for each of its code
 * units, the line that CPython gave. */
static void
check_code_lines (LineDecoder  decode,
                  const char  *first_field,
                  const char  *table_hex,
                  const char  *lines_field,
                  guint       *n_units)
{
  g_auto(GStrv) expected = NULL;
  g_autofree guint8 *table = NULL;
  gsize len;
  gint first;

  first = atoi (first_field);
  len = strcmp (table_hex, "-") == 0 ? 0 : strlen (table_hex) / 2;
  table = g_malloc (len + 1);
  for (gsize i = 0; i < len; i++)
    table[i] = (guint8) g_ascii_strtoull ((char[]) { table_hex[2 * i], table_hex[2 * i + 1], 0 },
                                          NULL, 16);
  expected = g_strsplit (lines_field, ",", -1);
  /* A frame that has not run its first instruction: the first line. */
  g_assert_cmpint (decode (table, len, first, -2), ==, first);
  for (guint i = 0; expected[i] != NULL && expected[i][0] != '\0'; i++)
    {
      gint want = atoi (expected[i]);

      if (decode (table, len, first, (gint) i * 2) != want)
        g_error ("code at line %d, unit %u: line %d, CPython says %d", first, i,
                 decode (table, len, first, (gint) i * 2), want);
      ++*n_units;
    }
}

static void
test_line_table (void)
{
  /* Long functions (argparse), nested code and comprehensions: every
   * kind of entry, negative line steps included. */
  const char *files[] = {
    "/usr/lib/python3.11/argparse.py", "/usr/lib/python3.11/json/decoder.py",
    TIDE_BPF_TESTS_DIR "/attach-torch-leak.py",
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) p = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  guint n_units = 0, n_codes = 0;

  if (!g_file_test (PYTHON, G_FILE_TEST_IS_EXECUTABLE) || !g_file_test (files[0],
                                                                        G_FILE_TEST_EXISTS))
    {
      g_test_skip ("needs Debian's " PYTHON " (3.11)");
      return;
    }
  p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, PYTHON, "-c", dump_lines,
                        files[0], files[1], files[2], NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_successful (p));
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '\0')
      {
        g_auto(GStrv) fields = g_strsplit (lines[i], " ", 3);

        g_assert_cmpuint (g_strv_length (fields), ==, 3);
        check_code_lines (tide_attach_python_line, fields[0], fields[1], fields[2], &n_units);
        n_codes++;
      }
  g_test_message ("%u code objects, %u code units", n_codes, n_units);
  g_assert_cmpuint (n_codes, >, 100);
}

/* The tables that CPython 3.8 to 3.13 made of the same sources
 * (py-lines.txt, from py-lines-dump.py), each read by its version's
 * reader: the lines match the interpreter's own, unit by unit. */
static void
test_line_tables_per_version (void)
{
  static const struct
  {
    const char  *version;
    LineDecoder  decode;
  } readers[] = {
    { "3.8", tide_attach_python_line_lnotab }, { "3.9", tide_attach_python_line_lnotab },
    { "3.10", tide_attach_python_line_310 }, { "3.11", tide_attach_python_line },
    { "3.12", tide_attach_python_line }, { "3.13", tide_attach_python_line },
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  guint n_codes[G_N_ELEMENTS (readers)] = { 0 };
  guint n_units = 0;

  g_file_get_contents (TIDE_BPF_TESTS_DIR "/py-lines.txt", &text, NULL, &error);
  g_assert_no_error (error);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], " ", 4);
      guint r;

      if (lines[i][0] == '\0')
        continue;
      g_assert_cmpuint (g_strv_length (fields), ==, 4);
      for (r = 0; r < G_N_ELEMENTS (readers) && strcmp (readers[r].version, fields[0]) != 0; r++)
        ;
      g_assert_cmpuint (r, <, G_N_ELEMENTS (readers));
      check_code_lines (readers[r].decode, fields[1], fields[2], fields[3], &n_units);
      n_codes[r]++;
    }
  g_test_message ("%u code units", n_units);
  /* py-lines-gaps.py (4), attach-py-leak.py (7) and json/decoder.py (13). */
  for (guint r = 0; r < G_N_ELEMENTS (readers); r++)
    g_assert_cmpuint (n_codes[r], ==, 24);
}

/* The 3.8 and 3.9 pairs: a gap of more than 127 lines takes two pairs, a
 * step back is negative; the 3.10 pairs: -128 is a range without a line,
 * and an offset past the table has none. */
static void
test_line_pairs (void)
{
  const guint8 lnotab[] = { 0, 127, 0, 38, 8, 4, 6, 0xfe };
  const guint8 linetable[] = { 8, 1, 4, 0x80, 6, 2, 0, 5, 2, 0xfd };

  g_assert_cmpint (tide_attach_python_line_lnotab (lnotab, sizeof lnotab, 1, 0), ==, 166);
  g_assert_cmpint (tide_attach_python_line_lnotab (lnotab, sizeof lnotab, 1, 6), ==, 166);
  g_assert_cmpint (tide_attach_python_line_lnotab (lnotab, sizeof lnotab, 1, 8), ==, 170);
  g_assert_cmpint (tide_attach_python_line_lnotab (lnotab, sizeof lnotab, 1, 14), ==, 168);
  g_assert_cmpint (tide_attach_python_line_lnotab (lnotab, sizeof lnotab, 1, 400), ==, 168);
  g_assert_cmpint (tide_attach_python_line_310 (linetable, sizeof linetable, 10, 6), ==, 11);
  g_assert_cmpint (tide_attach_python_line_310 (linetable, sizeof linetable, 10, 8), ==, 0);
  g_assert_cmpint (tide_attach_python_line_310 (linetable, sizeof linetable, 10, 12), ==, 13);
  g_assert_cmpint (tide_attach_python_line_310 (linetable, sizeof linetable, 10, 18), ==, 15);
  g_assert_cmpint (tide_attach_python_line_310 (linetable, sizeof linetable, 10, 20), ==, 0);
  g_assert_cmpint (tide_attach_python_line_310 (NULL, 0, 10, -2), ==, 10);
}

/* The _Py_DebugOffsets at the start of pyenv's CPython 3.13.0's
 * _PyRuntime, as it was read from a running one (the cookie is set by
 * debug_offsets_313). */
static const guint64 debug_offsets_3130[TIDE_PY_DEBUG_OFFSETS_WORDS] = {
    0, 0x30d00f0, 0, 283320, 608, 632, 194968, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16,
    7752, 0, 7768, 7760, 304, 0, 8, 16, 72, 152, 160, 232, 32, 80, 8, 0, 56, 72, 70, 208, 112,
    120, 128, 136, 68, 52, 96, 104, 200, 16, 8, 416, 24, 88, 168, 32, 24, 16, 40, 24, 16, 48,
    32, 40, 24, 16, 32, 16, 24, 40, 16, 32, 64, 32, 16, 40, 240, 200,
};

static void
debug_offsets_313 (guint64 *words)
{
  memcpy (words, debug_offsets_3130, sizeof debug_offsets_3130);
  memcpy (words, "xdebugpy", 8);
}

/* 3.13 publishes its offsets: they agree with the row, they are taken
 * over the row where they differ (here the thread id's), and a build they
 * do not fit (free-threaded, a frame field out of the BPF program's
 * window, another str header), or another version's, is refused or left
 * to the row. */
static void
test_debug_offsets (void)
{
  const TidePyLayout *row = tide_attach_pylayout_for (3, 13);
  guint64 words[TIDE_PY_DEBUG_OFFSETS_WORDS];
  TidePyLayout out;

  g_assert_nonnull (row);
  g_assert_null (tide_attach_pylayout_for (3, 7));
  g_assert_null (tide_attach_pylayout_for (3, 14));
  g_assert_null (tide_attach_pylayout_for (2, 7));
  debug_offsets_313 (words);
  g_assert_cmpint (tide_attach_pylayout_from_debug (row, words, &out), ==,
                   TIDE_PY_DEBUG_OFFSETS_TAKEN);
  g_assert_cmpmem (&out, sizeof out, row, sizeof *row);

  words[25] = 168;   /* thread_state.native_thread_id */
  g_assert_cmpint (tide_attach_pylayout_from_debug (row, words, &out), ==,
                   TIDE_PY_DEBUG_OFFSETS_TAKEN);
  g_assert_cmpuint (out.tstate_thread_id, ==, 168);
  g_assert_cmpuint (out.frame_instr, ==, 56);

  debug_offsets_313 (words);
  words[2] = 1;      /* free_threaded */
  g_assert_cmpint (tide_attach_pylayout_from_debug (row, words, &out), ==,
                   TIDE_PY_DEBUG_OFFSETS_UNFIT);
  debug_offsets_313 (words);
  words[31] = 80;    /* interpreter_frame.instr_ptr */
  g_assert_cmpint (tide_attach_pylayout_from_debug (row, words, &out), ==,
                   TIDE_PY_DEBUG_OFFSETS_UNFIT);
  debug_offsets_313 (words);
  words[70] = 56;    /* unicode_object.asciiobject_size */
  g_assert_cmpint (tide_attach_pylayout_from_debug (row, words, &out), ==,
                   TIDE_PY_DEBUG_OFFSETS_UNFIT);

  debug_offsets_313 (words);
  words[1] = 0x30e00f0;   /* 3.14 */
  g_assert_cmpint (tide_attach_pylayout_from_debug (row, words, &out), ==,
                   TIDE_PY_DEBUG_OFFSETS_ABSENT);
  debug_offsets_313 (words);
  words[0] = 0;
  g_assert_cmpint (tide_attach_pylayout_from_debug (row, words, &out), ==,
                   TIDE_PY_DEBUG_OFFSETS_ABSENT);
  g_assert_cmpmem (&out, sizeof out, row, sizeof *row);
}

/* A damaged table: an entry without its first bit, or one cut short. */
static void
test_line_table_damaged (void)
{
  const guint8 not_entry[] = { 0x01, 0x02 };
  const guint8 cut_short[] = { 0x80 | (14 << 3), 0x41 };   /* long form, varint unended */

  g_assert_cmpint (tide_attach_python_line (not_entry, sizeof not_entry, 10, 0), ==, 0);
  g_assert_cmpint (tide_attach_python_line (cut_short, sizeof cut_short, 10, 0), ==, 0);
  g_assert_cmpint (tide_attach_python_line (NULL, 0, 10, 4), ==, 0);
}

static GSubprocess *
start_waiting (const char *python)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autofree char *line = NULL;
  GSubprocess *p;

  p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                        python, "-c",
                        "import sys\nprint('ready', flush=True)\nsys.stdin.readline()\n", NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (p));
  line = g_data_input_stream_read_line (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (line, ==, "ready");
  return p;
}

static void
end_waiting (GSubprocess *p)
{
  g_autoptr(GError) error = NULL;

  g_output_stream_close (g_subprocess_get_stdin_pipe (p), NULL, &error);
  g_assert_no_error (error);
  g_subprocess_wait_check (p, NULL, &error);
  g_assert_no_error (error);
}

/* Frames whose code objects are not there (unmapped) or are no code
 * objects (the interpreter's runtime state): no Python frame, the native
 * frames as they were, the evaluation loop's own included. */
static void
test_unreadable_frames (void)
{
  g_autoptr(GSubprocess) p = NULL;
  g_autoptr(TideAttachPython) python = NULL;
  g_autofree char *message = NULL;
  g_autofree TideBpfUserStack *stack = g_new0 (TideBpfUserStack, 1);
  TideBpfPyTarget target = { 0 };
  const guint64 native[] = { 0x401000, 0x402000, 0x403000 };
  const __u64 first_arg[3] = { 0x10, 0x20, 0x30 };
  guint64 out[8];
  guint32 scope = 99;
  guint n;

  if (!g_file_test (PYTHON, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("needs Debian's " PYTHON " (3.11)");
      return;
    }
  p = start_waiting (PYTHON);
  python = tide_attach_python_new (atoi (g_subprocess_get_identifier (p)), &target, &message);
  g_assert_null (message);
  g_assert_nonnull (python);
  g_assert_true (tide_attach_python_confirm (python, &message));
  g_assert_null (message);
  g_assert_nonnull (python);
  g_assert_cmphex (target.runtime, !=, 0);
  g_assert_cmpuint (target.tstate_thread_id, ==, 160);

  stack->n_py = 3;
  stack->py_state = TIDE_BPF_PY_WHOLE;
  stack->py[0] = (TideBpfPyFrame) { .code = 0x10, .instr = 4 };
  stack->py[1] = (TideBpfPyFrame) { .code = target.runtime, .instr = 4,
                                    .flags = TIDE_BPF_PY_ENTRY };
  stack->py[2] = (TideBpfPyFrame) { .code = ~(guint64) 0, .instr = -7 };
  n = tide_attach_python_splice (python, NULL, stack, native, 3, TRUE, out, G_N_ELEMENTS (out),
                                 &scope);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpuint (scope, ==, 0);
  g_assert_cmpmem (out, n * sizeof *out, native, sizeof native);
  n = tide_attach_python_splice (python, NULL, stack, native, 3, FALSE, out, G_N_ELEMENTS (out),
                                 &scope);
  g_assert_cmpuint (n, ==, 4);
  g_assert_cmpmem (out, 3 * sizeof *out, native, sizeof native);
  g_assert_cmphex (out[3], ==, TIDE_STACK_FRAMES_MISSING);
  /* No room: cut at @max, never past it. */
  n = tide_attach_python_splice (python, NULL, stack, native, 3, FALSE, out, 2, &scope);
  g_assert_cmpuint (n, ==, 2);
  /* Nor is a grad-mode switch under such frames, or under none, a step. */
  g_assert_false (tide_attach_python_ends_step (python, NULL, stack->py, first_arg, 3));
  g_assert_false (tide_attach_python_ends_step (python, NULL, stack->py, first_arg, 0));
  end_waiting (p);
}

/* This test program runs no Python: nothing to say. */
static void
test_not_python (void)
{
  g_autofree char *message = NULL;
  TideBpfPyTarget target = { 0 };

  g_assert_null (tide_attach_python_new (getpid (), &target, &message));
  g_assert_null (message);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/attach-python/line-table", test_line_table);
  g_test_add_func ("/attach-python/line-table-damaged", test_line_table_damaged);
  g_test_add_func ("/attach-python/line-tables-per-version", test_line_tables_per_version);
  g_test_add_func ("/attach-python/line-pairs", test_line_pairs);
  g_test_add_func ("/attach-python/debug-offsets", test_debug_offsets);
  g_test_add_func ("/attach-python/unreadable-frames", test_unreadable_frames);
  g_test_add_func ("/attach-python/not-python", test_not_python);
  return g_test_run ();
}
