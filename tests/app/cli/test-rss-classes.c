/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The RSS by class, end to end: `tidemark record --sync-steps` on
 * tests/targets/rss-classes, which makes one class of resident memory in
 * each step, read back at each step's end.  The expectations are the bytes
 * the target touched; library pages that the target's own code and libc
 * touch on the way move a class by less than CLASS_SLACK.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "tide-report-rss.h"
#include "tide-schema.h"
#include "tide-test-util.h"

#define KIB          G_GINT64_CONSTANT (1024)
#define MIB          G_GINT64_CONSTANT (1048576)
#define CLASS_SLACK  MIB
#define JEMALLOC     "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
#define TCMALLOC     "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"

typedef struct
{
  char      *dir;
  TideTrace *trace;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  unused)
{
  g_autofree char *path = NULL;
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "rss-classes", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;

  f->dir = tide_test_make_dir ("tide-rss-classes");
  path = g_build_filename (f->dir, "classes.tide", NULL);
  {
    const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o",
                           path, "--", target, NULL };

    g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                  &error);
  }
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0 || strcmp (out, "done\n") != 0 ||
      err[0] != '\0')
    g_error ("record of rss-classes: wait status 0x%x, stdout \"%s\", stderr \"%s\"", status,
             out, err);
  f->trace = tide_test_open_trace (path);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  unused)
{
  g_clear_object (&f->trace);
  tide_test_remove_dir (f->dir);
  g_free (f->dir);
}

/* The first process's @counter at the end of its step @number: sampled
 * then, as --sync-steps makes the target wait for it. */
static gint64
at_step_end (Fixture *f,
             gint     counter,
             gint     number)
{
  g_autofree char *sql = g_strdup_printf ("SELECT c.value FROM counters c JOIN steps s"
                                          " ON s.process_id = c.process_id AND c.ts_ns = s.end_ns"
                                          " WHERE s.process_id = (SELECT min (process_id) FROM steps)"
                                          " AND s.number = %d AND c.counter = %d AND c.device = -1",
                                          number, counter);
  gint64 value = tide_test_query_int (f->trace, sql);

  g_assert_cmpint (value, >=, 0);
  return value;
}

/* The last value of @counter that the first process sent by the end of
 * its step @number. */
static gint64
sent_by_step_end (Fixture *f,
                  gint     counter,
                  gint     number)
{
  g_autofree char *sql = g_strdup_printf ("SELECT c.value FROM counters c JOIN steps s"
                                          " ON s.process_id = c.process_id AND c.ts_ns <= s.end_ns"
                                          " WHERE s.process_id = (SELECT min (process_id) FROM steps)"
                                          " AND s.number = %d AND c.counter = %d"
                                          " ORDER BY c.ts_ns DESC LIMIT 1",
                                          number, counter);
  return tide_test_query_int (f->trace, sql);
}

static void
assert_change (Fixture *f,
               gint     counter,
               gint     number,
               gint64   expected)
{
  gint64 change = at_step_end (f, counter, number) - at_step_end (f, counter, number - 1);

  g_assert_cmpint (change, >=, expected - CLASS_SLACK);
  g_assert_cmpint (change, <=, expected + CLASS_SLACK);
}

/* anon + file + shmem is the RSS at every step end, exactly. */
static void
test_split (Fixture       *f,
            gconstpointer  unused)
{
  for (gint k = 1; k <= 5; k++)
    g_assert_cmpint (at_step_end (f, TIDE_COUNTER_RSS_ANON, k) +
                     at_step_end (f, TIDE_COUNTER_RSS_FILE, k) +
                     at_step_end (f, TIDE_COUNTER_RSS_SHMEM, k), ==,
                     at_step_end (f, TIDE_COUNTER_USS, k) +
                     at_step_end (f, TIDE_COUNTER_RSS_SHARED_PAGES, k));
}

/* Step 2 wrote 32 MiB of heap blocks and freed them under a kept block:
 * anonymous memory that glibc holds free. */
static void
test_allocator_free (Fixture       *f,
                     gconstpointer  unused)
{
  assert_change (f, TIDE_COUNTER_RSS_ANON, 2, 32 * MIB);
  g_assert_cmpint (sent_by_step_end (f, TIDE_COUNTER_ALLOC_FREE, 2), >=, 32 * MIB);
  g_assert_cmpint (sent_by_step_end (f, TIDE_COUNTER_ALLOC_FREE, 1), <, MIB);
}

/* Step 3 wrote a 16 MiB memfd: shmem, private while one process maps it. */
static void
test_shmem (Fixture       *f,
            gconstpointer  unused)
{
  assert_change (f, TIDE_COUNTER_RSS_SHMEM, 3, 16 * MIB);
  assert_change (f, TIDE_COUNTER_RSS_ANON, 3, 0);
  assert_change (f, TIDE_COUNTER_USS, 3, 16 * MIB);
}

/* Step 4 forked: the 64 MiB of anonymous pages (32 MiB mapped, 32 MiB of
 * heap) are shared with the child, so the parent's USS loses them and its
 * PSS half of them; the shmem pages, which the child has not touched, stay
 * its own.  Step 5: the child wrote 16 MiB of the mapped ones, which are
 * the parent's alone again. */
static void
test_fork (Fixture       *f,
           gconstpointer  unused)
{
  assert_change (f, TIDE_COUNTER_USS, 4, -64 * MIB);
  assert_change (f, TIDE_COUNTER_PSS, 4, -32 * MIB);
  assert_change (f, TIDE_COUNTER_RSS_ANON, 4, 0);
  assert_change (f, TIDE_COUNTER_USS, 5, 16 * MIB);
  assert_change (f, TIDE_COUNTER_PSS, 5, 8 * MIB);
  g_assert_cmpint (tide_test_query_int (f->trace, "SELECT count (*) FROM processes"), ==, 2);
}

/* The child's value of @counter by the end of the parent's step @number. */
static gint64
child_by_step_end (Fixture *f,
                   gint     counter,
                   gint     number)
{
  g_autofree char *sql = g_strdup_printf ("SELECT c.value FROM counters c, steps s"
                                          " WHERE s.process_id = 1 AND s.number = %d"
                                          " AND c.process_id = 2 AND c.counter = %d"
                                          " AND c.ts_ns <= s.end_ns ORDER BY c.ts_ns DESC LIMIT 1",
                                          number, counter);
  return tide_test_query_int (f->trace, sql);
}

/* The child's own copies by the parent's step @number, as the report
 * counts them: its copy-on-write less the pages it holds because its
 * parent wrote its own (its stack, the preload's buffer as it marks a
 * step), which are no longer shared rather than copied. */
static gint64
child_copies_by_step_end (Fixture *f,
                          gint     number)
{
  return child_by_step_end (f, TIDE_COUNTER_COW_BYTES, number) -
         MAX (child_by_step_end (f, TIDE_COUNTER_COW_LEFT_BYTES, number), 0);
}

/* The line of rss-classes.c that maps the pages the child later writes. */
static gint
shared_mmap_line (void)
{
  g_autofree char *path = g_build_filename (TIDE_TARGETS_SRC_DIR, "rss-classes.c", NULL);

  return tide_test_source_line (path, "char *shared = mmap (");
}

