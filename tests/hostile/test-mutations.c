/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Seeded mutations of small real traces (corpus/): bit flips, truncation,
 * zeroed pages and hostile column values.  Each mutant runs through every
 * report in every format, the window's queries and PNG export
 * (tide-exercise.h) in a process of its own (this program, started again
 * with --exercise) with a time limit; it must end with
 * everything answered or with clean errors of one line, never with a
 * crash, a sanitizer report or a hang.  Every seventh mutant (all kinds) also goes
 * through the `tidemark` command, which must exit 0, or 2 with one line.
 *
 * The seed is fixed, so a failure names a mutant that can be made again:
 * TIDE_MUTATION_SEED=N and TIDE_MUTATION_KEEP=DIR (keeps the mutants)
 * explore further.
 */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <unistd.h>

#include "tide-exercise.h"
#include "tide-run-limited.h"
#include "tide-test-util.h"

#define N_MUTANTS 120
/* A mutant takes about 0.1 s here (0.3 s under ASan); the limit only has
 * to tell a hang from a slow machine. */
#define LIMIT_S   20

typedef enum
{
  MUTATE_FLIP,
  MUTATE_TRUNCATE,
  MUTATE_ZERO_PAGES,
  MUTATE_HOSTILE_VALUE,
  N_MUTATIONS,
} Mutation;

static const char *mutation_names[] = { "flip", "truncate", "zero-pages", "hostile-value" };
static const char *seeds[] = { "leaky-steps.tide", "rss-toucher.tide", "leaky-steps-unfinished.tide" };

typedef struct
{
  GRand *rand;
  char  *dir;
  guint  outcomes[N_MUTATIONS][3];  /* ok, clean error, CLI checked */
} Run;

static GBytes *
read_seed (const char *name)
{
  g_autofree char *path = g_build_filename (TIDE_CORPUS_DIR, name, NULL);
  g_autofree char *contents = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  return g_bytes_new_take (g_steal_pointer (&contents), length);
}

static guint
page_size_of (const guint8 *bytes,
              gsize         length)
{
  guint size = length >= 18 ? ((guint) bytes[16] << 8) | bytes[17] : 0;

  return size == 1 ? 65536 : size >= 512 ? size : 512;
}

static void
flip_bits (GRand   *rand,
           guint8  *bytes,
           gsize    length,
           GString *what)
{
  guint n = g_rand_int_range (rand, 1, 17);

  g_string_append_printf (what, "%u bit flips at", n);
  for (guint i = 0; i < n; i++)
    {
      gsize at = g_rand_int_range (rand, 0, (gint32) length);
      bytes[at] ^= 1u << g_rand_int_range (rand, 0, 8);
      g_string_append_printf (what, " %zu", at);
    }
}

static gsize
truncate_bytes (GRand   *rand,
                gsize    length,
                guint    page_size,
                GString *what)
{
  /* Half at a page boundary, where a writer that died would stop. */
  gsize cut = g_rand_boolean (rand)
              ? (gsize) g_rand_int_range (rand, 0, (gint32) (length / page_size)) * page_size
              : (gsize) g_rand_int_range (rand, 0, (gint32) length);

  g_string_append_printf (what, "cut to %zu of %zu bytes", cut, length);
  return cut;
}

static void
zero_pages (GRand   *rand,
            guint8  *bytes,
            gsize    length,
            guint    page_size,
            GString *what)
{
  guint n = g_rand_int_range (rand, 1, 5);

  g_string_append_printf (what, "%u zeroed pages:", n);
  for (guint i = 0; i < n; i++)
    {
      gsize page = g_rand_int_range (rand, 0, (gint32) (length / page_size));
      memset (bytes + page * page_size, 0, page_size);
      g_string_append_printf (what, " %zu", page + 1);
    }
}

static void
exec_sql (sqlite3    *db,
          const char *sql)
{
  char *message = NULL;

  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

/* (table, column, without rowid) of every column of the trace. */
static GPtrArray *
list_columns (sqlite3 *db)
{
  GPtrArray *columns = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  sqlite3_stmt *stmt = NULL;

  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT m.name, p.name, m.sql LIKE '%WITHOUT ROWID%'"
                                       " FROM sqlite_schema m, pragma_table_info (m.name) p"
                                       " WHERE m.type = 'table' ORDER BY m.name, p.cid",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      char **column = g_new0 (char *, 4);
      for (int i = 0; i < 3; i++)
        column[i] = g_strdup ((const char *) sqlite3_column_text (stmt, i));
      g_ptr_array_add (columns, column);
    }
  sqlite3_finalize (stmt);
  return columns;
}

