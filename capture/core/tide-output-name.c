/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tide-output-name.h"

/* In the order launchers are most likely to be right: torchrun's own, then
 * SLURM's, Open MPI's and the PMI of MPICH and Intel MPI. */
static const char * const rank_variables[] = {
  "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
};

/* The rank of the first of the launchers' variables that is set and not
 * empty, or NULL. */
const char *
tide_output_rank_from_env (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (rank_variables); i++)
    {
      const char *value = g_getenv (rank_variables[i]);

      if (value != NULL && *value != '\0')
        return value;
    }
  return NULL;
}

gboolean
tide_output_name_is_template (const char *name)
{
  return strchr (name, '%') != NULL;
}

/* A rank goes into a file name: digits only, so that a variable set to
 * "../x" cannot move the trace elsewhere. */
static gboolean
rank_is_number (const char *rank)
{
  guint64 value;

  return g_ascii_string_to_unsigned (rank, 10, 0, G_MAXINT, &value, NULL);
}

/**
 * tide_output_name_expand:
 * @rank: (nullable): the launcher's rank; %NULL when none is set
 *
 * Returns: (transfer full): @name with %h, %p, %r and %% replaced, or
 *   %NULL with @error set for an unknown directive, or %r without a rank
 */
char *
tide_output_name_expand (const char  *name,
                         const char  *host,
                         gint64       pid,
                         const char  *rank,
                         GError     **error)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p != '%')
        {
          g_string_append_c (out, *p);
          continue;
        }
      switch (*++p)
        {
        case 'h':
          g_string_append (out, host);
          break;
        case 'p':
          g_string_append_printf (out, "%" G_GINT64_FORMAT, pid);
          break;
        case 'r':
          if (rank == NULL || !rank_is_number (rank))
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           rank == NULL ? "%s: %%r needs a rank, and none of RANK, SLURM_PROCID, "
                                          "OMPI_COMM_WORLD_RANK and PMI_RANK is set"
                                        : "%s: the rank '%s' is not a number", name, rank);
              return NULL;
            }
          g_string_append (out, rank);
          break;
        case '%':
          g_string_append_c (out, '%');
          break;
        default:
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "%s: unknown directive '%%%.1s' (%%h host, %%p pid, %%r rank, %%%% a "
                       "percent sign)", name, *p ? p : "");
          return NULL;
        }
      if (*p == '\0')
        break;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The files a trace at @path is made of while it is written. */
static const char * const trace_suffixes[] = { "", "-wal", "-shm" };

static gboolean
trace_files_exist (const char *path)
{
  for (guint i = 0; i < G_N_ELEMENTS (trace_suffixes); i++)
    {
      g_autofree char *name = g_strconcat (path, trace_suffixes[i], NULL);

      if (g_file_test (name, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        return TRUE;
    }
  return FALSE;
}

static void
remove_trace_files (const char *path)
{
  for (guint i = 0; i < G_N_ELEMENTS (trace_suffixes); i++)
    {
      g_autofree char *name = g_strconcat (path, trace_suffixes[i], NULL);

      unlink (name);
    }
}

/* Makes @path as an empty file, only if nothing is there: the name is
 * ours from then on, even against a recording started in the same
 * instant.  The writer keeps an empty file where it finds one. */
static gboolean
claim (const char  *path,
       GError     **error)
{
  int fd;

  if (trace_files_exist (path))
    {
      errno = EEXIST;
      fd = -1;
    }
  else
    fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  close (fd);
  return TRUE;
}

/**
 * tide_output_name_resolve:
 *
 * The file that `-o @name` writes, claimed (tide_output_name_release()
 * gives it back): a template is expanded for this host, process and rank.
 * A file that exists already, or the WAL of a trace still being written,
 * is refused unless @force: a recording never replaces another one that
 * nobody asked to lose.
 *
 * Returns: (transfer full): the path, or %NULL with @error set
 */
char *
tide_output_name_resolve (const char  *name,
                          gboolean     force,
                          GError     **error)
{
  char host[256] = "";
  g_autofree char *path = NULL;
  g_autoptr(GError) local = NULL;

  if (tide_output_name_is_template (name))
    {
      gethostname (host, sizeof host - 1);
      path = tide_output_name_expand (name, host, getpid (), tide_output_rank_from_env (), error);
      if (path == NULL)
        return NULL;
    }
  else
    path = g_strdup (name);
  if (force)
    remove_trace_files (path);
  if (claim (path, &local))
    return g_steal_pointer (&path);
  if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_EXISTS))
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                 "%s exists already; --force replaces it, or -o with %%p names each trace apart",
                 path);
  else
    g_propagate_error (error, g_steal_pointer (&local));
  return NULL;
}

/**
 * tide_output_name_unique:
 * @stem: the name without ".tide", as "train-20261205-101500"
 *
 * A new file named after @stem, claimed: "@stem.tide", else "@stem-2.tide",
 * "@stem-3.tide" and on, the first that nothing holds.  Two recordings
 * started in the same second get two traces.
 *
 * Returns: (transfer full): the path, or %NULL with @error set
 */
char *
tide_output_name_unique (const char  *stem,
                         GError     **error)
{
  for (guint i = 1; i <= 10000; i++)
    {
      g_autofree char *path = i == 1 ? g_strconcat (stem, ".tide", NULL)
                                     : g_strdup_printf ("%s-%u.tide", stem, i);
      g_autoptr(GError) local = NULL;

      if (claim (path, &local))
        return g_steal_pointer (&path);
      if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_EXISTS))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS, "%s.tide and 9999 more names exist already",
               stem);
  return NULL;
}

/**
 * tide_output_name_release:
 *
 * Gives back a name that tide_output_name_resolve() or
 * tide_output_name_unique() claimed, when nothing was written to it.
 */
void
tide_output_name_release (const char *path)
{
  struct stat st;

  if (path != NULL && lstat (path, &st) == 0 && S_ISREG (st.st_mode) && st.st_size == 0)
    unlink (path);
}