/* Step 5: the child wrote 16 MiB of the 32 MiB mapping it inherited, so
 * it copied those pages on write, and the parent's mmap in main covers
 * every one of them; before that it had copied only a few pages of its
 * stack and libc's data.  The report gives its last reading, which may
 * hold a few pages more: a page that the parent writes after the fork
 * (its stack, the preload's buffer as it marks step 6) is copied for the
 * parent, and the child's is its own from then on (one run had 4 KiB
 * more by the child's exit); where the recorder sees page frames (root)
 * those are no longer shared rather than copies. */
static void
test_cow (Fixture       *f,
          gconstpointer  unused)
{
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *source = g_strdup_printf ("rss-classes.c:%d (main)", shared_mmap_line ());
  g_autofree char *last_sql = g_strdup_printf ("SELECT value FROM counters WHERE process_id = 2"
                                               " AND counter = %d ORDER BY ts_ns DESC LIMIT 1",
                                               TIDE_COUNTER_COW_BYTES);
  g_autofree char *left_sql = g_strdup_printf ("SELECT value FROM counters WHERE process_id = 2"
                                               " AND counter = %d ORDER BY ts_ns DESC LIMIT 1",
                                               TIDE_COUNTER_COW_LEFT_BYTES);
  gint64 before = child_by_step_end (f, TIDE_COUNTER_COW_BYTES, 4);
  gint64 after = child_by_step_end (f, TIDE_COUNTER_COW_BYTES, 5);
  gint64 last = tide_test_query_int (f->trace, last_sql);
  gint64 own = last - MAX (tide_test_query_int (f->trace, left_sql), 0);
  g_autofree char *copied = tide_format_delta (own);
  g_autofree char *line = NULL;
  g_autofree char *expected = NULL;
  TideCowRow *row;

  g_assert_cmpint (before, >=, 0);
  g_assert_cmpint (before, <, CLASS_SLACK);
  g_assert_cmpint (after - before, >=, 16 * MIB);
  g_assert_cmpint (after - before, <=, 16 * MIB + CLASS_SLACK);

  rows = tide_report_cow (f->trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 1);
  row = g_ptr_array_index (rows, 0);
  g_assert_cmpint (row->process.id, ==, 2);
  g_assert_cmpint (last - after, <=, CLASS_SLACK);
  g_assert_cmpint (row->copied_bytes, ==, own);
  g_assert_cmpint (row->source_bytes, ==, 16 * MIB);
  g_assert_cmpstr (row->source, ==, source);
  line = tide_cow_row_describe (row);
  expected = g_strdup_printf ("%s: %s copied on write, 16.00 MiB of it from the parent's blocks "
                              "allocated at %s", row->process.role, copied, source);
  g_assert_cmpstr (line, ==, expected);
}

/* The steps report has the classes as columns: the child's row at step 5
 * holds its copy-on-write, the parent's none. */
static void
test_steps_columns (Fixture       *f,
                    gconstpointer  unused)
{
  g_autofree char *path = g_build_filename (f->dir, "classes.tide", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", path, "--steps", "--format", "csv", NULL };
  g_autofree char *out = tide_test_spawn_ok (argv);
  g_autofree char *expected_child = NULL;
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  g_assert_true (g_str_has_suffix (lines[0], ",h2d_bytes,d2h_bytes,pss_end_bytes,uss_end_bytes,"
                                             "rss_anon_end_bytes,rss_file_end_bytes,"
                                             "rss_shmem_end_bytes,alloc_free_end_bytes,cow_bytes,"
                                             "cow_left_bytes"));
  /* Rows by step, then process: step 5 of the parent (which copied
   * nothing: its cells are empty), then of the child. */
  expected_child = g_strdup_printf (",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
                                    child_copies_by_step_end (f, 5),
                                    child_by_step_end (f, TIDE_COUNTER_COW_LEFT_BYTES, 5));
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 6 + 3 + 1);
  g_assert_true (g_str_has_suffix (lines[6], ",,"));
  g_assert_false (g_str_has_suffix (lines[6], ",,,"));
  g_assert_true (g_str_has_suffix (lines[7], expected_child));
}

static char *
report_lines (Fixture    *f,
              const char *mode,
              const char *format,
              const char *process)
{
  g_autofree char *path = g_build_filename (f->dir, "classes.tide", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "report", path, mode, "--format", format,
                         process ? "--process" : NULL, process, NULL };

  return tide_test_spawn_ok (argv);
}

/* Column @name of CSV row @row (0: the header), as a number. */
static gint64
csv_number (GStrv       lines,
            guint       row,
            const char *name)
{
  g_auto(GStrv) header = g_strsplit (lines[0], ",", -1);
  g_auto(GStrv) cells = g_strsplit (lines[row], ",", -1);

  for (guint i = 0; header[i] != NULL; i++)
    if (g_str_equal (header[i], name))
      return g_ascii_strtoll (cells[i], NULL, 10);
  g_assert_not_reached ();
}

/* @text holds a match of @pattern; else the test fails showing @text,
 * so that a failure says what the report said. */
static void
assert_text_matches (const char *pattern,
                     const char *text)
{
  if (!g_regex_match_simple (pattern, text, 0, 0))
    g_error ("no match of %s in:\n%s", pattern, text);
}

static void
assert_near (gint64 value,
             gint64 expected)
{
  g_assert_cmpint (value, >=, expected - CLASS_SLACK);
  g_assert_cmpint (value, <=, expected + CLASS_SLACK);
}

/* `report --rss`: each step's change of private memory, split into terms
 * that add up to it exactly; each step's own class moved it. */
static void
test_rss_report (Fixture       *f,
                 gconstpointer  unused)
{
  const char *terms[] = { "cow_bytes", "heap_bytes", "alloc_free_bytes", "file_bytes",
                          "shmem_bytes", "sharing_bytes", "py_arena_free_bytes",
                          "unexplained_bytes", "thread_stacks_bytes", "lib_data_bytes",
                          "tidemark_own_bytes", "py_unhooked_bytes",
                          "inherited_freed_bytes" };
  g_autofree char *csv = report_lines (f, "--rss", "csv", NULL);
  g_autofree char *text = report_lines (f, "--rss", "text", NULL);
  g_auto(GStrv) lines = g_strsplit (csv, "\n", -1);
  g_autofree char *child_pid = tide_test_query_text (f->trace,
                                                     "SELECT pid FROM processes WHERE id = 2");
  g_autofree char *child_only = NULL;
  g_autofree char *child_line = NULL;
  g_auto(GStrv) child_lines = NULL;

  /* Rows by step, then process: steps 1-3 of the parent, 4-6 of both. */
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 9 + 1);
  for (guint row = 1; row <= 9; row++)
    {
      gint64 sum = 0;

      for (guint t = 0; t < G_N_ELEMENTS (terms); t++)
        sum += csv_number (lines, row, terms[t]);
      g_assert_cmpint (sum, ==, csv_number (lines, row, "base_delta_bytes"));
    }
  /* Step 1, from the process's start: the preload's own pages, which it
   * sends beside the allocator's free bytes at each mark. */
  g_assert_cmpint (csv_number (lines, 1, "tidemark_own_bytes"), >, 0);
  g_assert_cmpint (csv_number (lines, 1, "tidemark_own_bytes"), ==,
                   sent_by_step_end (f, TIDE_COUNTER_PRELOAD_OWN, 1));
  /* Step 2: the heap freed into glibc's keeping; step 3: the memfd. */
  assert_near (csv_number (lines, 2, "alloc_free_bytes"), 32 * MIB);
  assert_near (csv_number (lines, 2, "unexplained_bytes"), 0);
  assert_near (csv_number (lines, 3, "shmem_bytes"), 16 * MIB);
  assert_near (csv_number (lines, 3, "heap_bytes"), 0);
  /* Step 5, the child: its copy-on-write, all of it. */
  g_assert_cmpint (csv_number (lines, 7, "cow_bytes"), ==,
                   child_copies_by_step_end (f, 5) - child_copies_by_step_end (f, 4));
  assert_near (csv_number (lines, 7, "unexplained_bytes"), 0);
  assert_near (csv_number (lines, 7, "base_delta_bytes"), 16 * MIB);

  child_line = g_strdup_printf ("\nstep 5 copy-on-write, rss-classes (pid %s): +16.",
                                child_pid);
  g_assert_nonnull (strstr (text, child_line));
  assert_text_matches ("\nstep 5 copy-on-write, rss-classes \\(pid [0-9]+\\): "
                       "\\+16\\.[0-9]{2} MiB private: copy-on-write "
                       "\\+16\\.[0-9]{2} MiB[,;]", text);

  /* --process: the child's steps alone. */
  child_only = report_lines (f, "--rss", "text", child_pid);
  child_lines = g_strsplit (child_only, "\n", -1);
  /* A header, its three steps, a blank line, how the classes were read. */
  g_assert_cmpuint (g_strv_length (child_lines), ==, 1 + 3 + 2 + 1);
  g_assert_cmpstr (child_lines[4], ==, "");
  g_assert_true (g_str_has_prefix (child_lines[5], "Measured by: "));
  g_assert_true (g_str_has_prefix (child_lines[1], "step 4 fork, rss-classes (pid "));
  g_assert_true (g_str_has_prefix (child_lines[2], "step 5 copy-on-write, rss-classes (pid "));
  g_assert_true (g_str_has_prefix (child_lines[3], "step 6 child exited, rss-classes (pid "));
}