/* Values that no recording writes, each as an SQL literal; REAL, TEXT and
 * BLOB ones land in STRICT tables as well, as in a file edited by hand. */
static const char *hostile_values[] = {
  "9223372036854775807", "-9223372036854775808", "-1", "0", "2147483648", "9007199254740993",
  "1e308", "-1e308", "0.5", "'many'", "x'00ff'", "NULL",
};

static char *
table_sql (sqlite3    *db,
           const char *table)
{
  sqlite3_stmt *stmt = NULL;
  char *sql;

  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT sql FROM sqlite_schema WHERE name = ?1", -1,
                                       &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  sql = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  return sql;
}

static void
set_table_sql (const char *path,
               const char *table,
               const char *sql)
{
  sqlite3 *db = NULL;
  char *update;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  update = sqlite3_mprintf ("PRAGMA writable_schema = ON;"
                            "UPDATE sqlite_schema SET sql = %Q WHERE name = %Q;", sql, table);
  exec_sql (db, update);
  sqlite3_free (update);
  sqlite3_close (db);
}

/* Sets one column, in one row or in all, to a hostile value, with the
 * STRICT of its table lifted for the write and put back after it. */
static void
hostile_value (GRand      *rand,
               const char *path,
               GString    *what)
{
  g_autoptr(GPtrArray) columns = NULL;
  g_autofree char *original = NULL;
  g_autofree char *lifted = NULL;
  char **column;
  const char *value;
  char *where, *update;
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  columns = list_columns (db);
  column = g_ptr_array_index (columns, g_rand_int_range (rand, 0, (gint32) columns->len));
  value = hostile_values[g_rand_int_range (rand, 0, G_N_ELEMENTS (hostile_values))];
  original = table_sql (db, column[0]);
  sqlite3_close (db);
  where = column[2][0] == '0' && g_rand_boolean (rand)
          ? sqlite3_mprintf (" WHERE rowid = (SELECT rowid FROM \"%w\" LIMIT 1 OFFSET %d)",
                             column[0], g_rand_int_range (rand, 0, 8))
          : sqlite3_mprintf ("");
  g_string_append_printf (what, "%s.%s = %s in %s", column[0], column[1], value,
                          where[0] != '\0' ? "one row" : "every row");

  lifted = g_strdup (original);
  if (strstr (lifted, ") STRICT") != NULL)
    memcpy (strstr (lifted, ") STRICT"), ")       ", 8);
  set_table_sql (path, column[0], lifted);
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  update = sqlite3_mprintf ("UPDATE OR IGNORE \"%w\" SET \"%w\" = %s%s", column[0], column[1],
                            value, where);
  if (sqlite3_exec (db, update, NULL, NULL, NULL) != SQLITE_OK)
    {
      /* An INTEGER PRIMARY KEY holds integers only, whatever the file. */
      g_assert_cmpint (sqlite3_errcode (db), ==, SQLITE_MISMATCH);
      sqlite3_free (update);
      update = sqlite3_mprintf ("UPDATE OR IGNORE \"%w\" SET \"%w\" = %s%s", column[0],
                                column[1], hostile_values[0], where);
      exec_sql (db, update);
      g_string_append_printf (what, " (refused; %s instead)", hostile_values[0]);
    }
  sqlite3_free (update);
  sqlite3_free (where);
  sqlite3_close (db);
  set_table_sql (path, column[0], original);
}

/* Writes mutant @index of @seed to @path. */
static Mutation
write_mutant (Run        *run,
              GBytes     *seed,
              guint       index,
              const char *path,
              GString    *what)
{
  Mutation kind = index % N_MUTATIONS;
  gsize length = g_bytes_get_size (seed);
  g_autofree guint8 *bytes = g_memdup2 (g_bytes_get_data (seed, NULL), length);
  guint page_size = page_size_of (bytes, length);

  switch (kind)
    {
    case MUTATE_FLIP:
      flip_bits (run->rand, bytes, length, what);
      break;
    case MUTATE_TRUNCATE:
      length = truncate_bytes (run->rand, length, page_size, what);
      break;
    case MUTATE_ZERO_PAGES:
      zero_pages (run->rand, bytes, length, page_size, what);
      break;
    default:
      break;
    }
  g_assert_true (g_file_set_contents (path, (const char *) bytes, length, NULL));
  if (kind == MUTATE_HOSTILE_VALUE)
    hostile_value (run->rand, path, what);
  return kind;
}

