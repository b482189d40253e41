/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <string.h>

#include "tide-diff-format.h"
#include "tide-saturate.h"

#define TEXT_MAX_RETAINED 20

static char *
describe_side (const TideTraceDiff *diff,
               gboolean             after)
{
  const TideProcess *p = after ? diff->after_process : diff->before_process;
  GPtrArray *steps = after ? diff->after_steps : diff->before_steps;
  gint64 sample = after ? diff->after_sample_bytes : diff->before_sample_bytes;
  g_autofree char *who = tide_process_describe (p);
  g_autofree char *mode = sample > 0 ? g_strdup_printf ("sampled every %" G_GINT64_FORMAT
                                                        " bytes on average", sample)
                                     : g_strdup ("every allocation");

  return g_strdup_printf ("%s: %s, %u steps, %s", after ? diff->after_path : diff->before_path,
                          who, steps->len, mode);
}

static gint64
step_number (const TideDiffStep *s)
{
  return s->before ? s->before->number : s->after->number;
}

static const char *
step_label (const TideDiffStep *s)
{
  return s->before ? s->before->label : s->after->label;
}

/* ---- text ------------------------------------------------------------------------ */

static void
text_cell (GString    *out,
           gboolean    known,
           gint64      bytes,
           gboolean    delta)
{
  g_autofree char *text = !known ? g_strdup ("-")
                          : delta ? tide_format_delta (bytes) : tide_format_bytes (bytes);

  g_string_append_printf (out, " %12s", text);
}

/* BEFORE, AFTER and AFTER less BEFORE of one quantity. */
static void
text_triple (GString  *out,
             gboolean  has_before,
             gint64    before,
             gboolean  has_after,
             gint64    after)
{
  text_cell (out, has_before, before, TRUE);
  text_cell (out, has_after, after, TRUE);
  text_cell (out, has_before && has_after, tide_sat_sub (after, before), TRUE);
}

static gboolean
steps_have_device (const TideTraceDiff *diff)
{
  for (guint i = 0; i < diff->steps->len; i++)
    {
      TideDiffStep *s = g_ptr_array_index (diff->steps, i);

      if ((s->before && (s->before->device_end || s->before->device_delta)) ||
          (s->after && (s->after->device_end || s->after->device_delta)))
        return TRUE;
    }
  return FALSE;
}

static void
steps_text (GString             *out,
            const TideTraceDiff *diff)
{
  gboolean device = steps_have_device (diff);
  const char *triple = "       BEFORE        AFTER         DIFF";

  g_string_append_printf (out, "Steps, aligned by %s: change in each step\n",
                          diff->align == TIDE_DIFF_ALIGN_LABEL ? "label" : "number");
  g_string_append_printf (out, "%-6s %-12s %-39s %-39s %s%-39s\n", "", "", "  RSS", "  heap",
                          device ? "  device                                 " : "",
                          "  retained");
  g_string_append_printf (out, "%-6s %-12s%s%s%s%s\n", "STEP", "LABEL", triple, triple,
                          device ? triple : "", triple);
  for (guint i = 0; i < diff->steps->len; i++)
    {
      TideDiffStep *s = g_ptr_array_index (diff->steps, i);
      TideStepRow *b = s->before, *a = s->after;
      g_autofree char *label = g_utf8_make_valid (step_label (s), -1);

      g_string_append_printf (out, "%-6" G_GINT64_FORMAT " %-12.12s", step_number (s),
                              label[0] ? label : "-");
      text_triple (out, b && b->has_rss, b ? b->rss_delta : 0, a && a->has_rss,
                   a ? a->rss_delta : 0);
      text_triple (out, b != NULL, b ? b->heap_delta : 0, a != NULL, a ? a->heap_delta : 0);
      if (device)
        text_triple (out, b != NULL, b ? b->device_delta : 0, a != NULL,
                     a ? a->device_delta : 0);
      text_triple (out, b != NULL, b ? b->retained_bytes : 0, a != NULL,
                   a ? a->retained_bytes : 0);
      g_string_append_c (out, '\n');
    }
}