/* The parent's pages that its child shared: they became shared in step 4,
 * as the child started, and the parent's alone again in step 6, as it
 * exited, less the 16 MiB that the child copied in step 5.  `report --rss`
 * names both moves and the process that made them, and the summary does
 * not take pages no longer shared for growth. */
static void
test_sharing (Fixture       *f,
              gconstpointer  unused)
{
  g_autofree char *csv = report_lines (f, "--rss", "csv", NULL);
  g_autofree char *text = report_lines (f, "--rss", "text", NULL);
  g_auto(GStrv) lines = g_strsplit (csv, "\n", -1);
  g_autofree char *child_pid = tide_test_query_text (f->trace,
                                                     "SELECT pid FROM processes WHERE id = 2");
  g_autofree char *parent_pid = tide_test_query_text (f->trace,
                                                      "SELECT pid FROM processes WHERE id = 1");
  g_autofree char *started = NULL, *ended = NULL;
  gint64 at_fork = at_step_end (f, TIDE_COUNTER_USS, 3) - at_step_end (f, TIDE_COUNTER_USS, 4);

  /* Rows 4 and 8: the parent's steps 4 and 6. */
  assert_near (csv_number (lines, 4, "sharing_bytes"), -at_fork);
  assert_near (csv_number (lines, 8, "sharing_bytes"), at_fork - 16 * MIB);
  assert_near (csv_number (lines, 8, "base_delta_bytes"), at_fork - 16 * MIB);
  assert_near (csv_number (lines, 8, "unexplained_bytes"), 0);
  assert_near (csv_number (lines, 8, "rss_delta_bytes"), 0);
  g_assert_cmpint (at_fork, >=, 64 * MIB - CLASS_SLACK);

  started = g_strdup_printf ("\nstep 4 fork, rss-classes \\(pid %s\\): -[0-9.]+ MiB private: "
                             "newly shared -[0-9.]+ MiB \\(rss-classes \\(pid %s\\) started\\)"
                             "[,;]", parent_pid, child_pid);
  ended = g_strdup_printf ("\nstep 6 child exited, rss-classes \\(pid %s\\): \\+[0-9.]+ MiB "
                           "private: no longer shared \\+[0-9.]+ MiB \\(rss-classes \\(pid %s\\) "
                           "exited\\)[,;]", parent_pid, child_pid);
  assert_text_matches (started, text);
  assert_text_matches (ended, text);
}

static char *tidemark_out (const char * const *args);

/* PAGEMAP_SCAN came with Linux 6.7. */
static gboolean
kernel_has_pagemap_scan (void)
{
  struct utsname uts;
  guint major = 0, minor = 0;

  g_assert_cmpint (uname (&uts), ==, 0);
  g_assert_cmpint (sscanf (uts.release, "%u.%u", &major, &minor), ==, 2);
  return major > 6 || (major == 6 && minor >= 7);
}

/* tests/targets/anon-split under `record --sync-steps`: anonymous memory
 * that no hook sees is named by its mapping.  Step 2's four threads wrote
 * 512 KiB of their stacks each, step 3 wrote 8 MiB of the program's bss,
 * step 4 4 MiB of its initialized data (copies of the file's pages, which
 * were unexplained before); each term within CLASS_SLACK (the threads'
 * descriptors and TLS, and what libc touches on the way), with nothing
 * left unexplained. */
static void
test_anon_split (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-anon-split");
  g_autofree char *path = g_build_filename (dir, "split.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "anon-split", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o", path,
                         "--", target, NULL };
  g_autofree char *out = tide_test_spawn_ok (argv);
  g_autofree char *csv = tidemark_out ((const char *[]) { "report", path, "--rss", "--format",
                                                          "csv", NULL });
  g_autofree char *text = tidemark_out ((const char *[]) { "report", path, "--rss", NULL });
  g_auto(GStrv) lines = g_strsplit (csv, "\n", -1);

  g_assert_cmpstr (out, ==, "done\n");
  /* A row a step, one process. */
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 4 + 1);
  assert_near (csv_number (lines, 2, "thread_stacks_bytes"), 2 * MIB);
  assert_near (csv_number (lines, 2, "lib_data_bytes"), 0);
  assert_near (csv_number (lines, 2, "unexplained_bytes"), 0);
  assert_near (csv_number (lines, 3, "lib_data_bytes"), 8 * MIB);
  assert_near (csv_number (lines, 3, "thread_stacks_bytes"), 0);
  assert_near (csv_number (lines, 3, "unexplained_bytes"), 0);
  assert_near (csv_number (lines, 4, "lib_data_bytes"), 4 * MIB);
  assert_near (csv_number (lines, 4, "file_bytes"), 0);
  assert_near (csv_number (lines, 4, "unexplained_bytes"), 0);
  /* The private change is the terms' sum; besides a step's own term it
   * holds the pages that other processes came to share with this one
   * meanwhile (any program starting on a loaded machine maps libc's
   * pages too), a term of its own, "newly shared".  So it is held to the
   * step's own class within CLASS_SLACK, as the classes are, and the text
   * names the term. */
  assert_near (csv_number (lines, 2, "base_delta_bytes"), 2 * MIB);
  assert_near (csv_number (lines, 3, "base_delta_bytes"), 8 * MIB);
  assert_near (csv_number (lines, 4, "base_delta_bytes"), 4 * MIB);
  assert_text_matches ("\nstep 2 threads, anon-split \\(pid [0-9]+\\): "
                       "\\+[0-9]+\\.[0-9]{2} [KM]iB private: thread stacks "
                       "\\+2\\.[0-9]{2} MiB[,;]", text);
  assert_text_matches ("\nstep 3 bss, anon-split \\(pid [0-9]+\\): "
                       "\\+[0-9]+\\.[0-9]{2} [KM]iB private: library data "
                       "\\+8\\.[0-9]{2} MiB[,;]", text);
  /* Less a few pages of the data that were the file's before (file-backed). */
  assert_text_matches ("\nstep 4 data, anon-split \\(pid [0-9]+\\): "
                       "\\+[0-9]+\\.[0-9]{2} [KM]iB private: library data "
                       "\\+4\\.0[0-9] MiB[,;]", text);
  /* It ends saying how the classes were read. */
  g_assert_true (g_str_has_suffix (text, "\n\nMeasured by: the kernel's split (/proc/PID/status) "
                                         "at every step end; private memory (smaps_rollup) and "
                                         "copy-on-write (pagemap, through PAGEMAP_SCAN) at every "
                                         "step end (--sync-steps)\n") ||
                 !kernel_has_pagemap_scan ());
  g_assert_true (g_str_has_suffix (text, "(pagemap, read page by page: this kernel has no "
                                         "PAGEMAP_SCAN) at every step end (--sync-steps)\n") ||
                 kernel_has_pagemap_scan ());
  tide_test_remove_dir (dir);
}

