/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-trace-diff.c: two traces compared step by step.
 *
 * Sampling noise.  A sampled trace estimates N bytes of small blocks with a
 * variance of about S * N (S: the mean bytes between samples; blocks of S
 * bytes or more are always recorded and add none).  Two independent runs
 * estimating a and b therefore differ by chance with a standard deviation
 * of sqrt (S_before * |b| + S_after * |a|); a difference counts only beyond
 * four of those, so that a comparison of two runs of one program stays
 * quiet over hundreds of numbers.  With --all (S = 0) every byte counts.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tide-trace-diff.h"
#include "tide-report-private.h"
#include "tide-saturate.h"
#include "tide-sorted.h"

#define NOISE_SIGMAS 4.0

const char *
tide_suspect_change_name (TideSuspectChange change)
{
  static const char *names[] = { "gone", "new", "changed", "unchanged" };

  g_return_val_if_fail (change <= TIDE_SUSPECT_UNCHANGED, "");
  return names[change];
}

const char *
tide_match_kind_name (TideMatchKind match)
{
  static const char *names[] = { "none", "stack", "headline" };

  g_return_val_if_fail (match <= TIDE_MATCH_HEADLINE, "");
  return names[match];
}

void
tide_trace_diff_free (TideTraceDiff *diff)
{
  if (diff == NULL)
    return;
  g_free (diff->before_path);
  g_free (diff->after_path);
  g_clear_pointer (&diff->steps, g_ptr_array_unref);
  g_clear_pointer (&diff->suspects, g_ptr_array_unref);
  g_clear_pointer (&diff->retained, g_ptr_array_unref);
  g_clear_pointer (&diff->before_steps, g_ptr_array_unref);
  g_clear_pointer (&diff->after_steps, g_ptr_array_unref);
  g_clear_pointer (&diff->before_suspects, g_ptr_array_unref);
  g_clear_pointer (&diff->after_suspects, g_ptr_array_unref);
  g_clear_pointer (&diff->before_processes, g_ptr_array_unref);
  g_clear_pointer (&diff->after_processes, g_ptr_array_unref);
  g_free (diff);
}

static void
diff_retained_free (TideDiffRetained *r)
{
  g_free (r->name);
  g_free (r);
}

gint64
tide_trace_diff_noise (const TideTraceDiff *diff,
                       gint64               before_bytes,
                       gint64               after_bytes)
{
  double variance = (double) diff->before_sample_bytes * fabs ((double) before_bytes) +
                    (double) diff->after_sample_bytes * fabs ((double) after_bytes);

  return tide_sat_from_double (ceil (NOISE_SIGMAS * sqrt (variance)));
}

gboolean
tide_trace_diff_beyond_noise (const TideTraceDiff *diff,
                              gint64               before_bytes,
                              gint64               after_bytes)
{
  double d = fabs ((double) after_bytes - (double) before_bytes);

  return d > (double) tide_trace_diff_noise (diff, before_bytes, after_bytes);
}

guint
tide_trace_diff_count (const TideTraceDiff *diff,
                       TideSuspectChange    change)
{
  guint n = 0;

  for (guint i = 0; i < diff->suspects->len; i++)
    n += ((TideDiffSuspect *) g_ptr_array_index (diff->suspects, i))->change == change;
  return n;
}

/* Numbers of the sampled kinds (heap, retained, device) that differ
 * beyond noise, over every aligned step and every stack or scope live at
 * the end, plus every suspect that is not unchanged.  RSS is not among
 * them: it is measured, not sampled, and has no noise model. */
guint
tide_trace_diff_count_differences (const TideTraceDiff *diff)
{
  guint n = diff->suspects->len - tide_trace_diff_count (diff, TIDE_SUSPECT_UNCHANGED);

  for (guint i = 0; i < diff->steps->len; i++)
    {
      TideDiffStep *s = g_ptr_array_index (diff->steps, i);

      if (s->before == NULL || s->after == NULL)
        {
          n++;
          continue;
        }
      n += tide_trace_diff_beyond_noise (diff, s->before->heap_delta, s->after->heap_delta);
      n += tide_trace_diff_beyond_noise (diff, s->before->retained_bytes,
                                         s->after->retained_bytes);
      n += tide_trace_diff_beyond_noise (diff, s->before->device_delta, s->after->device_delta);
    }
  for (guint i = 0; i < diff->retained->len; i++)
    {
      TideDiffRetained *r = g_ptr_array_index (diff->retained, i);

      n += r->beyond_noise;
    }
  return n;
}

