/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-oom-watch.h"

#include "tide-kernel-log.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Limits at or above this are "no limit" (v1 writes PAGE_COUNTER_MAX in
 * bytes, a little under 2^63). */
#define NO_LIMIT (G_GINT64_CONSTANT (1) << 60)
/* How long a death waits for the kernel's log to name the OOM killer's
 * victims that its counters counted (tide_kernel_log_is_oom_victim()). */
#define VICTIM_PATIENCE_MS 1000

typedef struct
{
  TideOomScope  scope;    /* TIDE_OOM_CGROUP_V1 or _V2 */
  char         *dir;      /* the cgroup's directory */
} Cgroup;

struct _TideOomWatch
{
  char       *v1_memory_root;  /* where v1's memory controller is mounted, or NULL */
  char       *v2_root;         /* where cgroup2 is mounted, or NULL */
  char       *proc_root;
  gint64      machine_seen;    /* /proc/vmstat oom_kill, less the kills explained; -1 unreadable */
  GHashTable *cgroup_seen;     /* cgroup dir -> OOM kills counted there (gint64*) */
  GHashTable *process_cgroup;  /* pid -> cgroup dir, as it was when last read */
  TideKernelLog *log;          /* names the victims, where it can be read; else NULL */
  gint64      machine_at_start; /* /proc/vmstat oom_kill as the log was opened */
};

static void
cgroup_clear (Cgroup *cgroup)
{
  g_clear_pointer (&cgroup->dir, g_free);
}

static void
cgroup_free (Cgroup *cgroup)
{
  cgroup_clear (cgroup);
  g_free (cgroup);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Cgroup, cgroup_clear)

/* The number after "@key " on a line of @path, or -1. */
static gint64
read_keyed (const char *path,
            const char *key)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  gsize key_len = strlen (key);

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return -1;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strncmp (lines[i], key, key_len) == 0 && (lines[i][key_len] == ' ' || lines[i][key_len] == '\t'))
      return g_ascii_strtoll (lines[i] + key_len + 1, NULL, 10);
  return -1;
}

/* Mount points of the v1 memory controller and of cgroup2, from a
 * mountinfo file: "ID PARENT MAJ:MIN ROOT POINT OPTIONS... - TYPE SOURCE SUPER". */
static void
find_mounts (TideOomWatch *self,
             const char   *mountinfo)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents (mountinfo, &contents, NULL, NULL))
    return;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], " ", -1);
      guint n = g_strv_length (fields), dash = 0;

      for (guint j = 6; j < n && dash == 0; j++)
        if (g_str_equal (fields[j], "-"))
          dash = j;
      if (dash == 0 || dash + 3 >= n + 1 || dash + 1 >= n)
        continue;
      if (g_str_equal (fields[dash + 1], "cgroup2") && self->v2_root == NULL)
        self->v2_root = g_strcompress (fields[4]);
      else if (g_str_equal (fields[dash + 1], "cgroup") && dash + 3 < n &&
               self->v1_memory_root == NULL)
        {
          g_auto(GStrv) options = g_strsplit (fields[dash + 3], ",", -1);

          if (g_strv_contains ((const char * const *) options, "memory"))
            self->v1_memory_root = g_strcompress (fields[4]);
        }
    }
}

TideOomWatch *
tide_oom_watch_new (const char *mountinfo,
                    const char *proc_root)
{
  TideOomWatch *self = g_new0 (TideOomWatch, 1);
  g_autofree char *vmstat = NULL;

  self->proc_root = g_strdup (proc_root ? proc_root : "/proc");
  self->cgroup_seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->process_cgroup = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  find_mounts (self, mountinfo ? mountinfo : "/proc/self/mountinfo");
  vmstat = g_build_filename (self->proc_root, "vmstat", NULL);
  self->machine_seen = read_keyed (vmstat, "oom_kill");
  /* This machine's own log, not one for a layout that a test made. */
  if (mountinfo == NULL && proc_root == NULL)
    self->log = tide_kernel_log_open ();
  self->machine_at_start = self->machine_seen;
  return self;
}

void
tide_oom_watch_free (TideOomWatch *self)
{
  if (self == NULL)
    return;
  g_free (self->v1_memory_root);
  g_free (self->v2_root);
  g_free (self->proc_root);
  g_hash_table_unref (self->cgroup_seen);
  g_hash_table_unref (self->process_cgroup);
  g_clear_pointer (&self->log, tide_kernel_log_free);
  g_free (self);
}

/* @pid's memory cgroup: v1's memory controller where it is mounted, else
 * cgroup2's where it has the memory controller.  FALSE when neither. */