static char *
suspect_slope (const TideGroup *g)
{
  g_autofree char *slope = NULL;

  if (g == NULL)
    return g_strdup ("none");
  slope = tide_format_delta (tide_sat_from_double (g->bytes_per_step));
  return g_strdup_printf ("%s/step from step %d", slope, g->growth_step);
}

static void
suspects_text (GString             *out,
               const TideTraceDiff *diff)
{
  g_string_append_printf (out, "Suspects: %u gone, %u new, %u changed, %u unchanged\n",
                          tide_trace_diff_count (diff, TIDE_SUSPECT_GONE),
                          tide_trace_diff_count (diff, TIDE_SUSPECT_NEW),
                          tide_trace_diff_count (diff, TIDE_SUSPECT_CHANGED),
                          tide_trace_diff_count (diff, TIDE_SUSPECT_UNCHANGED));
  for (guint i = 0; i < diff->suspects->len; i++)
    {
      TideDiffSuspect *s = g_ptr_array_index (diff->suspects, i);
      TideGroup *g = s->before ? s->before : s->after;
      g_autofree char *before = suspect_slope (s->before);
      g_autofree char *after = suspect_slope (s->after);
      g_autofree char *name = tide_group_describe_headline (g);

      g_string_append_printf (out, "  %-9s %s -> %s  %s", tide_suspect_change_name (s->change),
                              before, after, name);
      if (g->scope_path != NULL && diff->by == TIDE_GROUP_BY_STACK)
        g_string_append_printf (out, " in %s", g->scope_path);
      if (s->match == TIDE_MATCH_HEADLINE)
        g_string_append (out, " (matched by headline and scope: the stacks differ)");
      g_string_append_c (out, '\n');
    }
}

static void
retained_text (GString             *out,
               const TideTraceDiff *diff)
{
  g_string_append_printf (out, "Live at the end, by %s\n%14s %14s %14s  %s\n",
                          diff->by == TIDE_GROUP_BY_SCOPE ? "scope" : "stack",
                          "BEFORE", "AFTER", "DIFF", diff->by == TIDE_GROUP_BY_SCOPE
                                                     ? "SCOPE" : "STACK");
  for (guint i = 0; i < diff->retained->len && i < TEXT_MAX_RETAINED; i++)
    {
      TideDiffRetained *r = g_ptr_array_index (diff->retained, i);
      g_autofree char *b = tide_format_bytes (r->before_bytes);
      g_autofree char *a = tide_format_bytes (r->after_bytes);
      g_autofree char *d = tide_format_delta (tide_sat_sub (r->after_bytes,
                                                                   r->before_bytes));

      g_string_append_printf (out, "%14s %14s %14s  %s%s\n", b, a, d, r->name,
                              r->beyond_noise ? "" : "  (within noise)");
    }
  if (diff->retained->len > TEXT_MAX_RETAINED)
    g_string_append_printf (out, "  ... %u more (csv or json list them all)\n",
                            diff->retained->len - TEXT_MAX_RETAINED);
}

static void
diff_text (GString             *out,
           const TideTraceDiff *diff,
           TideDiffParts        parts)
{
  g_autofree char *before = describe_side (diff, FALSE);
  g_autofree char *after = describe_side (diff, TRUE);
  guint differences = tide_trace_diff_count_differences (diff);

  g_string_append_printf (out, "BEFORE %s\nAFTER  %s\n", before, after);
  if (!diff->same_program)
    g_string_append (out, "Note: the two runs are of different programs.\n");
  if (parts & TIDE_DIFF_STEPS)
    {
      g_string_append_c (out, '\n');
      steps_text (out, diff);
    }
  if (parts & TIDE_DIFF_SUSPECTS)
    {
      g_string_append_c (out, '\n');
      suspects_text (out, diff);
    }
  if (parts & TIDE_DIFF_RETAINED)
    {
      g_string_append_c (out, '\n');
      retained_text (out, diff);
    }
  if (differences == 0)
    g_string_append (out, "\nNo difference beyond sampling noise.\n");
  else
    g_string_append_printf (out, "\n%u difference%s beyond sampling noise.\n", differences,
                            differences == 1 ? "" : "s");
}