/* The summary gives the job's memory as its PSS summed, read for every
 * process at once (at each step end, as --sync-steps asks).  The job peaks
 * after step 5: the parent's 80 MiB (32 MiB mapped, 32 MiB of heap, 16 MiB
 * of shmem), the 16 MiB that the child copied on write, and the child's
 * own few pages.  The RSS summed over both would say about 150 MiB, as the
 * child maps 64 MiB of the parent's pages. */
static void
test_summary_pss (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-summary");
  g_autofree char *path = g_build_filename (dir, "summary.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "rss-classes", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "--sync-steps", "-o", path, "--",
                         target, NULL };
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GMatchInfo) match = NULL;
  g_autoptr(GRegex) line = g_regex_new ("^tidemark: trace .*: 2 processes, 6 steps, job peak PSS "
                                        "([0-9.]+) MiB on the host\n", G_REGEX_MULTILINE, 0, NULL);
  g_autofree char *mib = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_true (g_regex_match (line, err, 0, &match));
  mib = g_match_info_fetch (match, 1);
  g_assert_cmpfloat (g_ascii_strtod (mib, NULL), >=, 96.0);
  g_assert_cmpfloat (g_ascii_strtod (mib, NULL), <, 100.0);
  /* One job peak: `report --processes` gives the summary's figure, and
   * when (tide_report_job_peak(), which the job lane's title and its
   * export draw too). */
  {
    g_autofree char *text = tidemark_out ((const char *[]) { "report", path, "--processes", NULL });
    g_autofree char *json = tidemark_out ((const char *[]) { "report", path, "--processes",
                                                             "--format", "json", NULL });
    g_autofree char *peak_line = g_strdup_printf ("\nJob peak PSS: %s MiB, in step ", mib);
    g_autoptr(TideTrace) trace = tide_test_open_trace (path);
    TideJobPeak peak;
    g_autofree char *json_peak = NULL;

    g_assert_nonnull (strstr (text, peak_line));
    g_assert_true (tide_report_job_peak (trace, &peak, NULL));
    g_assert_true (peak.known && peak.by_pss);
    g_assert_cmpint (peak.step, ==, 5);
    json_peak = g_strdup_printf (",\"job_peak\":{\"measure\":\"pss\",\"bytes\":%" G_GINT64_FORMAT
                                 ",\"ts_ns\":%" G_GINT64_FORMAT ",\"step\":5,"
                                 "\"rss_rise_after_bytes\":null,\"rss_rise_step\":null,"
                                 "\"rise_of\":null}}\n",
                                 peak.bytes, peak.ts_ns);
    g_assert_true (g_str_has_suffix (json, json_peak));
  }
  /* The child's copy-on-write, from the parent's mapping; and the largest
   * growth beyond the heap in words: step 2's heap that glibc keeps. */
  assert_text_matches ("\ntidemark: rss-classes: \\+16\\.[0-9]{2} MiB copied on "
                       "write, 16\\.00 MiB of it from the parent's blocks allocated at "
                       "rss-classes\\.c:[0-9]+ \\(main\\)\n", err);
  assert_text_matches ("\ntidemark: largest growth beyond the heap: step 2 heap, "
                       "rss-classes \\(pid [0-9]+\\): \\+3[12]\\.[0-9]{2} MiB "
                       "private: allocator free \\+3[12]\\.[0-9]{2} MiB[,;]", err);
  tide_test_remove_dir (dir);
}

/* tests/targets/allocator-free on the allocator @library, preloaded: the
 * 64 MiB it frees in step 2 stay with that allocator, which the preload
 * reads from its statistics into @counter, and that is what the step's
 * anonymous memory grew by.  The allocator class holds that allocator's
 * and glibc's, which keeps next to nothing here.  @keep_setting stops the
 * allocator from returning pages as time passes: the statistics and the
 * RSS are read one after the other, and a purge between the two reads
 * parted them on a loaded machine.  @held is what the allocator holds
 * for the 64 MiB, which its figure may pass by @slack; @at_start is the
 * least it holds at the baseline's end, its metadata. */
static void
assert_allocator_keeps_free (const char *library,
                             const char *keep_setting,
                             gint64      held,
                             gint64      slack,
                             gint64      at_start,
                             gint        counter)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-allocator");
  g_autofree char *path = g_build_filename (dir, "allocator.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "allocator-free", NULL);
  /* Preloaded into the target alone, through env: the recorder of a
   * sanitizer build cannot run with it. */
  g_autofree char *preload = g_strdup_printf ("LD_PRELOAD=%s:%s", TIDE_PRELOAD_LIB, library);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o", path,
                         "--", "/usr/bin/env", preload, keep_setting, target, NULL };
  g_autofree char *out = tide_test_spawn_ok (argv);
  g_autoptr(TideTrace) trace = NULL;
  Fixture f = { 0 };
  gint64 kept, anon, glibc;

  g_assert_cmpstr (out, ==, "done\n");
  f.trace = trace = tide_test_open_trace (path);

  g_assert_cmpint (sent_by_step_end (&f, counter, 1), >=, at_start);
  kept = sent_by_step_end (&f, counter, 2) - sent_by_step_end (&f, counter, 1);
  anon = at_step_end (&f, TIDE_COUNTER_RSS_ANON, 2) - at_step_end (&f, TIDE_COUNTER_RSS_ANON, 1);
  g_test_message ("kept %" G_GINT64_FORMAT ", anonymous memory %" G_GINT64_FORMAT, kept, anon);
  g_assert_cmpint (kept, >=, held - CLASS_SLACK);
  g_assert_cmpint (kept, <=, held + slack);
  g_assert_cmpint (anon, >=, kept - slack);
  g_assert_cmpint (anon, <=, kept + CLASS_SLACK);
  glibc = sent_by_step_end (&f, TIDE_COUNTER_ALLOC_FREE, 2) - sent_by_step_end (&f, counter, 2);
  g_assert_cmpint (glibc, <, CLASS_SLACK);
  g_assert_cmpint (glibc, >=, 0);
  tide_test_remove_dir (dir);
}