static gboolean
read_cgroup (TideOomWatch *self,
             int           pid,
             Cgroup       *out)
{
  g_autofree char *name = g_strdup_printf ("%s/%d/cgroup", self->proc_root, pid);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *v1 = NULL;
  g_autofree char *v2 = NULL;

  if (!g_file_get_contents (name, &contents, NULL, NULL))
    return FALSE;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (lines[i], ":", 3);

      if (g_strv_length (parts) != 3 || parts[2][0] != '/' || strstr (parts[2], "/..") != NULL)
        continue;
      if (g_str_equal (parts[0], "0") && parts[1][0] == '\0' && self->v2_root != NULL)
        v2 = g_build_filename (self->v2_root, parts[2], NULL);
      else if (self->v1_memory_root != NULL)
        {
          g_auto(GStrv) controllers = g_strsplit (parts[1], ",", -1);

          if (g_strv_contains ((const char * const *) controllers, "memory"))
            v1 = g_build_filename (self->v1_memory_root, parts[2], NULL);
        }
    }
  if (v1 != NULL)
    {
      out->scope = TIDE_OOM_CGROUP_V1;
      out->dir = g_steal_pointer (&v1);
      return TRUE;
    }
  if (v2 != NULL)
    {
      g_autofree char *events = g_build_filename (v2, "memory.events", NULL);

      if (!g_file_test (events, G_FILE_TEST_EXISTS))
        return FALSE;   /* no memory controller there */
      out->scope = TIDE_OOM_CGROUP_V2;
      out->dir = g_steal_pointer (&v2);
      return TRUE;
    }
  return FALSE;
}

/* OOM kills the kernel counted in @cgroup (v2: and below it), or -1. */
static gint64
read_cgroup_kills (const Cgroup *cgroup)
{
  g_autofree char *path = g_build_filename (cgroup->dir, cgroup->scope == TIDE_OOM_CGROUP_V1
                                                         ? "memory.oom_control" : "memory.events",
                                            NULL);

  return read_keyed (path, "oom_kill");
}

static gint64
read_cgroup_limit (TideOomWatch *self,
                   const Cgroup *cgroup)
{
  gint64 limit = G_MAXINT64;

  if (cgroup->scope == TIDE_OOM_CGROUP_V1)
    {
      g_autofree char *stat = g_build_filename (cgroup->dir, "memory.stat", NULL);
      gint64 value = read_keyed (stat, "hierarchical_memory_limit");

      return value > 0 && value < NO_LIMIT ? value : 0;
    }
  /* v2: the smallest memory.max from the cgroup up to the mount's root. */
  for (g_autofree char *dir = g_strdup (cgroup->dir);
       g_str_has_prefix (dir, self->v2_root) && strlen (dir) > strlen (self->v2_root);)
    {
      g_autofree char *max = g_build_filename (dir, "memory.max", NULL);
      g_autofree char *text = NULL;
      char *parent;

      if (g_file_get_contents (max, &text, NULL, NULL) && g_ascii_isdigit (text[0]))
        limit = MIN (limit, g_ascii_strtoll (text, NULL, 10));
      parent = g_path_get_dirname (dir);
      g_free (dir);
      dir = parent;
    }
  return limit > 0 && limit < NO_LIMIT ? limit : 0;
}

static gint64
read_machine_memory (TideOomWatch *self)
{
  g_autofree char *meminfo = g_build_filename (self->proc_root, "meminfo", NULL);
  gint64 kib = read_keyed (meminfo, "MemTotal:");

  return kib > 0 ? kib * 1024 : 0;
}

static void add_descendants (GPtrArray    *candidates,
                             TideOomScope  scope,
                             const char   *dir,
                             guint         depth);

/* Remembers how many OOM kills @cgroup counted so far, unless known. */
static void
note_cgroup (TideOomWatch *self,
             const Cgroup *cgroup)
{
  gint64 kills;

  if (g_hash_table_contains (self->cgroup_seen, cgroup->dir))
    return;
  kills = MAX (read_cgroup_kills (cgroup), 0);
  g_hash_table_insert (self->cgroup_seen, g_strdup (cgroup->dir), g_memdup2 (&kills, sizeof kills));
}

/* Its cgroup and those below it, as they are now: a kill counted in one of
 * them later is news, one counted before is not. */