/* ---- CSV ----------------------------------------------------------------------- */

static void
csv_int (GString  *out,
         gboolean  known,
         gint64    value)
{
  g_string_append_c (out, ',');
  if (known)
    g_string_append_printf (out, "%" G_GINT64_FORMAT, value);
}

static void
csv_triple (GString  *out,
            gboolean  has_before,
            gint64    before,
            gboolean  has_after,
            gint64    after)
{
  csv_int (out, has_before, before);
  csv_int (out, has_after, after);
  csv_int (out, has_before && has_after, tide_sat_sub (after, before));
}

static void
steps_csv (GString             *out,
           const TideTraceDiff *diff)
{
  g_string_append (out, "step_before,step_after,label,"
                        "rss_change_before,rss_change_after,rss_change_diff,"
                        "heap_change_before,heap_change_after,heap_change_diff,"
                        "device_change_before,device_change_after,device_change_diff,"
                        "retained_before,retained_after,retained_diff\n");
  for (guint i = 0; i < diff->steps->len; i++)
    {
      TideDiffStep *s = g_ptr_array_index (diff->steps, i);
      TideStepRow *b = s->before, *a = s->after;

      if (b != NULL)
        g_string_append_printf (out, "%d", b->number);
      csv_int (out, a != NULL, a ? a->number : 0);
      g_string_append_c (out, ',');
      tide_format_csv_text (out, step_label (s));
      csv_triple (out, b && b->has_rss, b ? b->rss_delta : 0, a && a->has_rss,
                  a ? a->rss_delta : 0);
      csv_triple (out, b != NULL, b ? b->heap_delta : 0, a != NULL, a ? a->heap_delta : 0);
      csv_triple (out, b != NULL, b ? b->device_delta : 0, a != NULL, a ? a->device_delta : 0);
      csv_triple (out, b != NULL, b ? b->retained_bytes : 0, a != NULL,
                  a ? a->retained_bytes : 0);
      g_string_append_c (out, '\n');
    }
}

static gint64
slope_bytes (const TideGroup *g)
{
  return g != NULL ? tide_sat_from_double (g->bytes_per_step) : 0;
}

static void
suspects_csv (GString             *out,
              const TideTraceDiff *diff)
{
  g_string_append (out, "change,matched_by,headline,scope,device,"
                        "growth_step_before,growth_step_after,"
                        "bytes_per_step_before,bytes_per_step_after,"
                        "growth_bytes_before,growth_bytes_after\n");
  for (guint i = 0; i < diff->suspects->len; i++)
    {
      TideDiffSuspect *s = g_ptr_array_index (diff->suspects, i);
      TideGroup *g = s->before ? s->before : s->after;
      g_autofree char *name = tide_group_describe_headline (g);

      g_string_append_printf (out, "%s,%s,", tide_suspect_change_name (s->change),
                              tide_match_kind_name (s->match));
      tide_format_csv_text (out, name);
      g_string_append_c (out, ',');
      tide_format_csv_text (out, g->scope_path);
      g_string_append_printf (out, ",%d", g->device);
      csv_int (out, s->before != NULL, s->before ? s->before->growth_step : 0);
      csv_int (out, s->after != NULL, s->after ? s->after->growth_step : 0);
      csv_int (out, s->before != NULL, slope_bytes (s->before));
      csv_int (out, s->after != NULL, slope_bytes (s->after));
      csv_int (out, s->before != NULL, s->before ? s->before->growth_bytes : 0);
      csv_int (out, s->after != NULL, s->after ? s->after->growth_bytes : 0);
      g_string_append_c (out, '\n');
    }
}