static void
test_jemalloc (void)
{
  if (!g_file_test (JEMALLOC, G_FILE_TEST_EXISTS))
    {
      g_test_skip (JEMALLOC " is not installed (libjemalloc2)");
      return;
    }
  /* jemalloc puts each 64 KiB block at a random cache-line offset in an
   * extent one page larger, so each block touches 17 pages.  In some
   * runs its dirty pages also take in an extent of 2 MiB and a page that
   * nothing touched, so that the figure passes what is resident. */
  assert_allocator_keeps_free (JEMALLOC, "MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1",
                               1024 * (64 + 4) * KIB, 2 * MIB + 4 * KIB + CLASS_SLACK, 0,
                               TIDE_COUNTER_JEMALLOC_FREE);
}

/* tcmalloc keeps the pages of freed blocks in its page heap, and returns
 * them to the system a little at a time.  Its page map has a leaf of
 * 2 MiB for each 2 GiB of address space, zeroed when made, so resident
 * from the start; the heap's randomized start puts about one run in thirty
 * across a boundary, where the 64 MiB make a second leaf.  Both are
 * tcmalloc's metadata, which it holds as it holds its free pages. */
static void
test_tcmalloc (void)
{
  if (!g_file_test (TCMALLOC, G_FILE_TEST_EXISTS))
    {
      g_test_skip (TCMALLOC " is not installed (libtcmalloc-minimal4)");
      return;
    }
  assert_allocator_keeps_free (TCMALLOC, "TCMALLOC_RELEASE_RATE=0", 64 * MIB,
                               2 * MIB + CLASS_SLACK, 2 * MIB, TIDE_COUNTER_TCMALLOC_FREE);
}

/* Records the target @name, given @mode (or none), quietly into @dir;
 * *@out: what it printed. */
static TideTrace *
record_target (const char  *dir,
               const char  *name,
               const char  *mode,
               char       **out)
{
  g_autofree char *path = g_build_filename (dir, "target.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, name, NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "-o", path, "--", target,
                         mode, NULL };

  *out = tide_test_spawn_ok (argv);
  return tide_test_open_trace (path);
}

/* `allocator-free after-last-step` keeps 64 MiB of heap blocks in step 2
 * and frees them under a kept block as it ends: glibc holds them free,
 * still resident.  The process's last reading, in its exit path, has the
 * allocator's free memory beside it, so the explanation that ends there
 * names them, where the figure of step 2's end named nothing, and holds
 * its unexplained rest. */
static void
test_allocator_free_at_exit (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-allocator-exit");
  g_autofree char *out = NULL;
  g_autoptr(TideTrace) trace = record_target (dir, "allocator-free", "after-last-step", &out);
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GArray) explanations = NULL;
  g_autoptr(GError) error = NULL;
  const TideRssExplanation *last;
  Fixture f = { .trace = trace };
  g_autofree char *sql = NULL;
  g_autofree char *described = NULL;
  gint64 at_exit;

  g_assert_cmpstr (out, ==, "done\n");
  sql = g_strdup_printf ("SELECT c.value FROM counters c JOIN steps s"
                         " ON s.process_id = c.process_id AND s.number = 2"
                         " WHERE c.counter = %d AND c.ts_ns > s.end_ns ORDER BY c.ts_ns LIMIT 1",
                         TIDE_COUNTER_ALLOC_FREE);
  at_exit = tide_test_query_int (trace, sql);
  g_assert_cmpint (at_exit - sent_by_step_end (&f, TIDE_COUNTER_ALLOC_FREE, 2), >=,
                   64 * MIB - CLASS_SLACK);

  rows = tide_report_job_steps (trace, &error);
  g_assert_no_error (error);
  explanations = tide_rss_explain_steps (rows);
  last = &g_array_index (explanations, TideRssExplanation, explanations->len - 1);
  described = tide_rss_explanation_describe (last);
  g_test_message ("%s", described);
  /* Step 2's end is read only where the baseline's reading did not stand
   * (a loaded machine that met its mark 20 ms late), or on a machine so
   * slow that writing 64 MiB takes half a second: then nothing ends at
   * the exit. */
  if (!last->to_exit_read)
    {
      g_test_message ("step 2's end was read: no explanation ends at the last reading");
      tide_test_remove_dir (dir);
      return;
    }
  g_assert_cmpint (last->terms[TIDE_RSS_ALLOC_FREE], >=, 64 * MIB - CLASS_SLACK);
  g_assert_cmpint (last->terms[TIDE_RSS_ALLOC_FREE], <=, 64 * MIB + CLASS_SLACK);
  g_assert_cmpint (last->terms[TIDE_RSS_HEAP], >=, -CLASS_SLACK);
  g_assert_cmpint (last->terms[TIDE_RSS_HEAP], <=, CLASS_SLACK);
  g_assert_cmpint (ABS (last->terms[TIDE_RSS_UNEXPLAINED]), <=, CLASS_SLACK);
  tide_test_remove_dir (dir);
}

/* `allocator-free grow-at-exit` writes 64 MiB after its last step: the
 * recording's last live process has its PSS read at its exit, so that the
 * job's peak counts what it grew since the last snapshot. */
static void
test_pss_at_exit (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-pss-exit");
  g_autofree char *out = NULL;
  g_autoptr(TideTrace) trace = record_target (dir, "allocator-free", "grow-at-exit", &out);
  g_autofree char *last_sql = g_strdup_printf ("SELECT max (ts_ns) FROM counters WHERE counter = %d",
                                               TIDE_COUNTER_PSS);
  g_autofree char *exit_sql = g_strdup_printf ("SELECT max (ts_ns) FROM counters WHERE counter = %d",
                                               TIDE_COUNTER_USS);
  g_autofree char *step_sql = g_strdup ("SELECT max (end_ns) FROM steps");
  g_autofree char *rss_sql = NULL;
  gint64 exit_ns, peak_rss;
  TideJobPeak peak;

  g_assert_cmpstr (out, ==, "done\n");
  exit_ns = tide_test_query_int (trace, exit_sql);
  g_assert_cmpint (exit_ns, >, tide_test_query_int (trace, step_sql));
  g_assert_cmpint (tide_test_query_int (trace, last_sql), ==, exit_ns);
  /* The poll may write the RSS of the exit after the program stamped its
   * exit reading and before the recorder took it: its highest value. */
  rss_sql = g_strdup_printf ("SELECT max (value) FROM counters WHERE counter = %d",
                             TIDE_COUNTER_RSS);
  peak_rss = tide_test_query_int (trace, rss_sql);
  g_assert_cmpint (peak_rss, >=, 64 * MIB);
  g_assert_true (tide_report_job_peak (trace, &peak, NULL));
  g_assert_true (peak.known && peak.by_pss);
  g_assert_cmpint (peak.ts_ns, ==, exit_ns);
  /* Its pages are its own: its PSS is its RSS but for shared libraries'. */
  g_assert_cmpint (peak.bytes, >=, 64 * MIB);
  g_assert_cmpint (peak.bytes, <=, peak_rss);
  tide_test_remove_dir (dir);
}

/* What the recorder wrote at step @number's end: the RSS classes (anon +
 * file + shmem) in @at_end[0], the private memory in @at_end[1], -1 where
 * none was.  Returns: how long after the end the first later reading of
 * the classes was, or -1. */