/* This program, to exercise a mutant in a process of its own. */
static char *self_exe;

/* Exercises @path in a fresh process: this program started again with
 * --exercise, whose exit status is its TideExerciseResult.  Not a fork:
 * once check_cli() has run a command, this process has GLib's threads
 * (gmain, for the child watch, and a thread pool's), and a child forked
 * while one of them held a lock (GLib's, or the allocator's) waits on it
 * forever. */
static void
exercise_in_child (const char     *path,
                   const char     *png,
                   TideLimitedRun *run)
{
  const char *argv[] = { self_exe, "--exercise", path, png, NULL };

  tide_run_limited (argv, LIMIT_S, run);
  if (run->err[0] != '\0')
    g_printerr ("%s", run->err);
}

/* The --exercise side of exercise_in_child(). */
static int
exercise_main (const char *path,
               const char *png)
{
  g_autofree char *first_error = NULL;
  TideExerciseResult result = tide_exercise_trace (path, png, &first_error);

  if (result == TIDE_EXERCISE_BAD_ERROR)
    g_printerr ("# not one line: %s\n", first_error);
  return result;
}

/* `tidemark report` and `tidemark export` end with 0, or with 2 and one
 * line on stderr. */
static void
check_cli (const char *path,
           const char *dir,
           const char *what)
{
  g_autofree char *png = g_build_filename (dir, "cli.png", NULL);
  g_autofree char *csv = g_build_filename (dir, "cli.csv", NULL);
  const char *report[] = { TIDE_TIDEMARK_EXE, "report", path, "--steps", "--suspects",
                           "--retained", NULL };
  const char *export[] = { TIDE_TIDEMARK_EXE, "export", path, "--png", png, "--csv", csv, NULL };
  const char *const *commands[] = { report, export };

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_auto(TideLimitedRun) run = { 0 };

      tide_run_limited (commands[i], LIMIT_S, &run);
      if (run.timed_out || (run.status != 0 && run.status != 2) ||
          (run.status == 2 && (!g_str_has_prefix (run.err, "tidemark: ") ||
                               strchr (run.err, '\n') != run.err + strlen (run.err) - 1)))
        g_error ("tidemark %s of mutant (%s): %s, status %d, stderr: %s", commands[i][1], what,
                 run.timed_out ? "timed out" : "ended", run.status, run.err);
    }
  g_unlink (png);
  g_unlink (csv);
}

static void
run_mutant (Run      *run,
            GBytes   *seed,
            guint     index,
            gboolean  keep)
{
  g_autofree char *name = g_strdup_printf ("mutant-%03u.tide", index);
  g_autofree char *path = g_build_filename (run->dir, name, NULL);
  g_autofree char *png = g_build_filename (run->dir, "mutant.png", NULL);
  g_autoptr(GString) what = g_string_new (NULL);
  Mutation kind = write_mutant (run, seed, index, path, what);
  g_auto(TideLimitedRun) child = { 0 };

  exercise_in_child (path, png, &child);
  g_test_message ("mutant %u (%s, %s): %s in %.2f s", index,
                  seeds[index % G_N_ELEMENTS (seeds)], what->str,
                  child.timed_out ? "timed out" : child.status == TIDE_EXERCISE_OK ? "ok"
                  : child.status == TIDE_EXERCISE_CLEAN_ERROR ? "clean error" : "failed",
                  child.seconds);
  if (child.timed_out)
    g_error ("mutant %u (%s) ran past %d s: its reports, queries and PNG export did not end",
             index, what->str, LIMIT_S);
  if (child.status >= 128)
    g_error ("mutant %u (%s) died of signal %d", index, what->str, child.status - 128);
  if (child.status != TIDE_EXERCISE_OK && child.status != TIDE_EXERCISE_CLEAN_ERROR)
    g_error ("mutant %u (%s) ended with status %d", index, what->str, child.status);
  run->outcomes[kind][child.status == TIDE_EXERCISE_OK ? 0 : 1]++;
  if (index % 7 == 0)
    {
      check_cli (path, run->dir, what->str);
      run->outcomes[kind][2]++;
    }
  g_unlink (png);
  if (!keep)
    g_unlink (path);
}