/* ---- the processes compared ------------------------------------------------- */

static TideProcess *
pick_process (TideTrace              *trace,
              GPtrArray              *processes,
              const TideProcessSpec  *spec,
              GError                **error)
{
  gint64 id = tide_report_pick_process (trace, spec, error);

  if (id == 0)
    {
      if (error != NULL && *error == NULL)
        g_set_error (error, TIDE_STORAGE_ERROR, TIDE_STORAGE_ERROR_NOT_FOUND,
                     "%s has no process", tide_trace_get_path (trace));
      return NULL;
    }
  return tide_processes_find (processes, id);
}

/* The process of AFTER that plays the part @before played: the same label
 * ("rank 1", "DataLoader worker 0", the command), preferring one that
 * marked steps. */
static TideProcess *
find_counterpart (GPtrArray         *processes,
                  const TideProcess *before)
{
  TideProcess *best = NULL;

  for (guint i = 0; i < processes->len; i++)
    {
      TideProcess *p = g_ptr_array_index (processes, i);

      if (p->role == before->role && p->dist_rank == before->dist_rank &&
          p->worker == before->worker &&
          (before->role != TIDE_ROLE_COMMAND || g_strcmp0 (p->label, before->label) == 0) &&
          (best == NULL || (p->has_steps && !best->has_steps)))
        best = p;
    }
  return best;
}

static char *
program_name (const TideProcess *process)
{
  const char *space = strchr (process->command, ' ');

  return space ? g_strndup (process->command, space - process->command)
               : g_strdup (process->command);
}

static gboolean
diff_pick_processes (TideTraceDiff          *diff,
                     TideTrace              *before,
                     TideTrace              *after,
                     const TideProcessSpec  *before_spec,
                     const TideProcessSpec  *after_spec,
                     GError                **error)
{
  g_autofree char *before_program = NULL;
  g_autofree char *after_program = NULL;

  if ((diff->before_processes = tide_trace_list_processes (before, error)) == NULL ||
      (diff->after_processes = tide_trace_list_processes (after, error)) == NULL)
    return FALSE;
  diff->before_process = pick_process (before, diff->before_processes, before_spec, error);
  if (diff->before_process == NULL)
    return FALSE;
  if (after_spec == NULL)
    diff->after_process = find_counterpart (diff->after_processes, diff->before_process);
  if (diff->after_process == NULL)
    diff->after_process = pick_process (after, diff->after_processes, after_spec, error);
  if (diff->after_process == NULL)
    return FALSE;
  before_program = program_name (diff->before_process);
  after_program = program_name (diff->after_process);
  diff->same_program = g_str_equal (before_program, after_program);
  return TRUE;
}

/* ---- steps -------------------------------------------------------------------- */

typedef void (*KeepFunc) (GPtrArray  *rows,
                          GHashTable *process_ids);

/* The rows of a report, @rows (NULL when it failed), of @process_id
 * alone: @keep is the report's own filter. */
static GPtrArray *
keep_process (GPtrArray *rows,
              gint64     process_id,
              KeepFunc   keep)
{
  g_autoptr(GHashTable) ids = g_hash_table_new (g_int64_hash, g_int64_equal);

  if (rows == NULL)
    return NULL;
  g_hash_table_add (ids, &process_id);
  keep (rows, ids);
  return rows;
}

static GPtrArray *
process_steps (TideTrace    *trace,
               gint64        process_id,
               GError      **error)
{
  return keep_process (tide_report_steps (trace, error), process_id, tide_report_keep_steps);
}

static gboolean
all_labelled (GPtrArray *rows)
{
  for (guint i = 0; i < rows->len; i++)
    if (((TideStepRow *) g_ptr_array_index (rows, i))->label[0] == '\0')
      return FALSE;
  return rows->len > 0;
}