static gint64
read_at_step_end (TideTrace *trace,
                  gint       number,
                  gint64     at_end[2])
{
  /* A literal, so that the compiler checks the format at -O0 too. */
#define AT_STEP_END_SQL                                                  \
  "SELECT coalesce (sum (c.value), -1) FROM counters c JOIN steps s"     \
  " ON s.process_id = c.process_id AND s.number = %d"                    \
  " WHERE c.counter IN (%d, %d, %d) AND c.ts_ns = s.end_ns"
  g_autofree char *classes = g_strdup_printf (AT_STEP_END_SQL, number, TIDE_COUNTER_RSS_ANON,
                                              TIDE_COUNTER_RSS_FILE, TIDE_COUNTER_RSS_SHMEM);
  g_autofree char *uss = g_strdup_printf (AT_STEP_END_SQL, number, TIDE_COUNTER_USS,
                                          TIDE_COUNTER_USS, TIDE_COUNTER_USS);
#undef AT_STEP_END_SQL
  g_autofree char *after = g_strdup_printf (
      "SELECT coalesce (min (c.ts_ns) - s.end_ns, -1) FROM counters c JOIN steps s"
      " ON s.process_id = c.process_id AND s.number = %d"
      " WHERE c.counter = %d AND c.ts_ns > s.end_ns", number, TIDE_COUNTER_RSS_ANON);

  at_end[0] = tide_test_query_int (trace, classes);
  at_end[1] = tide_test_query_int (trace, uss);
  return tide_test_query_int (trace, after);
}

/* @counter written at step @number's end, -1 where none was. */
static gint64
counter_at_step_end (TideTrace *trace,
                     gint       counter,
                     gint       number)
{
  g_autofree char *sql = g_strdup_printf (
      "SELECT coalesce (max (c.value), -1) FROM counters c JOIN steps s"
      " ON s.process_id = c.process_id AND s.number = %d"
      " WHERE c.counter = %d AND c.ts_ns = s.end_ns", number, counter);

  return tide_test_query_int (trace, sql);
}

/* `step-fence`: a reading of a step end that the program's growth moved
 * past is not written as the step end's; an idle program's is.  Each
 * reading at a step end holds what the program measured itself at its
 * mark, within the fence's 256 KiB and what the program's own reads and
 * print allocate.  The RSS of every step end is the one the process read
 * at its mark, however late the recorder met it. */
static void
test_step_fence (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-fence");
  g_autofree char *out = NULL;
  g_autoptr(TideTrace) trace = record_target (dir, "step-fence", NULL, &out);
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
  enum { IDLE = 9 };
  gint64 marks[IDLE + 1][2] = { { 0 } };
  gint64 at_end[2];
  gint64 late_ns;

  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      gint number = 0;
      gint64 rss, uss;

      g_assert_cmpint (sscanf (lines[i], "mark %d %" G_GINT64_FORMAT " %" G_GINT64_FORMAT,
                               &number, &rss, &uss), ==, 3);
      g_assert_true (number >= 1 && number <= IDLE);
      marks[number][0] = rss;
      marks[number][1] = uss;
    }
  g_assert_cmpint (marks[IDLE][0], >=, marks[1][0] + 200 * MIB);

  for (gint step = 1; step <= IDLE; step++)
    {
      gint64 rss = counter_at_step_end (trace, TIDE_COUNTER_RSS, step);

      g_test_message ("step %d's end: RSS %" G_GINT64_FORMAT " (mark %" G_GINT64_FORMAT ")",
                      step, rss, marks[step][0]);
      g_assert_cmpint (ABS (rss - marks[step][0]), <=, 512 * 1024);
    }
  for (gint step = 1; step < IDLE; step++)
    {
      read_at_step_end (trace, step, at_end);
      g_test_message ("step %d's end: classes %" G_GINT64_FORMAT " (mark %" G_GINT64_FORMAT
                      "), private %" G_GINT64_FORMAT " (mark %" G_GINT64_FORMAT ")", step,
                      at_end[0], marks[step][0], at_end[1], marks[step][1]);
      for (guint k = 0; k < 2; k++)
        if (at_end[k] >= 0)
          g_assert_cmpint (ABS (at_end[k] - marks[step][k]), <=, 512 * 1024);
    }

  late_ns = read_at_step_end (trace, IDLE, at_end);
  /* Only the deadline leaves the idle step end unread: the recorder met
   * its mark 20 ms late or more, on a loaded machine. */
  if (at_end[0] < 0)
    {
      g_assert_cmpint (late_ns, >, 20 * G_GINT64_CONSTANT (1000000));
      g_test_message ("the idle step's end was read %" G_GINT64_FORMAT " ns late", late_ns);
    }
  for (guint k = 0; k < 2; k++)
    if (at_end[k] >= 0)
      g_assert_cmpint (ABS (at_end[k] - marks[IDLE][k]), <=, 512 * 1024);
  tide_test_remove_dir (dir);
}

/* `step-fence first-step`: the reading of the first step end, which the
 * program outran, does not stand, and the next step ends are read
 * although no reading is due, so that the report's first span ends at one
 * of them and not at the process's exit.  Each of those readings stands
 * (steps 2 and 3 are idle) where the recorder met its mark within the
 * 20 ms deadline; on a loaded machine it may not, and it is written at
 * its own time, after step 2's end and before the process's last
 * reading, which it takes as the process exits.  (Step 1's reading, set
 * aside, is written at its own time too.)  Under stress-ng --cpu 2 the
 * recorder once met step 2's mark so late that it read nothing. */
static void
test_first_step_read (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-first-step");
  g_autofree char *out = NULL;
  g_autoptr(TideTrace) trace = record_target (dir, "step-fence", "first-step", &out);
  g_autofree char *retries = g_strdup_printf (
      "SELECT count (*) FROM counters c, steps a"
      " WHERE a.number = 2 AND c.process_id = a.process_id AND c.counter = %1$d"
      "   AND c.ts_ns >= a.end_ns"
      "   AND c.ts_ns < (SELECT max (ts_ns) FROM counters"
      "                  WHERE process_id = a.process_id AND counter = %1$d)",
      TIDE_COUNTER_USS);
  gint64 first[2], second[2];

  read_at_step_end (trace, 1, first);
  read_at_step_end (trace, 2, second);
  g_test_message ("private memory at step 1's end %" G_GINT64_FORMAT ", at step 2's %"
                  G_GINT64_FORMAT, first[1], second[1]);
  if (first[1] >= 0)
    {
      g_test_message ("step 1's reading stood: the recorder read it before the writer moved");
      tide_test_remove_dir (dir);
      return;
    }
  g_assert_cmpint (tide_test_query_int (trace, retries), >=, 1);
  tide_test_remove_dir (dir);
}

/* `short-steps @mode`: 300 steps of about 6 ms, each holding 4 MiB from
 * just before its marker to just after it, and keeping 256 KiB.  The
 * recorder cannot read such a process within a step end unless the step
 * waits for it: its first step end does, and those at which a reading is
 * due (asked by the recorder), and their readings stand.  Each of them
 * holds the step's 4 MiB, and the private memory kept since the first,
 * explained by the heap.  The first read is one of steps 1 to
 * @last_first, and one after step @read_after is read too. */