void
tide_oom_watch_add_process (TideOomWatch *self,
                            int           pid)
{
  g_autoptr(GPtrArray) below = g_ptr_array_new_with_free_func ((GDestroyNotify) cgroup_free);
  g_auto(Cgroup) cgroup = { 0 };

  if (!read_cgroup (self, pid, &cgroup))
    return;
  if (!g_hash_table_contains (self->cgroup_seen, cgroup.dir))
    {
      note_cgroup (self, &cgroup);
      add_descendants (below, cgroup.scope, cgroup.dir, 0);
      for (guint i = 0; i < below->len; i++)
        note_cgroup (self, g_ptr_array_index (below, i));
    }
  g_hash_table_insert (self->process_cgroup, GINT_TO_POINTER (pid), g_steal_pointer (&cgroup.dir));
}

gint64
tide_oom_watch_read_limit (TideOomWatch *self,
                           int           pid,
                           TideOomScope *scope)
{
  g_auto(Cgroup) cgroup = { 0 };
  gint64 limit;

  if (read_cgroup (self, pid, &cgroup) && (limit = read_cgroup_limit (self, &cgroup)) > 0)
    {
      *scope = cgroup.scope;
      return limit;
    }
  *scope = TIDE_OOM_MACHINE;
  return read_machine_memory (self);
}

/* Whether @dir is the root of a cgroup hierarchy: what a zombie's
 * /proc/PID/cgroup names, as it has left its cgroup. */
static gboolean
is_mount_root (TideOomWatch *self,
               const char   *dir)
{
  g_autofree char *canonical = g_canonicalize_filename (dir, "/");

  return (self->v1_memory_root && g_str_equal (canonical, self->v1_memory_root)) ||
         (self->v2_root && g_str_equal (canonical, self->v2_root));
}

static void
add_candidate (GPtrArray    *candidates,
               TideOomScope  scope,
               const char   *dir)
{
  Cgroup *cgroup;

  for (guint i = 0; i < candidates->len; i++)
    if (g_str_equal (((Cgroup *) g_ptr_array_index (candidates, i))->dir, dir))
      return;
  cgroup = g_new0 (Cgroup, 1);
  cgroup->scope = scope;
  cgroup->dir = g_strdup (dir);
  g_ptr_array_add (candidates, cgroup);
}

/* Cgroups below @dir, a few levels deep: a process may have moved itself
 * into one after it started (a worker confined on its own), and once it
 * is dead /proc no longer says which. */