static void
add_step (TideTraceDiff *diff,
          TideStepRow   *before,
          TideStepRow   *after)
{
  TideDiffStep *s = g_new0 (TideDiffStep, 1);

  s->before = before;
  s->after = after;
  g_ptr_array_add (diff->steps, s);
}

static void
align_by_number (TideTraceDiff *diff)
{
  guint i = 0, j = 0;
  GPtrArray *b = diff->before_steps, *a = diff->after_steps;

  while (i < b->len || j < a->len)
    {
      TideStepRow *x = i < b->len ? g_ptr_array_index (b, i) : NULL;
      TideStepRow *y = j < a->len ? g_ptr_array_index (a, j) : NULL;

      if (x != NULL && y != NULL && x->number == y->number)
        {
          add_step (diff, x, y);
          i++, j++;
        }
      else if (y == NULL || (x != NULL && x->number < y->number))
        add_step (diff, x, NULL), i++;
      else
        add_step (diff, NULL, y), j++;
    }
}

/* The k-th step labelled "epoch 2" of BEFORE with the k-th of AFTER; the
 * steps of AFTER that found no partner come last, in their order. */
static void
align_by_label (TideTraceDiff *diff)
{
  GPtrArray *b = diff->before_steps, *a = diff->after_steps;
  g_autofree gboolean *used = g_new0 (gboolean, a->len + 1);

  for (guint i = 0; i < b->len; i++)
    {
      TideStepRow *x = g_ptr_array_index (b, i);
      TideStepRow *partner = NULL;

      for (guint j = 0; j < a->len && partner == NULL; j++)
        if (!used[j] && g_str_equal (x->label, ((TideStepRow *) g_ptr_array_index (a, j))->label))
          {
            used[j] = TRUE;
            partner = g_ptr_array_index (a, j);
          }
      add_step (diff, x, partner);
    }
  for (guint j = 0; j < a->len; j++)
    if (!used[j])
      add_step (diff, NULL, g_ptr_array_index (a, j));
}

static gboolean
diff_steps (TideTraceDiff  *diff,
            TideTrace      *before,
            TideTrace      *after,
            GError        **error)
{
  if ((diff->before_steps = process_steps (before, diff->before_process->id, error)) == NULL ||
      (diff->after_steps = process_steps (after, diff->after_process->id, error)) == NULL)
    return FALSE;
  diff->steps = g_ptr_array_new_with_free_func (g_free);
  diff->align = all_labelled (diff->before_steps) && all_labelled (diff->after_steps)
                ? TIDE_DIFF_ALIGN_LABEL : TIDE_DIFF_ALIGN_NUMBER;
  if (diff->align == TIDE_DIFF_ALIGN_LABEL)
    align_by_label (diff);
  else
    align_by_number (diff);
  return TRUE;
}

static gint
compare_pair_start (gconstpointer a,
                    gconstpointer b)
{
  gint64 x = ((const TideStepPair *) a)->before_start, y = ((const TideStepPair *) b)->before_start;

  return (x > y) - (x < y);
}

/**
 * tide_trace_diff_step_pairs:
 *
 * Returns: (transfer full) (element-type TideStepPair): the steps that both
 *   runs have, as the diff aligned them, by their start in BEFORE
 */
GArray *
tide_trace_diff_step_pairs (const TideTraceDiff *diff)
{
  GArray *pairs = g_array_new (FALSE, FALSE, sizeof (TideStepPair));

  for (guint i = 0; i < diff->steps->len; i++)
    {
      const TideDiffStep *s = g_ptr_array_index (diff->steps, i);
      TideStepPair pair;

      if (s->before == NULL || s->after == NULL)
        continue;
      pair.before_start = s->before->start_ns;
      pair.before_end = tide_sat_add (s->before->start_ns, s->before->duration_ns);
      pair.after_start = s->after->start_ns;
      pair.after_end = tide_sat_add (s->after->start_ns, s->after->duration_ns);
      g_array_append_val (pairs, pair);
    }
  g_array_sort (pairs, compare_pair_start);
  return pairs;
}

/* The last pair that starts at or before @t, or -1. */
static gint
pair_before (const TideStepPair *pairs,
             guint               n_pairs,
             gint64              t)
{
  return (gint) tide_sorted_count_at_most (pairs, n_pairs, sizeof (TideStepPair),
                                           G_STRUCT_OFFSET (TideStepPair, before_start), t) - 1;
}