static void
assert_short_steps_read (const char *mode,
                         gint        last_first,
                         gint        read_after)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-short-steps");
  g_autofree char *out = NULL;
  g_autoptr(TideTrace) trace = record_target (dir, "short-steps", mode, &out);
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GArray) explanations = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *reads = NULL;
  gint first = 1;
  gint64 first_uss;
  guint inner = 0;
  gint last_read = 0;

  g_assert_cmpstr (out, ==, "done\n");
  /* The report's last line says that those step ends waited. */
  reads = tide_test_query_text (trace, "SELECT value FROM meta WHERE key = 'private_reads'");
  g_assert_cmpstr (reads, ==, "budget-waits");
  while (first < last_first && counter_at_step_end (trace, TIDE_COUNTER_USS, first) < 0)
    first++;
  first_uss = counter_at_step_end (trace, TIDE_COUNTER_USS, first);
  g_test_message ("first step end read: %d", first);
  g_assert_cmpint (first_uss, >, 4 * MIB);
  rows = tide_report_job_steps (trace, &error);
  g_assert_no_error (error);
  explanations = tide_rss_explain_steps (rows);
  for (guint i = 0; i < explanations->len; i++)
    {
      const TideRssExplanation *e = &g_array_index (explanations, TideRssExplanation, i);
      g_autofree char *described = NULL;
      gint64 kept;

      if (e->pending || e->to_exit_read || e->last_step <= first)
        continue;
      described = tide_rss_explanation_describe (e);
      g_test_message ("steps %d-%d: %s", e->first_step, e->last_step, described);
      kept = (e->last_step - first) * 256 * KIB;
      /* Read at the step end, with its 4 MiB: anywhere else is 4 MiB less. */
      g_assert_cmpint (ABS (counter_at_step_end (trace, TIDE_COUNTER_USS, e->last_step) -
                            first_uss - kept), <=, MIB);
      g_assert_cmpint (ABS (e->base_delta - (e->last_step - e->first_step + 1) * 256 * KIB), <=,
                       MIB);
      g_assert_cmpint (ABS (e->terms[TIDE_RSS_UNEXPLAINED]), <=, 256 * KIB);
      inner++;
      last_read = MAX (last_read, e->last_step);
    }
  /* A reading is due every half second, for 2 s of steps. */
  g_assert_cmpuint (inner, >=, 1);
  g_assert_cmpint (last_read, >, read_after);
  tide_test_remove_dir (dir);
}

/* Before the waits, not even step 1 was read, and one span ran from it to
 * the exit.  (Should the recorder meet the first step end after the
 * marker stopped waiting, one of the next two, asked again, stands.) */
static void
test_short_steps (void)
{
  assert_short_steps_read (NULL, 3, 0);
}

/* `short-steps late-recorder`: the recorder, stopped for 300 ms as step
 * 1 is marked, meets that step end late, as it meets a first step end
 * behind a process's start-up on a loaded machine (a DDP rank's, in CI).
 * Step 1 waits for it all the same, and later step ends are asked and
 * read as before, also after a second stop at step 151.  Before, the
 * marker waited 100 ms, and every request that the recorder sent while
 * it caught up was matched to a step end that had not waited: no step end
 * of the 300 was read, and one span ran from step 1 to the exit.  And a
 * wait that the second stop outlasted left its answer on the connection,
 * which ended the next wait at once, and each after it one answer early:
 * under stress-ng, 2 runs in 20 had no step end after step 151 read. */
static void
test_short_steps_late_recorder (void)
{
  assert_short_steps_read ("late-recorder", 1, 150);
}

/* `allocator-free grow` on the allocator @library (NULL: glibc's) frees
 * 16 MiB more in each of steps 2 to 5: its one suspect is the allocator's
 * free memory, named by the allocator that holds it, with its remedy. */
static void
assert_allocator_suspect (const char *library,
                          const char *name_pattern,
                          gint64      slack,
                          const char *hint)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-allocator-suspect");
  g_autofree char *path = g_build_filename (dir, "grow.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "allocator-free", NULL);
  g_autofree char *preload = g_strdup_printf ("LD_PRELOAD=%s%s%s", TIDE_PRELOAD_LIB,
                                              library ? ":" : "", library ? library : "");
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o", path,
                         "--", "/usr/bin/env", preload, target, "grow", NULL };
  g_autofree char *out = tide_test_spawn_ok (argv);
  g_autoptr(TideTrace) trace = tide_test_open_trace (path);
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GError) error = NULL;
  TideClassSuspect *s;

  g_assert_cmpstr (out, ==, "done\n");
  suspects = tide_report_class_suspects (trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 1);
  s = g_ptr_array_index (suspects, 0);
  g_assert_cmpint (s->kind, ==, TIDE_CLASS_SUSPECT_ALLOC_FREE);
  g_assert_cmpint (s->growth_step, ==, 2);
  g_assert_cmpfloat (s->bytes_per_step, >=, 16 * MIB - slack / 4);
  g_assert_cmpfloat (s->bytes_per_step, <=, 16 * MIB + slack / 4);
  if (!g_regex_match_simple (name_pattern, s->name, 0, 0))
    g_error ("the suspect's name «%s» does not match «%s»", s->name, name_pattern);
  g_assert_cmpstr (s->hint, ==, hint);
  tide_test_remove_dir (dir);
}

static void
test_glibc_suspect (void)
{
  assert_allocator_suspect (NULL, "^glibc arenas keep 64\\.[0-9]{2} MiB free$", CLASS_SLACK,
                            "glibc keeps freed memory in per-thread arenas: set "
                            "MALLOC_ARENA_MAX=2, call malloc_trim(0) after large frees, or run "
                            "on jemalloc (LD_PRELOAD=libjemalloc.so.2)");
}

static void
test_tcmalloc_suspect (void)
{
  if (!g_file_test (TCMALLOC, G_FILE_TEST_EXISTS))
    {
      g_test_skip (TCMALLOC " is not installed (libtcmalloc-minimal4)");
      return;
    }
  /* Its metadata at the start, and a second leaf of its page map where
   * the heap crosses a boundary (see test_tcmalloc), come on top. */
  assert_allocator_suspect (TCMALLOC, "^tcmalloc keeps 6[7-9]\\.[0-9]{2} MiB free$",
                            2 * MIB + CLASS_SLACK,
                            "tcmalloc returns freed pages to the system slowly: "
                            "TCMALLOC_RELEASE_RATE=10 returns them sooner, and "
                            "MallocExtension_ReleaseFreeMemory() after large frees returns "
                            "them at once");
}

/* tests/targets/cow-steps, recorded with --sync-steps into @dir. */
static TideTrace *
record_cow_steps (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "cow-steps.tide", NULL);
  g_autofree char *target = g_build_filename (TIDE_TARGETS_DIR, "cow-steps", NULL);
  const char *argv[] = { TIDE_TIDEMARK_EXE, "record", "--force", "-q", "--sync-steps", "-o", path,
                         "--", target, NULL };
  g_autofree char *out = tide_test_spawn_ok (argv);

  g_assert_cmpstr (out, ==, "done\n");
  return tide_test_open_trace (path);
}

/* `tidemark ARGS...`, which must succeed and say nothing on stderr;
 * returns stdout. */
static char *
tidemark_out (const char * const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();

  g_ptr_array_add (argv, (char *) TIDE_TIDEMARK_EXE);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  return tide_test_spawn_ok ((const char * const *) argv->pdata);
}

#define COW_HINT "reading a Python object writes its reference count, which copies its page " \
                 "into every worker: keep a Dataset's data in numpy arrays or tensors rather " \
                 "than lists and dicts of Python objects"