static void
retained_csv (GString             *out,
              const TideTraceDiff *diff)
{
  g_string_append_printf (out, "%s,bytes_before,bytes_after,bytes_diff,count_before,"
                               "count_after,beyond_noise\n",
                          diff->by == TIDE_GROUP_BY_SCOPE ? "scope" : "stack");
  for (guint i = 0; i < diff->retained->len; i++)
    {
      TideDiffRetained *r = g_ptr_array_index (diff->retained, i);

      tide_format_csv_text (out, r->name);
      g_string_append_printf (out, ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                              ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%d\n",
                              r->before_bytes, r->after_bytes,
                              tide_sat_sub (r->after_bytes, r->before_bytes),
                              r->before_count, r->after_count, r->beyond_noise ? 1 : 0);
    }
}

/* ---- JSON ----------------------------------------------------------------------- */

static void
json_side (GString             *out,
           const TideTraceDiff *diff,
           gboolean             after)
{
  const TideProcess *p = after ? diff->after_process : diff->before_process;

  g_string_append (out, "{\"path\":");
  tide_format_json_text (out, after ? diff->after_path : diff->before_path);
  g_string_append_printf (out, ",\"pid\":%" G_GINT64_FORMAT ",\"role\":", p->pid);
  tide_format_json_text (out, p->label);
  g_string_append (out, ",");
  tide_format_json_int (out, "dist_rank", p->dist_rank >= 0, p->dist_rank);
  g_string_append_printf (out, ",\"steps\":%u,\"sample_bytes\":%" G_GINT64_FORMAT "}",
                          (after ? diff->after_steps : diff->before_steps)->len,
                          after ? diff->after_sample_bytes : diff->before_sample_bytes);
}

static void
json_change (GString    *out,
             const char *name,
             gboolean    has_before,
             gint64      before,
             gboolean    has_after,
             gint64      after)
{
  g_string_append_printf (out, ",\"%s\":{", name);
  tide_format_json_int (out, "before", has_before, before);
  g_string_append (out, ",");
  tide_format_json_int (out, "after", has_after, after);
  g_string_append (out, ",");
  tide_format_json_int (out, "diff", has_before && has_after, tide_sat_sub (after, before));
  g_string_append_c (out, '}');
}

/* Writes one item of a JSON array: an object, from "{" to "}". */
typedef void (*JsonItemFunc) (GString       *out,
                              gconstpointer  item);

static void
json_array (GString         *out,
            const GPtrArray *items,
            JsonItemFunc     item)
{
  g_string_append_c (out, '[');
  for (guint i = 0; i < items->len; i++)
    {
      if (i > 0)
        g_string_append_c (out, ',');
      item (out, g_ptr_array_index (items, i));
    }
  g_string_append_c (out, ']');
}

static void
step_json (GString       *out,
           gconstpointer  item)
{
  const TideDiffStep *s = item;
  TideStepRow *b = s->before, *a = s->after;

  g_string_append_c (out, '{');
  tide_format_json_int (out, "step_before", b != NULL, b ? b->number : 0);
  g_string_append (out, ",");
  tide_format_json_int (out, "step_after", a != NULL, a ? a->number : 0);
  g_string_append (out, ",\"label\":");
  tide_format_json_text (out, step_label (s));
  json_change (out, "rss_change", b && b->has_rss, b ? b->rss_delta : 0, a && a->has_rss,
               a ? a->rss_delta : 0);
  json_change (out, "heap_change", b != NULL, b ? b->heap_delta : 0, a != NULL,
               a ? a->heap_delta : 0);
  json_change (out, "device_change", b != NULL, b ? b->device_delta : 0, a != NULL,
               a ? a->device_delta : 0);
  json_change (out, "retained", b != NULL, b ? b->retained_bytes : 0, a != NULL,
               a ? a->retained_bytes : 0);
  g_string_append_c (out, '}');
}

static void
json_suspect_side (GString         *out,
                   const char      *key,
                   const TideGroup *g)
{
  g_string_append_printf (out, ",\"%s\":", key);
  if (g == NULL)
    {
      g_string_append (out, "null");
      return;
    }
  g_string_append_printf (out, "{\"growth_step\":%d,\"bytes_per_step\":%" G_GINT64_FORMAT
                          ",\"growth_bytes\":%" G_GINT64_FORMAT ",\"bytes\":%"
                          G_GINT64_FORMAT "}", g->growth_step, slope_bytes (g),
                          g->growth_bytes, g->bytes);
}