/**
 * tide_step_pairs_map:
 * @pairs: (array length=n_pairs): from tide_trace_diff_step_pairs()
 *
 * The time of AFTER that stands where @t stands in BEFORE: inside an
 * aligned step, at the same fraction of AFTER's step (so step N of AFTER
 * is drawn over step N of BEFORE however long each took); outside one, as
 * far from the nearest aligned step's edge (the end of the one before,
 * else the start of the first); without aligned steps, @t itself.
 */
gint64
tide_step_pairs_map (const TideStepPair *pairs,
                     guint               n_pairs,
                     gint64              t)
{
  gint i = pair_before (pairs, n_pairs, t);
  const TideStepPair *p;
  double fraction;

  if (n_pairs == 0)
    return t;
  if (i < 0)
    return tide_sat_add (pairs[0].after_start, tide_sat_sub (t, pairs[0].before_start));
  p = &pairs[i];
  if (t >= p->before_end)
    return tide_sat_add (p->after_end, tide_sat_sub (t, p->before_end));
  /* In doubles: a damaged trace's spans may be as wide as gint64 allows. */
  fraction = ((double) t - (double) p->before_start) /
             MAX ((double) p->before_end - (double) p->before_start, 1.0);
  /* Rounded down, so that a time inside the step stays inside AFTER's. */
  return tide_sat_add (p->after_start,
                       tide_sat_from_double (floor (fraction * ((double) p->after_end -
                                                                (double) p->after_start))));
}

/* ---- stacks by what they say, not by their ids ------------------------------------ */

/* A stack as text that two builds of one program share: each frame by
 * function, file and line where known, by module and offset otherwise. */
static char *
stack_signature (const TideGroup *group)
{
  g_autoptr(GString) key = g_string_new (NULL);

  g_string_append_printf (key, "%d|", group->device);
  if (group->frames == NULL || group->frames->len == 0)
    {
      g_string_append_printf (key, "scope:%s", group->scope_path ? group->scope_path : "");
      return g_string_free (g_steal_pointer (&key), FALSE);
    }
  for (guint i = 0; i < group->frames->len; i++)
    {
      const TideFrame *f = g_ptr_array_index (group->frames, i);
      g_autofree char *module = f->module ? g_path_get_basename (f->module) : NULL;

      if (f->function != NULL)
        g_string_append_printf (key, "%d:%s:%s:%d;", f->kind, f->function,
                                f->file ? f->file : "", f->line);
      else
        g_string_append_printf (key, "%d:%s+%" G_GINT64_FORMAT ";", f->kind,
                                module ? module : "", f->module_offset);
    }
  return g_string_free (g_steal_pointer (&key), FALSE);
}

/* What still names a stack when another build moved its addresses and
 * lines: its headline function (else its description) and its scope. */
static char *
headline_signature (const TideGroup *group)
{
  const TideFrame *headline = group->frames ? tide_group_get_headline (group) : NULL;
  g_autofree char *described = headline ? tide_frame_describe (headline) : NULL;
  const char *name = headline && headline->function ? headline->function : described;

  return g_strdup_printf ("%d|%s|%s", group->device, name ? name : "",
                          group->scope_path ? group->scope_path : "");
}

/**
 * tide_group_signature:
 *
 * Returns: (transfer full): what names @group's stack (or scope) in any
 *   run of the program: the key by which the diff pairs stacks
 */
char *
tide_group_signature (const TideGroup *group)
{
  return stack_signature (group);
}

/**
 * tide_trace_diff_step_retained:
 * @after: the trace that @diff's AFTER came from
 * @before_step: a step number of BEFORE's process
 *
 * What AFTER's step aligned with @before_step retained at its end, by
 * stack (`tidemark report --retained --step N` of AFTER's process), keyed
 * by tide_group_signature(), for the app's drill-down to pair its rows.
 *
 * Returns: (transfer full) (nullable): signature -> gint64* bytes; %NULL
 *   with @error set on a query's failure, or without when AFTER has no
 *   step aligned with @before_step
 */