/* cow-steps' child copies 8 MiB of its parent's pages on write in each of
 * steps 3 to 6: a class suspect, the only suspect, in every format, with
 * the numbers of tide_report_class_suspects() and its hint; and `tidemark
 * diff` of the trace with itself, which compares stacks, is not upset by
 * it. */
static void
test_class_suspect_formats (void)
{
  g_autofree char *dir = tide_test_make_dir ("tide-rss-class-suspect");
  g_autofree char *path = g_build_filename (dir, "cow-steps.tide", NULL);
  g_autoptr(TideTrace) trace = record_cow_steps (dir);
  g_autoptr(GPtrArray) suspects = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *csv = NULL, *json = NULL, *text = NULL, *diff = NULL;
  g_autofree char *csv_row = NULL, *json_row = NULL, *child_pid = NULL, *parent_pid = NULL;
  g_auto(GStrv) lines = NULL;
  TideClassSuspect *s;

  suspects = tide_report_class_suspects (trace, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (suspects->len, ==, 1);
  s = g_ptr_array_index (suspects, 0);
  child_pid = tide_test_query_text (trace, "SELECT pid FROM processes WHERE id = 2");
  parent_pid = tide_test_query_text (trace, "SELECT pid FROM processes WHERE id = 1");
  g_assert_cmpint (s->kind, ==, TIDE_CLASS_SUSPECT_COW);
  g_assert_cmpint (s->process.id, ==, 2);
  g_assert_cmpint (s->process.pid, ==, g_ascii_strtoll (child_pid, NULL, 10));
  /* Step 2 is the child's first: its growth starts with step 3. */
  g_assert_cmpint (s->growth_step, ==, 3);
  g_assert_cmpfloat (s->bytes_per_step, >=, 8 * MIB);
  g_assert_cmpfloat (s->bytes_per_step, <=, 8 * MIB + CLASS_SLACK / 4);
  g_assert_cmpint (s->end_bytes, >=, 32 * MIB);
  g_assert_cmpint (s->end_bytes, <=, 32 * MIB + CLASS_SLACK);
  g_assert_cmpstr (s->name, ==, "copy-on-write in cow-steps");
  g_assert_cmpstr (s->hint, ==, COW_HINT);

  csv = tidemark_out ((const char *[]) { "report", path, "--suspects", "--format", "csv", NULL });
  lines = g_strsplit (csv, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 1 + 1);
  /* The columns of before, then the new ones at the end. */
  g_assert_cmpstr (lines[0], ==, "position,pid,role,dist_rank,device,bytes,count,resident_bytes,"
                                 "growth_start_step,growth_bytes,bytes_per_step,scope,function,"
                                 "file,line,module,stack,headline,headline_file,headline_line,"
                                 "scopes,kind,class,name,hint");
  csv_row = g_strdup_printf ("1,%s,cow-steps,,host,%" G_GINT64_FORMAT ",,,3,%" G_GINT64_FORMAT
                             ",%" G_GINT64_FORMAT ",,,,,,,,,,,class,cow,"
                             "copy-on-write in cow-steps,\"" COW_HINT "\"", child_pid,
                             s->end_bytes, s->growth_bytes, (gint64) s->bytes_per_step);
  g_assert_cmpstr (lines[1], ==, csv_row);

  json = tidemark_out ((const char *[]) { "report", path, "--suspects", "--format", "json",
                                          NULL });
  json_row = g_strdup_printf ("{\"suspects\":[{\"position\":1,\"pid\":%s,\"role\":\"cow-steps\","
                              "\"dist_rank\":null,\"device\":\"host\",\"bytes\":%" G_GINT64_FORMAT
                              ",\"count\":null,\"resident_bytes\":null,\"growth_start_step\":3,"
                              "\"growth_bytes\":%" G_GINT64_FORMAT ",\"bytes_per_step\":%"
                              G_GINT64_FORMAT ",\"scope\":null,\"frames\":[],\"headline\":null,"
                              "\"scopes\":null,\"kind\":\"class\",\"class\":\"cow\","
                              "\"name\":\"copy-on-write in cow-steps\",\"hint\":\"" COW_HINT
                              "\"}]}\n", child_pid, s->end_bytes, s->growth_bytes,
                              (gint64) s->bytes_per_step);
  g_assert_cmpstr (json, ==, json_row);

  text = tidemark_out ((const char *[]) { "report", path, "--suspects", NULL });
  g_assert_true (g_str_has_prefix (text, "No leak suspects: nothing grows steadily step over "
                                         "step.\n"));
  assert_text_matches ("\nResident memory that grows step over step:\nclass: "
                       "copy-on-write in cow-steps, \\+8\\.[0-9]{2} MiB/step "
                       "since step 3, 3[23]\\.[0-9]{2} MiB copied \\(pid [0-9]+, host\\)"
                       "\n  reading a Python object writes", text);
  g_assert_true (g_str_has_suffix (text, COW_HINT "\n"));

  /* --process: the parent has no suspect of either kind; the child has
   * its class. */
  g_free (csv);
  csv = tidemark_out ((const char *[]) { "report", path, "--suspects", "--format", "csv",
                                         "--process", parent_pid, NULL });
  g_assert_true (g_str_has_suffix (csv, ",kind,class,name,hint\n"));
  g_assert_cmpuint (strlen (csv), ==, strlen (lines[0]) + 1);
  g_free (csv);
  csv = tidemark_out ((const char *[]) { "report", path, "--suspects", "--format", "csv",
                                         "--process", child_pid, NULL });
  g_assert_true (g_str_has_prefix (csv, lines[0]));
  g_assert_cmpuint (strlen (csv), ==, strlen (lines[0]) + strlen (csv_row) + 2);
  g_assert_nonnull (strstr (csv, csv_row));

  diff = tidemark_out ((const char *[]) { "diff", path, path, NULL });
  g_assert_nonnull (diff);
  tide_test_remove_dir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/rss-classes/split", test_split);
  ADD ("/rss-classes/allocator-free", test_allocator_free);
  ADD ("/rss-classes/shmem", test_shmem);
  ADD ("/rss-classes/fork", test_fork);
  ADD ("/rss-classes/cow", test_cow);
  ADD ("/rss-classes/steps-columns", test_steps_columns);
  ADD ("/rss-classes/rss-report", test_rss_report);
  ADD ("/rss-classes/sharing", test_sharing);
#undef ADD
  g_test_add_func ("/rss-classes/summary-pss", test_summary_pss);
  g_test_add_func ("/rss-classes/anon-split", test_anon_split);
  g_test_add_func ("/rss-classes/jemalloc", test_jemalloc);
  g_test_add_func ("/rss-classes/tcmalloc", test_tcmalloc);
  g_test_add_func ("/rss-classes/allocator-free-at-exit", test_allocator_free_at_exit);
  g_test_add_func ("/rss-classes/pss-at-exit", test_pss_at_exit);
  g_test_add_func ("/rss-classes/step-fence", test_step_fence);
  g_test_add_func ("/rss-classes/first-step-read", test_first_step_read);
  g_test_add_func ("/rss-classes/short-steps", test_short_steps);
  g_test_add_func ("/rss-classes/short-steps/late-recorder", test_short_steps_late_recorder);
  g_test_add_func ("/rss-classes/glibc-suspect", test_glibc_suspect);
  g_test_add_func ("/rss-classes/tcmalloc-suspect", test_tcmalloc_suspect);
  g_test_add_func ("/rss-classes/class-suspect-formats", test_class_suspect_formats);
  return g_test_run ();
}
