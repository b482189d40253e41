/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <gio/gio.h>
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

/**
 * tide_output_name_resolve:
 *
 * The file that `-o @name` writes: a template expanded for this host,
 * process and rank.  A template is refused when its file exists already
 * (two ranks given the same name would overwrite each other's trace),
 * unless @force.
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

  if (!tide_output_name_is_template (name))
    return g_strdup (name);
  gethostname (host, sizeof host - 1);
  path = tide_output_name_expand (name, host, getpid (), tide_output_rank_from_env (), error);
  if (path == NULL)
    return NULL;
  if (!force && g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                   "%s exists already (from %s); --force replaces it", path, name);
      return NULL;
    }
  return g_steal_pointer (&path);
}