GHashTable *
tide_trace_diff_step_retained (const TideTraceDiff *diff,
                               TideTrace           *after,
                               gint                 before_step,
                               GError             **error)
{
  g_autoptr(GHashTable) ids = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr(GPtrArray) groups = NULL;
  GHashTable *by_key;
  const TideStepRow *aligned = NULL;

  for (guint i = 0; i < diff->steps->len && aligned == NULL; i++)
    {
      const TideDiffStep *s = g_ptr_array_index (diff->steps, i);

      if (s->before != NULL && s->before->number == before_step)
        aligned = s->after;
    }
  if (aligned == NULL)
    return NULL;
  if ((groups = tide_report_retained (after, aligned->number, TIDE_GROUP_BY_STACK, error)) == NULL)
    return NULL;
  g_hash_table_add (ids, &diff->after_process->id);
  tide_report_keep_groups (groups, ids);
  by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; i < groups->len; i++)
    {
      const TideGroup *g = g_ptr_array_index (groups, i);
      char *key = stack_signature (g);
      gint64 *bytes = g_hash_table_lookup (by_key, key);

      if (bytes == NULL)
        {
          bytes = g_new0 (gint64, 1);
          g_hash_table_insert (by_key, key, bytes);
        }
      else
        g_free (key);
      *bytes = tide_sat_add (*bytes, g->bytes);
    }
  return by_key;
}

/* ---- suspects ------------------------------------------------------------------------ */

static GPtrArray *
process_suspects (TideTrace   *trace,
                  gint64       process_id,
                  TideGroupBy  by,
                  GError     **error)
{
  return keep_process (tide_report_suspects (trace, by, error), process_id,
                       tide_report_keep_groups);
}

typedef char *(*SignatureFunc) (const TideGroup *group);

/* Pairs each unpaired suspect of BEFORE with the first unpaired one of
 * AFTER of the same @signature. */
static void
match_suspects (TideTraceDiff *diff,
                TideGroup    **partners,
                gboolean      *after_used,
                SignatureFunc  signature,
                TideMatchKind *kinds,
                TideMatchKind  kind)
{
  g_autoptr(GHashTable) by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  /* Inserted last to first: the first of equal keys wins. */
  for (guint j = diff->after_suspects->len; j-- > 0;)
    if (!after_used[j])
      g_hash_table_insert (by_key, signature (g_ptr_array_index (diff->after_suspects, j)),
                           GUINT_TO_POINTER (j + 1));
  for (guint i = 0; i < diff->before_suspects->len; i++)
    {
      g_autofree char *key = NULL;
      guint j;

      if (partners[i] != NULL)
        continue;
      key = signature (g_ptr_array_index (diff->before_suspects, i));
      j = GPOINTER_TO_UINT (g_hash_table_lookup (by_key, key));
      if (j == 0 || after_used[j - 1])
        continue;
      after_used[j - 1] = TRUE;
      partners[i] = g_ptr_array_index (diff->after_suspects, j - 1);
      kinds[i] = kind;
    }
}

static void
add_suspect (TideTraceDiff     *diff,
             TideSuspectChange  change,
             TideMatchKind      match,
             TideGroup         *before,
             TideGroup         *after)
{
  TideDiffSuspect *s = g_new0 (TideDiffSuspect, 1);

  *s = (TideDiffSuspect) { change, match, before, after };
  g_ptr_array_add (diff->suspects, s);
}

/* By growth per step: a run that starts leaking a step later (a warm-up
 * step dropped) has the same leak. */
static TideSuspectChange
suspect_change (const TideTraceDiff *diff,
                const TideGroup     *before,
                const TideGroup     *after)
{
  gint64 b = tide_sat_from_double (before->bytes_per_step);
  gint64 a = tide_sat_from_double (after->bytes_per_step);

  return tide_trace_diff_beyond_noise (diff, b, a) ? TIDE_SUSPECT_CHANGED
                                                   : TIDE_SUSPECT_UNCHANGED;
}