static void
suspect_json (GString       *out,
              gconstpointer  item)
{
  const TideDiffSuspect *s = item;
  TideGroup *g = s->before ? s->before : s->after;
  g_autofree char *name = tide_group_describe_headline (g);

  g_string_append_printf (out, "{\"change\":\"%s\",\"matched_by\":\"%s\",\"headline\":",
                          tide_suspect_change_name (s->change),
                          tide_match_kind_name (s->match));
  tide_format_json_text (out, name);
  g_string_append (out, ",\"scope\":");
  tide_format_json_text (out, g->scope_path);
  g_string_append_printf (out, ",\"device\":%d", g->device);
  json_suspect_side (out, "before", s->before);
  json_suspect_side (out, "after", s->after);
  g_string_append_c (out, '}');
}

static void
retained_json (GString       *out,
               gconstpointer  item)
{
  const TideDiffRetained *r = item;

  g_string_append (out, "{\"name\":");
  tide_format_json_text (out, r->name);
  g_string_append_printf (out, ",\"bytes_before\":%" G_GINT64_FORMAT ",\"bytes_after\":%"
                          G_GINT64_FORMAT ",\"bytes_diff\":%" G_GINT64_FORMAT
                          ",\"count_before\":%" G_GINT64_FORMAT ",\"count_after\":%"
                          G_GINT64_FORMAT ",\"beyond_noise\":%s}", r->before_bytes,
                          r->after_bytes, tide_sat_sub (r->after_bytes, r->before_bytes),
                          r->before_count, r->after_count,
                          r->beyond_noise ? "true" : "false");
}

static void
diff_json (GString             *out,
           const TideTraceDiff *diff,
           TideDiffParts        parts)
{
  g_string_append (out, "{\"before\":");
  json_side (out, diff, FALSE);
  g_string_append (out, ",\"after\":");
  json_side (out, diff, TRUE);
  g_string_append_printf (out, ",\"same_program\":%s,\"aligned_by\":\"%s\","
                          "\"differences_beyond_noise\":%u,\"suspects_gone\":%u,"
                          "\"suspects_new\":%u,\"suspects_changed\":%u",
                          diff->same_program ? "true" : "false",
                          diff->align == TIDE_DIFF_ALIGN_LABEL ? "label" : "number",
                          tide_trace_diff_count_differences (diff),
                          tide_trace_diff_count (diff, TIDE_SUSPECT_GONE),
                          tide_trace_diff_count (diff, TIDE_SUSPECT_NEW),
                          tide_trace_diff_count (diff, TIDE_SUSPECT_CHANGED));
  if (parts & TIDE_DIFF_STEPS)
    {
      g_string_append (out, ",\"steps\":");
      json_array (out, diff->steps, step_json);
    }
  if (parts & TIDE_DIFF_SUSPECTS)
    {
      g_string_append (out, ",\"suspects\":");
      json_array (out, diff->suspects, suspect_json);
    }
  if (parts & TIDE_DIFF_RETAINED)
    {
      g_string_append_printf (out, ",\"retained_by\":\"%s\",\"retained\":",
                              diff->by == TIDE_GROUP_BY_SCOPE ? "scope" : "stack");
      json_array (out, diff->retained, retained_json);
    }
  g_string_append (out, "}\n");
}

void
tide_format_diff (GString             *out,
                  const TideTraceDiff *diff,
                  TideDiffParts        parts,
                  TideFormat           format)
{
  g_return_if_fail (out != NULL && diff != NULL);

  if (format == TIDE_FORMAT_JSON)
    diff_json (out, diff, parts);
  else if (format == TIDE_FORMAT_TEXT)
    diff_text (out, diff, parts);
  else if (parts == TIDE_DIFF_SUSPECTS)
    suspects_csv (out, diff);
  else if (parts == TIDE_DIFF_RETAINED)
    retained_csv (out, diff);
  else
    steps_csv (out, diff);
}