static void
add_descendants (GPtrArray    *candidates,
                 TideOomScope  scope,
                 const char   *dir,
                 guint         depth)
{
  g_autoptr(GDir) listing = depth < 3 && candidates->len < 256 ? g_dir_open (dir, 0, NULL) : NULL;
  const char *name;

  while (listing != NULL && (name = g_dir_read_name (listing)) != NULL && candidates->len < 256)
    {
      g_autofree char *child = g_build_filename (dir, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        {
          add_candidate (candidates, scope, child);
          add_descendants (candidates, scope, child, depth + 1);
        }
    }
}

static TideOomScope
scope_of_dir (TideOomWatch *self,
              const char   *dir)
{
  return self->v1_memory_root != NULL && g_str_has_prefix (dir, self->v1_memory_root)
         ? TIDE_OOM_CGROUP_V1 : TIDE_OOM_CGROUP_V2;
}

/* Where @pid's OOM kill may have been counted: the cgroup it is in now
 * (unless it reads as a hierarchy's root, as a zombie's does), the one it
 * was in when last read, and theirs below. */
static GPtrArray *
find_candidates (TideOomWatch *self,
                 int           pid)
{
  GPtrArray *candidates = g_ptr_array_new_with_free_func ((GDestroyNotify) cgroup_free);
  g_auto(Cgroup) now = { 0 };
  const char *known = g_hash_table_lookup (self->process_cgroup, GINT_TO_POINTER (pid));
  guint direct;

  if (read_cgroup (self, pid, &now) && !is_mount_root (self, now.dir))
    add_candidate (candidates, now.scope, now.dir);
  if (known != NULL)
    add_candidate (candidates, scope_of_dir (self, known), known);
  direct = candidates->len;
  for (guint i = 0; i < direct; i++)
    {
      Cgroup *cgroup = g_ptr_array_index (candidates, i);
      g_autofree char *dir = g_strdup (cgroup->dir);

      add_descendants (candidates, cgroup->scope, dir, 0);
    }
  return candidates;
}

/* Takes one OOM kill that @cgroup counted and no death was credited with
 * yet; FALSE when there is none. */
static gboolean
take_cgroup_kill (TideOomWatch *self,
                  const Cgroup *cgroup)
{
  gint64 kills = read_cgroup_kills (cgroup);
  gint64 *seen = g_hash_table_lookup (self->cgroup_seen, cgroup->dir);

  /* A cgroup first met now counts from its creation. */
  if (kills <= (seen ? *seen : 0))
    return FALSE;
  if (seen != NULL)
    (*seen)++;
  else
    {
      gint64 one = 1;

      g_hash_table_insert (self->cgroup_seen, g_strdup (cgroup->dir), g_memdup2 (&one, sizeof one));
    }
  return TRUE;
}

/* OOM kills the machine counted so far (/proc/vmstat), or -1. */
static gint64
read_machine_kills (TideOomWatch *self)
{
  g_autofree char *vmstat = g_build_filename (self->proc_root, "vmstat", NULL);

  return read_keyed (vmstat, "oom_kill");
}

/* The counters alone: a SIGKILL is an OOM kill when the machine counted
 * one since the last explained, at the limit of the first cgroup of
 * @pid's that counted one, else the machine's. */
static void
explain_by_counters (TideOomWatch   *self,
                     int             pid,
                     TideProcessEnd *end)
{
  g_autoptr(GPtrArray) candidates = NULL;
  gint64 machine;

  /* The machine's count gates every answer: no OOM kill anywhere since
   * the last one explained, no OOM kill here.  The kernel counts before
   * it sends the SIGKILL, so the count is there by the victim's end. */
  machine = read_machine_kills (self);
  if (machine < 0 || self->machine_seen < 0 || machine <= self->machine_seen)
    return;
  self->machine_seen++;
  candidates = find_candidates (self, pid);
  for (guint i = 0; i < candidates->len; i++)
    {
      const Cgroup *cgroup = g_ptr_array_index (candidates, i);

      if (!take_cgroup_kill (self, cgroup))
        continue;
      end->limit_bytes = read_cgroup_limit (self, cgroup);
      end->oom = end->limit_bytes > 0 ? cgroup->scope : TIDE_OOM_MACHINE;
      break;
    }
  if (end->oom == TIDE_OOM_NONE)
    end->oom = TIDE_OOM_MACHINE;
  if (end->oom == TIDE_OOM_MACHINE)
    end->limit_bytes = read_machine_memory (self);
}

/* Where the kernel named the OOM killer's victim (attach's
 * oom:mark_victim, record's kernel log): a victim killed by SIGKILL is an
 * OOM kill whatever the counters say, at its cgroup's limit where one
 * applies, else the machine's; a SIGKILL of a process that was not the
 * victim is none, even when another process's OOM kill moved the same
 * counters. */
static void
explain_victim (TideOomWatch   *self,
                int             pid,
                gboolean        victim,
                TideProcessEnd *end)
{
  g_autoptr(GPtrArray) candidates = NULL;

  if (!victim)
    return;
  explain_by_counters (self, pid, end);
  if (end->oom != TIDE_OOM_NONE && end->oom != TIDE_OOM_MACHINE)
    return;
  /* The counters missed it, or found no cgroup that counted it: the
   * first limit of the cgroups it started in says which (a dead
   * process's /proc/PID/cgroup names the root). */
  candidates = find_candidates (self, pid);
  for (guint i = 0; i < candidates->len; i++)
    {
      const Cgroup *cgroup = g_ptr_array_index (candidates, i);
      gint64 limit = read_cgroup_limit (self, cgroup);

      if (limit > 0)
        {
          end->oom = cgroup->scope;
          end->limit_bytes = limit;
          return;
        }
    }
  end->oom = TIDE_OOM_MACHINE;
  end->limit_bytes = read_machine_memory (self);
}

void
tide_oom_watch_explain_victim (TideOomWatch   *self,
                               int             pid,
                               gboolean        victim,
                               TideProcessEnd *end)
{
  if (end->kind == TIDE_END_SIGNALED && end->signal == SIGKILL)
    explain_victim (self, pid, victim, end);
}

void
tide_oom_watch_explain (TideOomWatch   *self,
                        int             pid,
                        TideProcessEnd *end)
{
  gint64 kills;

  if (end->kind != TIDE_END_SIGNALED || end->signal != SIGKILL)
    return;
  if (self->log == NULL)
    {
      explain_by_counters (self, pid, end);
      return;
    }
  kills = read_machine_kills (self) - self->machine_at_start;
  explain_victim (self, pid,
                  self->machine_at_start >= 0 && kills > 0 &&
                  tide_kernel_log_is_oom_victim (self->log, pid, kills, VICTIM_PATIENCE_MS),
                  end);
}