static gboolean
diff_suspects (TideTraceDiff  *diff,
               TideTrace      *before,
               TideTrace      *after,
               GError        **error)
{
  g_autofree TideGroup **partners = NULL;
  g_autofree TideMatchKind *kinds = NULL;
  g_autofree gboolean *after_used = NULL;
  TideSuspectChange order[] = { TIDE_SUSPECT_GONE, TIDE_SUSPECT_NEW, TIDE_SUSPECT_CHANGED,
                                TIDE_SUSPECT_UNCHANGED };

  diff->before_suspects = process_suspects (before, diff->before_process->id, diff->by, error);
  if (diff->before_suspects == NULL)
    return FALSE;
  diff->after_suspects = process_suspects (after, diff->after_process->id, diff->by, error);
  if (diff->after_suspects == NULL)
    return FALSE;
  partners = g_new0 (TideGroup *, diff->before_suspects->len + 1);
  kinds = g_new0 (TideMatchKind, diff->before_suspects->len + 1);
  after_used = g_new0 (gboolean, diff->after_suspects->len + 1);
  match_suspects (diff, partners, after_used, stack_signature, kinds, TIDE_MATCH_STACK);
  match_suspects (diff, partners, after_used, headline_signature, kinds, TIDE_MATCH_HEADLINE);

  diff->suspects = g_ptr_array_new_with_free_func (g_free);
  /* Listed by kind of change, each kind in the order of its run's ranking. */
  for (guint k = 0; k < G_N_ELEMENTS (order); k++)
    {
      for (guint i = 0; i < diff->before_suspects->len && order[k] != TIDE_SUSPECT_NEW; i++)
        {
          TideGroup *b = g_ptr_array_index (diff->before_suspects, i);
          TideSuspectChange change = TIDE_SUSPECT_GONE;

          if (partners[i] != NULL)
            change = suspect_change (diff, b, partners[i]);
          if (change == order[k])
            add_suspect (diff, change, kinds[i], b, partners[i]);
        }
      for (guint j = 0; j < diff->after_suspects->len && order[k] == TIDE_SUSPECT_NEW; j++)
        if (!after_used[j])
          add_suspect (diff, TIDE_SUSPECT_NEW, TIDE_MATCH_NONE, NULL,
                       g_ptr_array_index (diff->after_suspects, j));
    }
  return TRUE;
}

/* ---- retained at the end --------------------------------------------------------------- */

static gboolean
add_retained (GHashTable  *by_key,
              GPtrArray   *order,
              TideTrace   *trace,
              gint64       process_id,
              TideGroupBy  by,
              gboolean     is_after,
              GError     **error)
{
  g_autoptr(GPtrArray) groups = tide_report_retained (trace, 0, by, error);
  g_autoptr(GHashTable) ids = g_hash_table_new (g_int64_hash, g_int64_equal);

  if (groups == NULL)
    return FALSE;
  g_hash_table_add (ids, &process_id);
  tide_report_keep_groups (groups, ids);
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);
      g_autofree char *key = stack_signature (g);
      TideDiffRetained *r = g_hash_table_lookup (by_key, key);

      if (r == NULL)
        {
          r = g_new0 (TideDiffRetained, 1);
          r->name = tide_group_describe_headline (g);
          if (g->device >= 0)
            {
              char *named = g_strdup_printf ("%s [cuda:%d]", r->name, g->device);
              g_free (r->name);
              r->name = named;
            }
          g_hash_table_insert (by_key, g_steal_pointer (&key), r);
          g_ptr_array_add (order, r);
        }
      if (is_after)
        {
          r->after_bytes += g->bytes;
          r->after_count += g->count;
        }
      else
        {
          r->before_bytes += g->bytes;
          r->before_count += g->count;
        }
    }
  return TRUE;
}

static gint
compare_retained (gconstpointer a,
                  gconstpointer b)
{
  const TideDiffRetained *x = *(TideDiffRetained **) a, *y = *(TideDiffRetained **) b;
  double dx = fabs ((double) x->after_bytes - (double) x->before_bytes);
  double dy = fabs ((double) y->after_bytes - (double) y->before_bytes);

  if (x->beyond_noise != y->beyond_noise)
    return x->beyond_noise ? -1 : 1;
  if (dx != dy)
    return dx > dy ? -1 : 1;
  if (x->before_bytes != y->before_bytes)
    return x->before_bytes > y->before_bytes ? -1 : 1;
  return g_strcmp0 (x->name, y->name);
}