/* The unmutated seeds answer every query. */
static void
test_seeds_answer (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tide_test_make_dir ("tide-seeds");
  g_autofree char *png = g_build_filename (dir, "seed.png", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (seeds); i++)
    {
      g_autofree char *path = g_build_filename (TIDE_CORPUS_DIR, seeds[i], NULL);
      g_autofree char *first_error = NULL;

      g_assert_cmpint (tide_exercise_trace (path, png, &first_error), ==, TIDE_EXERCISE_OK);
      g_assert_null (first_error);
    }
  g_unlink (png);
  g_rmdir (dir);
}

static void
test_mutations (void)
{
  g_autoptr(GError) error = NULL;
  const char *keep_dir = g_getenv ("TIDE_MUTATION_KEEP");
  const char *seed_env = g_getenv ("TIDE_MUTATION_SEED");
  guint32 seed = seed_env != NULL ? (guint32) g_ascii_strtoull (seed_env, NULL, 10) : 19;
  GBytes *seed_bytes[G_N_ELEMENTS (seeds)];
  Run run = { g_rand_new_with_seed (seed) };

  run.dir = keep_dir != NULL ? g_strdup (keep_dir) : tide_test_make_dir ("tide-mutants");
  g_assert_no_error (error);
  g_test_message ("seed %u, mutants in %s", seed, run.dir);
  for (guint i = 0; i < G_N_ELEMENTS (seeds); i++)
    seed_bytes[i] = read_seed (seeds[i]);
  for (guint i = 0; i < N_MUTANTS; i++)
    run_mutant (&run, seed_bytes[i % G_N_ELEMENTS (seeds)], i, keep_dir != NULL);

  for (guint k = 0; k < N_MUTATIONS; k++)
    {
      g_test_message ("%s: %u answered, %u clean errors, %u through the command",
                      mutation_names[k], run.outcomes[k][0], run.outcomes[k][1],
                      run.outcomes[k][2]);
      g_assert_cmpuint (run.outcomes[k][0] + run.outcomes[k][1], ==, N_MUTANTS / N_MUTATIONS);
    }
  /* Truncation and zeroed pages leave no trace whole: some must be
   * refused, or the mutations did not reach the file. */
  g_assert_cmpuint (run.outcomes[MUTATE_TRUNCATE][1], >, 0);
  g_assert_cmpuint (run.outcomes[MUTATE_ZERO_PAGES][1], >, 0);
  for (guint i = 0; i < G_N_ELEMENTS (seeds); i++)
    g_bytes_unref (seed_bytes[i]);
  if (keep_dir == NULL)
    g_rmdir (run.dir);
  g_free (run.dir);
  g_rand_free (run.rand);
}

/* A thread that keeps taking GLib's quark lock and the allocator's, as
 * GLib's worker thread does when a command's exit wakes it: the seeds
 * must still be exercised in bounded time beside it. */
static gpointer
take_locks_thread (gpointer user_data)
{
  volatile gint *stop = user_data;

  while (!g_atomic_int_get (stop))
    {
      g_free (g_malloc (64));
      (void) g_quark_try_string ("tide-mutations");
    }
  return NULL;
}

static void
test_exercise_beside_threads (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tide_test_make_dir ("tide-threads");
  g_autofree char *png = g_build_filename (dir, "seed.png", NULL);
  volatile gint stop = 0;
  GThread *thread = g_thread_new ("take-locks", take_locks_thread, (gpointer) &stop);

  for (guint i = 0; i < 4 * G_N_ELEMENTS (seeds); i++)
    {
      g_autofree char *path = g_build_filename (TIDE_CORPUS_DIR, seeds[i % G_N_ELEMENTS (seeds)],
                                                NULL);
      g_auto(TideLimitedRun) child = { 0 };

      exercise_in_child (path, png, &child);
      if (child.timed_out)
        g_error ("exercising %s beside a thread that takes locks ran past %d s: "
                 "the child waits on a lock that the fork left taken", path, LIMIT_S);
      g_assert_cmpint (child.status, ==, TIDE_EXERCISE_OK);
    }
  g_atomic_int_set (&stop, 1);
  g_thread_join (thread);
  g_unlink (png);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  if (argc == 4 && strcmp (argv[1], "--exercise") == 0)
    return exercise_main (argv[2], argv[3]);

  self_exe = g_file_read_link ("/proc/self/exe", NULL);
  g_assert_nonnull (self_exe);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hostile/seeds-answer", test_seeds_answer);
  g_test_add_func ("/hostile/exercise-beside-threads", test_exercise_beside_threads);
  g_test_add_func ("/hostile/mutations", test_mutations);
  return g_test_run ();
}