static gboolean
diff_retained (TideTraceDiff  *diff,
               TideTrace      *before,
               TideTrace      *after,
               GError        **error)
{
  g_autoptr(GHashTable) by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  diff->retained = g_ptr_array_new_with_free_func ((GDestroyNotify) diff_retained_free);
  if (!add_retained (by_key, diff->retained, before, diff->before_process->id, diff->by, FALSE,
                     error) ||
      !add_retained (by_key, diff->retained, after, diff->after_process->id, diff->by, TRUE,
                     error))
    return FALSE;
  /* What differs beyond sampling noise leads; a hundred rows of noise
   * must not push it out of sight. */
  for (guint i = 0; i < diff->retained->len; i++)
    {
      TideDiffRetained *r = g_ptr_array_index (diff->retained, i);

      r->beyond_noise = tide_trace_diff_beyond_noise (diff, r->before_bytes, r->after_bytes);
    }
  g_ptr_array_sort (diff->retained, compare_retained);
  return TRUE;
}

/* ---- the diff ------------------------------------------------------------------------- */

static gint64
trace_sample_bytes (TideTrace *trace)
{
  g_autofree char *all = tide_trace_dup_meta (trace, "all_mode");
  g_autofree char *bytes = tide_trace_dup_meta (trace, "sample_bytes");

  if (all != NULL && g_strcmp0 (all, "0") != 0)
    return 0;
  return bytes != NULL ? MAX (0, g_ascii_strtoll (bytes, NULL, 10)) : 0;
}

/**
 * tide_trace_diff_new:
 * @before_spec: (nullable): the process of BEFORE; %NULL: the one the app opens on
 * @after_spec: (nullable): the process of AFTER; %NULL: the one of BEFORE's role
 *   and rank, else the one the app opens on
 *
 * Returns: (transfer full): the comparison, or %NULL with @error set
 */
TideTraceDiff *
tide_trace_diff_new (TideTrace              *before,
                     TideTrace              *after,
                     const TideProcessSpec  *before_spec,
                     const TideProcessSpec  *after_spec,
                     TideGroupBy             by,
                     GError                **error)
{
  g_autoptr(TideTraceDiff) diff = g_new0 (TideTraceDiff, 1);

  g_return_val_if_fail (TIDE_IS_TRACE (before) && TIDE_IS_TRACE (after), NULL);

  diff->before_path = g_strdup (tide_trace_get_path (before));
  diff->after_path = g_strdup (tide_trace_get_path (after));
  diff->by = by;
  diff->before_sample_bytes = trace_sample_bytes (before);
  diff->after_sample_bytes = trace_sample_bytes (after);
  if (!diff_pick_processes (diff, before, after, before_spec, after_spec, error) ||
      !diff_steps (diff, before, after, error) ||
      !diff_suspects (diff, before, after, error) ||
      !diff_retained (diff, before, after, error))
    return NULL;
  return g_steal_pointer (&diff);
}

/**
 * tide_trace_diff_new_for_process:
 * @process_id: a process of @before (processes.id); 0: the one the app
 *   opens on
 *
 * What the app compares: @process_id of @before with its counterpart in
 * @after (the process of the same role and rank), by stack.  With 0, the
 * comparison that `tidemark diff BEFORE AFTER` prints.
 *
 * Returns: (transfer full): the comparison, or %NULL with @error set
 */
TideTraceDiff *
tide_trace_diff_new_for_process (TideTrace  *before,
                                 gint64      process_id,
                                 TideTrace  *after,
                                 GError    **error)
{
  g_autoptr(GPtrArray) processes = NULL;
  TideProcess *chosen = NULL;
  TideProcessSpec spec = { .pid = 0, .dist_rank = -1 };

  g_return_val_if_fail (TIDE_IS_TRACE (before) && TIDE_IS_TRACE (after), NULL);

  if (process_id != 0)
    {
      if ((processes = tide_trace_list_processes (before, error)) == NULL)
        return NULL;
      chosen = tide_processes_find (processes, process_id);
      if (chosen != NULL)
        spec.pid = chosen->pid;
    }
  return tide_trace_diff_new (before, after, chosen ? &spec : NULL, NULL, TIDE_GROUP_BY_STACK,
                              error);
}
