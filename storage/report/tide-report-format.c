/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tide-device-oom.h"
#include "tide-plumbing.h"
#include "tide-report-format.h"
#include "tide-report-rss.h"
#include "tide-saturate.h"
#include "tide-schema.h"

#define TEXT_MAX_GROUPS 20
#define TEXT_MAX_FRAMES 8

gboolean
tide_format_parse (const char *name,
                   TideFormat *format)
{
  if (g_strcmp0 (name, "text") == 0)
    *format = TIDE_FORMAT_TEXT;
  else if (g_strcmp0 (name, "csv") == 0)
    *format = TIDE_FORMAT_CSV;
  else if (g_strcmp0 (name, "json") == 0)
    *format = TIDE_FORMAT_JSON;
  else
    return FALSE;
  return TRUE;
}

static char *
format_duration (gint64 ns)
{
  if (ns >= 1000000000)
    return g_strdup_printf ("%.3f s", ns / 1e9);
  return g_strdup_printf ("%.1f ms", ns / 1e6);
}

/* Where a group's memory is: "host" or "cuda:N". */
char *
tide_format_device (gint device)
{
  return device < 0 ? g_strdup ("host") : g_strdup_printf ("cuda:%d", device);
}

/* ---- CSV and JSON helpers ------------------------------------------------- */

static void
csv_field (GString    *out,
           const char *text)
{
  if (text == NULL)
    return;
  if (strpbrk (text, ",\"\n\r") == NULL)
    {
      g_string_append (out, text);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *p = text; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

static void
json_string (GString    *out,
             const char *text)
{
  if (text == NULL)
    {
      g_string_append (out, "null");
      return;
    }
  g_string_append_c (out, '"');
  for (const guchar *p = (const guchar *) text; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_printf (out, "\\%c", *p);
      else if (*p < 0x20)
        g_string_append_printf (out, "\\u%04x", *p);
      else
        g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

/* For the other report files (tide-report-rss.c) and the diff's tables. */
void
tide_format_csv_text (GString    *out,
                      const char *text)
{
  csv_field (out, text);
}

void
tide_format_json_text (GString    *out,
                       const char *text)
{
  json_string (out, text);
}

void
tide_format_json_int (GString    *out,
                      const char *key,
                      gboolean    known,
                      gint64      value)
{
  if (known)
    g_string_append_printf (out, "\"%s\":%" G_GINT64_FORMAT, key, value);
  else
    g_string_append_printf (out, "\"%s\":null", key);
}

/* ---- steps ------------------------------------------------------------------ */

/* Device columns of the text table, only for traces with device activity:
 * one END/CHANGE pair per device, then the bytes copied each way. */
static gboolean
steps_have_device (GPtrArray *rows)
{
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);
      if ((r->devices != NULL && r->devices->len > 0) || r->h2d_bytes || r->d2h_bytes)
        return TRUE;
    }
  return FALSE;
}

static void
steps_text_device_header (GString     *out,
                          TideStepRow *r)
{
  for (guint d = 0; r->devices != NULL && d < r->devices->len; d++)
    {
      gint dev = g_array_index (r->devices, TideStepDevice, d).device;
      g_autofree char *end = g_strdup_printf ("CUDA:%d END", dev);
      g_autofree char *change = g_strdup_printf ("CUDA:%d CHG", dev);

      g_string_append_printf (out, " %12s %12s", end, change);
    }
  g_string_append_printf (out, " %12s %12s", "H2D", "D2H");
}

static void
steps_text_device_cells (GString     *out,
                         TideStepRow *r)
{
  g_autofree char *h2d = tide_format_bytes (r->h2d_bytes);
  g_autofree char *d2h = tide_format_bytes (r->d2h_bytes);

  for (guint d = 0; r->devices != NULL && d < r->devices->len; d++)
    {
      const TideStepDevice *sd = &g_array_index (r->devices, TideStepDevice, d);
      g_autofree char *end = tide_format_bytes (sd->end_bytes);
      g_autofree char *change = tide_format_delta (sd->delta_bytes);

      g_string_append_printf (out, " %12s %12s", end, change);
    }
  g_string_append_printf (out, " %12s %12s", h2d, d2h);
}

static char *
step_process_name (const TideStepRow *r)
{
  return g_strdup_printf ("%s (pid %" G_GINT64_FORMAT ")", r->process.role ? r->process.role : "?",
                          r->process.pid);
}

/* Steps of one process, or of the job: one row per step and process. */
static void
steps_text_title (GString   *out,
                  GPtrArray *rows,
                  int       *name_width)
{
  g_autoptr(GHashTable) pids = g_hash_table_new (g_int64_hash, g_int64_equal);

  *name_width = 7;
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);
      g_autofree char *name = step_process_name (r);

      g_hash_table_add (pids, &r->process.pid);
      *name_width = MIN (MAX (*name_width, (int) g_utf8_strlen (name, -1)), 48);
    }
  if (g_hash_table_size (pids) == 1)
    {
      g_autofree char *name = step_process_name (g_ptr_array_index (rows, 0));
      g_string_append_printf (out, "Steps of %s\n", name);
    }
  else
    g_string_append_printf (out, "Steps of the job: %u processes, each at each step\n",
                            g_hash_table_size (pids));
}

static gboolean
steps_have_borrowed (GPtrArray *rows)
{
  for (guint i = 0; i < rows->len; i++)
    if (((TideStepRow *) g_ptr_array_index (rows, i))->borrowed)
      return TRUE;
  return FALSE;
}

/* The classes the steps report shows, in its column order: TIDE_STEP_MAPPED
 * is the mapped column already. */
static const struct
{
  TideStepClass  cls;
  const char    *column;   /* CSV and JSON */
  const char    *title;    /* text */
  gint           read_with; /* the class whose reading at a step's end
                             * tells that this one's value is that step
                             * end's; -1: polled, its last value stands */
} step_classes[] = {
  { TIDE_STEP_PSS, "pss_end_bytes", "PSS END", TIDE_STEP_USS },
  { TIDE_STEP_USS, "uss_end_bytes", "USS END", TIDE_STEP_USS },
  { TIDE_STEP_ANON, "rss_anon_end_bytes", "ANON END", TIDE_STEP_ANON },
  { TIDE_STEP_FILE, "rss_file_end_bytes", "FILE END", TIDE_STEP_FILE },
  { TIDE_STEP_SHMEM, "rss_shmem_end_bytes", "SHMEM END", TIDE_STEP_SHMEM },
  { TIDE_STEP_ALLOC_FREE, "alloc_free_end_bytes", "ALLOC FREE", -1 },
  { TIDE_STEP_COW, "cow_bytes", "COW", TIDE_STEP_USS },
  { TIDE_STEP_COW_LEFT, "cow_left_bytes", "NOT SHARED", TIDE_STEP_USS },
};

/* Whether the @c'th of step_classes is known at @r's end.  The private
 * memory is read at the step ends that the recorder's budget allows, and
 * a process without steps of its own has its classes read at those alone:
 * at the others the last reading is an earlier step's, which a cell must
 * not pass off as this one's.  The copy-on-write counts are read with the
 * private memory, and written where they changed; what the allocator
 * holds free is sent ten times a second, as RSS is polled. */
static gboolean
step_class_known (const TideStepRow *r,
                  guint              c)
{
  gint read_with = step_classes[c].read_with;

  return r->has_classes && r->class_end[step_classes[c].cls] >= 0 &&
         (read_with < 0 || tide_step_row_read_at_end (r, read_with));
}

/* Whether a class that a row has was not read at its end. */
static gboolean
steps_miss_class_reads (GPtrArray *rows)
{
  for (guint i = 0; i < rows->len; i++)
    {
      const TideStepRow *r = g_ptr_array_index (rows, i);

      for (guint c = 0; r->has_classes && c < G_N_ELEMENTS (step_classes); c++)
        if (r->class_end[step_classes[c].cls] >= 0 && !step_class_known (r, c))
          return TRUE;
    }
  return FALSE;
}

static gboolean
steps_have_classes (GPtrArray *rows)
{
  for (guint i = 0; i < rows->len; i++)
    for (guint c = 0; c < G_N_ELEMENTS (step_classes); c++)
      if (step_class_known (g_ptr_array_index (rows, i), c))
        return TRUE;
  return FALSE;
}

static void
steps_text_class_cells (GString           *out,
                        const TideStepRow *r)
{
  for (guint c = 0; c < G_N_ELEMENTS (step_classes); c++)
    {
      g_autofree char *cell = step_class_known (r, c)
                              ? tide_format_bytes (r->class_end[step_classes[c].cls])
                              : g_strdup ("-");

      g_string_append_printf (out, " %12s", cell);
    }
}

static void
steps_text_row (GString     *out,
                TideStepRow *r,
                int          name_width,
                gboolean     classes,
                gboolean     device)
{
  g_autofree char *name = step_process_name (r);
  g_autofree char *start = format_duration (r->start_ns);
  g_autofree char *dur = format_duration (r->duration_ns);
  g_autofree char *rss = r->has_rss ? tide_format_bytes (r->rss_end) : g_strdup ("-");
  g_autofree char *drss = r->has_rss ? tide_format_delta (r->rss_delta) : g_strdup ("-");
  g_autofree char *heap = tide_format_bytes (r->heap_end);
  g_autofree char *dheap = tide_format_delta (r->heap_delta);
  g_autofree char *kept = r->borrowed ? g_strdup ("-") : tide_format_bytes (r->retained_bytes);
  g_autofree char *expl = r->has_resident ? tide_format_bytes (r->resident_explained)
                                          : g_strdup ("-");
  g_autofree char *unattr = r->has_resident && r->has_rss ? tide_format_bytes (r->unattributed)
                                                          : g_strdup ("-");
  /* %-*s counts bytes: pad by characters for names with non-ASCII text. */
  int pad = name_width - (int) g_utf8_strlen (name, -1);

  g_string_append_printf (out, "%5d  %-10s %s%*s %10s %10s %12s %12s %12s %12s %12s %12s %12s",
                          r->number, r->label, name, MAX (pad, 0), "", start, dur, rss, drss,
                          heap, dheap, kept, expl, unattr);
  if (classes)
    steps_text_class_cells (out, r);
  if (device)
    steps_text_device_cells (out, r);
  g_string_append_c (out, '\n');
}

static void
steps_text (GString   *out,
            GPtrArray *rows)
{
  gboolean device = steps_have_device (rows);
  gboolean classes = steps_have_classes (rows);
  int name_width;

  if (rows->len == 0)
    {
      g_string_append (out, "No steps: the program never called tidemark_step "
                            "(or tidemark.step() in Python).\n");
      return;
    }
  steps_text_title (out, rows, &name_width);
  g_string_append_printf (out, "%5s  %-10s %-*s %10s %10s %12s %12s %12s %12s %12s %12s %12s",
                          "STEP", "LABEL", name_width, "PROCESS", "START", "DURATION",
                          "RSS END", "RSS CHANGE", "HEAP END", "HEAP CHANGE",
                          "RETAINED", "EXPLAINED", "UNATTRIB.");
  for (guint c = 0; classes && c < G_N_ELEMENTS (step_classes); c++)
    g_string_append_printf (out, " %12s", step_classes[c].title);
  if (device)
    steps_text_device_header (out, g_ptr_array_index (rows, 0));
  g_string_append_c (out, '\n');
  for (guint i = 0; i < rows->len; i++)
    steps_text_row (out, g_ptr_array_index (rows, i), name_width, classes, device);
  if (device)
    g_string_append (out, "CUDA:N END/CHG: live bytes of recorded device allocations at the "
                          "step end and their change; H2D, D2H: bytes copied each way by "
                          "copies started in the step.\n");
  g_string_append (out, "RETAINED: allocated in the step and still live at its end. "
                        "EXPLAINED: resident bytes of recorded live blocks at the step end; "
                        "UNATTRIB.: the rest of RSS.\n");
  if (classes)
    g_string_append (out, "PSS: resident bytes with shared pages split among the processes "
                          "that map them; USS: pages this process alone maps; ANON, FILE, "
                          "SHMEM: the kernel's split of RSS; ALLOC FREE: what the allocator "
                          "holds free; COW: pages inherited at fork and since copied on "
                          "write.\n");
  if (classes && steps_miss_class_reads (rows))
    g_string_append (out, "In the classes \"-\" is a value not read at the step's end (or, "
                          "for COW and NOT SHARED, a process that no fork made). The private "
                          "memory (PSS, USS, COW, NOT SHARED) is read at the step ends that "
                          "the recorder's budget allows, and all the classes of a process "
                          "without steps of its own at those alone; `report --rss` explains "
                          "the steps between two readings together.\n");
  if (steps_have_borrowed (rows))
    g_string_append (out, "A process without steps of its own (DataLoader workers, helpers) "
                          "is shown at the steps of its parent, or else of rank 0: "
                          "RSS, heap and the classes only.\n");
}

static void
csv_optional (GString  *out,
              gboolean  known,
              gint64    value)
{
  if (known)
    g_string_append_printf (out, "%" G_GINT64_FORMAT, value);
  g_string_append_c (out, ',');
}

static void
steps_csv (GString   *out,
           GPtrArray *rows)
{
  g_string_append (out, "pid,role,dist_rank,steps_pid,step,label,start_ns,duration_ns,"
                        "rss_end_bytes,rss_delta_bytes,"
                        "heap_live_end_bytes,heap_delta_bytes,mapped_end_bytes,"
                        "device_end_bytes,device_delta_bytes,retained_bytes,retained_count,"
                        "resident_explained_bytes,unattributed_bytes,h2d_bytes,d2h_bytes");
  for (guint c = 0; c < G_N_ELEMENTS (step_classes); c++)
    g_string_append_printf (out, ",%s", step_classes[c].column);
  /* Every row has the same devices: those of the whole trace. */
  if (rows->len > 0)
    {
      GArray *devices = ((TideStepRow *) g_ptr_array_index (rows, 0))->devices;

      for (guint d = 0; devices != NULL && d < devices->len; d++)
        g_string_append_printf (out, ",cuda%d_end_bytes,cuda%d_delta_bytes",
                                g_array_index (devices, TideStepDevice, d).device,
                                g_array_index (devices, TideStepDevice, d).device);
    }
  g_string_append_c (out, '\n');
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      g_string_append_printf (out, "%" G_GINT64_FORMAT ",", r->process.pid);
      csv_field (out, r->process.role);
      g_string_append_c (out, ',');
      csv_optional (out, r->process.dist_rank >= 0, r->process.dist_rank);
      g_string_append_printf (out, "%" G_GINT64_FORMAT ",%d,", r->steps_pid, r->number);
      csv_field (out, r->label);
      g_string_append_printf (out, ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",",
                              r->start_ns, r->duration_ns);
      csv_optional (out, r->has_rss, r->rss_end);
      csv_optional (out, r->has_rss, r->rss_delta);
      g_string_append_printf (out, "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                              ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",", r->heap_end,
                              r->heap_delta, r->mapped_end, r->device_end, r->device_delta);
      csv_optional (out, !r->borrowed, r->retained_bytes);
      csv_optional (out, !r->borrowed, r->retained_count);
      csv_optional (out, r->has_resident, r->resident_explained);
      if (r->has_resident && r->has_rss)
        g_string_append_printf (out, "%" G_GINT64_FORMAT, r->unattributed);
      g_string_append_printf (out, ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, r->h2d_bytes,
                              r->d2h_bytes);
      for (guint c = 0; c < G_N_ELEMENTS (step_classes); c++)
        {
          g_string_append_c (out, ',');
          if (step_class_known (r, c))
            g_string_append_printf (out, "%" G_GINT64_FORMAT, r->class_end[step_classes[c].cls]);
        }
      for (guint d = 0; r->devices != NULL && d < r->devices->len; d++)
        g_string_append_printf (out, ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
                                g_array_index (r->devices, TideStepDevice, d).end_bytes,
                                g_array_index (r->devices, TideStepDevice, d).delta_bytes);
      g_string_append_c (out, '\n');
    }
}

/* A member after others. */
static void
json_optional (GString    *out,
               const char *name,
               gboolean    known,
               gint64      value)
{
  g_string_append_c (out, ',');
  tide_format_json_int (out, name, known, value);
}

static void
steps_json (GString   *out,
            GPtrArray *rows)
{
  g_string_append (out, "{\"steps\":[");
  for (guint i = 0; i < rows->len; i++)
    {
      TideStepRow *r = g_ptr_array_index (rows, i);

      g_string_append_printf (out, "%s{\"pid\":%" G_GINT64_FORMAT ",\"role\":",
                              i ? "," : "", r->process.pid);
      json_string (out, r->process.role);
      json_optional (out, "dist_rank", r->process.dist_rank >= 0, r->process.dist_rank);
      g_string_append_printf (out, ",\"steps_pid\":%" G_GINT64_FORMAT ",\"step\":%d,\"label\":",
                              r->steps_pid, r->number);
      json_string (out, r->label);
      g_string_append_printf (out, ",\"start_ns\":%" G_GINT64_FORMAT ",\"duration_ns\":%"
                              G_GINT64_FORMAT, r->start_ns, r->duration_ns);
      json_optional (out, "rss_end_bytes", r->has_rss, r->rss_end);
      json_optional (out, "rss_delta_bytes", r->has_rss, r->rss_delta);
      g_string_append_printf (out, ",\"heap_live_end_bytes\":%" G_GINT64_FORMAT
                              ",\"heap_delta_bytes\":%" G_GINT64_FORMAT
                              ",\"mapped_end_bytes\":%" G_GINT64_FORMAT
                              ",\"device_end_bytes\":%" G_GINT64_FORMAT
                              ",\"device_delta_bytes\":%" G_GINT64_FORMAT,
                              r->heap_end, r->heap_delta, r->mapped_end, r->device_end,
                              r->device_delta);
      json_optional (out, "retained_bytes", !r->borrowed, r->retained_bytes);
      json_optional (out, "retained_count", !r->borrowed, r->retained_count);
      json_optional (out, "resident_explained_bytes", r->has_resident, r->resident_explained);
      json_optional (out, "unattributed_bytes", r->has_resident && r->has_rss, r->unattributed);
      g_string_append_printf (out, ",\"h2d_bytes\":%" G_GINT64_FORMAT ",\"d2h_bytes\":%"
                              G_GINT64_FORMAT, r->h2d_bytes, r->d2h_bytes);
      for (guint c = 0; c < G_N_ELEMENTS (step_classes); c++)
        json_optional (out, step_classes[c].column, step_class_known (r, c),
                       r->class_end[step_classes[c].cls]);
      g_string_append (out, ",\"devices\":[");
      for (guint d = 0; r->devices != NULL && d < r->devices->len; d++)
        {
          const TideStepDevice *sd = &g_array_index (r->devices, TideStepDevice, d);

          g_string_append_printf (out, "%s{\"device\":\"cuda:%d\",\"end_bytes\":%"
                                  G_GINT64_FORMAT ",\"delta_bytes\":%" G_GINT64_FORMAT "}",
                                  d ? "," : "", sd->device, sd->end_bytes, sd->delta_bytes);
        }
      g_string_append (out, "]}");
    }
  g_string_append (out, "]}\n");
}

void
tide_format_steps (GString    *out,
                   GPtrArray  *rows,
                   TideFormat  format)
{
  if (format == TIDE_FORMAT_CSV)
    steps_csv (out, rows);
  else if (format == TIDE_FORMAT_JSON)
    steps_json (out, rows);
  else
    steps_text (out, rows);
}

/* ---- groups: suspects and retained ------------------------------------------ */

/* How many native frames the text report shows inside (and, for a native
 * headline, outside) the headline; --native shows them all. */
#define NATIVE_INSIDE  3
#define NATIVE_OUTSIDE 2

static void
frames_text_line (GString         *out,
                  const char      *indent,
                  const TideFrame *frame,
                  gboolean         with_kind)
{
  g_autofree char *desc = frame->kind == TIDE_FRAME_PYTHON ? tide_frame_describe_source_first (frame)
                                                           : tide_frame_describe (frame);

  if (with_kind)
    g_string_append_printf (out, "%s%-6s %s%s\n", indent, tide_frame_kind_name (frame), desc,
                            frame->plumbing ? "  (plumbing)" : "");
  else
    g_string_append_printf (out, "%s%s\n", indent, desc);
}

static gboolean
frame_is_named_native (const TideFrame *frame)
{
  return frame->kind != TIDE_FRAME_PYTHON && frame->function != NULL;
}

/* Where the frames around the headline @h begin: the NATIVE_INSIDE-th
 * named native or inline frame inside it, or nearer. */
static gint
around_first (GPtrArray *frames,
              gint       h)
{
  gint first = h;

  for (gint i = h - 1, found = 0; i >= 0 && found < NATIVE_INSIDE; i--)
    if (frame_is_named_native (g_ptr_array_index (frames, i)))
      {
        first = i;
        found++;
      }
  return first;
}

/* Where they end: for a native headline the NATIVE_OUTSIDE-th named
 * native frame outside it (its callers); a Python headline has none, as
 * the native frames between two Python frames are the interpreter's. */
static gint
around_last (GPtrArray *frames,
             gint       h)
{
  gint last = h;

  if (((TideFrame *) g_ptr_array_index (frames, h))->kind == TIDE_FRAME_PYTHON)
    return h;
  for (guint i = h + 1, found = 0; i < frames->len && found < NATIVE_OUTSIDE; i++)
    if (frame_is_named_native (g_ptr_array_index (frames, i)))
      {
        last = (gint) i;
        found++;
      }
  return last;
}

static void
frames_text_around (GString    *out,
                    const char *indent,
                    GPtrArray  *frames,
                    gint        h)
{
  gint first = around_first (frames, h);
  gint last = around_last (frames, h);
  g_autofree char *deeper = g_strconcat (indent, "  ", NULL);

  if (first == last)
    return;
  g_string_append_printf (out, "%snative frames around it, innermost first:\n", indent);
  for (gint i = first; i <= last; i++)
    {
      const TideFrame *f = g_ptr_array_index (frames, i);

      if (i == h)
        g_string_append_printf (out, "%s(the headline)\n", deeper);
      else if (frame_is_named_native (f))
        frames_text_line (out, deeper, f, FALSE);
    }
}

/* The frames under a stack's first line: every frame with its kind, or the
 * Python frames (the headline first among them) and the native frames
 * around the headline. */
static void
groups_text_frames (GString         *out,
                    const char      *indent,
                    TideGroup       *g,
                    TideFrameDetail  detail)
{
  gint h = tide_frames_find_headline (g->frames);
  guint shown = 0, python = 0;

  if (h < 0)
    return;
  if (detail == TIDE_FRAMES_ALL)
    {
      for (guint f = 0; f < g->frames->len; f++)
        frames_text_line (out, indent, g_ptr_array_index (g->frames, f), TRUE);
      return;
    }
  for (guint f = 0; f < g->frames->len; f++)
    python += ((TideFrame *) g_ptr_array_index (g->frames, f))->kind == TIDE_FRAME_PYTHON;
  if (python > 0)
    g_string_append_printf (out, "%sPython, innermost first:\n", indent);
  for (guint f = 0; f < g->frames->len && shown < TEXT_MAX_FRAMES; f++)
    {
      const TideFrame *frame = g_ptr_array_index (g->frames, f);
      g_autofree char *deeper = g_strconcat (indent, "  ", NULL);

      if (frame->kind == TIDE_FRAME_PYTHON)
        {
          frames_text_line (out, deeper, frame, FALSE);
          shown++;
        }
    }
  frames_text_around (out, indent, g->frames, h);
  g_string_append_printf (out, "%s(%u frames; --native shows every one)\n", indent,
                          g->frames->len);
}

static const char *
share_path (const TideScopeShare *share)
{
  return share->path ? share->path : "(no scope)";
}

/* A stack that grew (or is held) in several scopes: each scope's share,
 * so that no scope is credited with another's bytes. */
static void
scopes_text (GString        *out,
             const char     *indent,
             TideGroup      *g,
             TideGroupsKind  kind)
{
  g_string_append_printf (out, "%sin %u scopes:\n", indent, g->scopes->len);
  for (guint i = 0; i < g->scopes->len; i++)
    {
      const TideScopeShare *share = &g_array_index (g->scopes, TideScopeShare, i);
      g_autofree char *amount = kind == TIDE_GROUPS_SUSPECTS
        ? tide_format_delta (llround (share->bytes_per_step))
        : tide_format_bytes (share->bytes);

      g_string_append_printf (out, "%s  %s%s %s\n", indent, amount,
                              kind == TIDE_GROUPS_SUSPECTS ? "/step" : "", share_path (share));
    }
}

static void
groups_text (GString         *out,
             GPtrArray       *groups,
             TideGroupsKind   kind,
             TideGroupBy      by,
             gint             step,
             TideFrameDetail  detail)
{
  const char *by_name = by == TIDE_GROUP_BY_STACK ? "stack" : "scope";
  gint64 total = 0;

  for (guint i = 0; i < groups->len; i++)
    total = tide_sat_add (total, ((TideGroup *) g_ptr_array_index (groups, i))->bytes);

  if (kind == TIDE_GROUPS_SUSPECTS)
    {
      if (groups->len == 0)
        {
          g_string_append (out, "No leak suspects: nothing grows steadily step over step.\n");
          return;
        }
      g_string_append_printf (out, "Leak suspects by %s (steady growth step over step), "
                              "fastest first:\n", by_name);
    }
  else
    {
      g_autofree char *total_text = tide_format_bytes (total);
      g_autofree char *when = step > 0 ? g_strdup_printf ("allocated in step %d and still live "
                                                          "at its end", step)
                                       : g_strdup ("still live when the trace ended");

      g_string_append_printf (out, "Retained by %s, %s: %s in %u group%s\n",
                              by_name, when, total_text, groups->len,
                              groups->len == 1 ? "" : "s");
      g_string_append_printf (out, "%4s %12s %9s %12s %8s  %s\n", "", "BYTES", "COUNT",
                              "RESIDENT", "SINCE", by == TIDE_GROUP_BY_STACK
                              ? "STACK (named by its headline)" : "SCOPE");
    }

  for (guint i = 0; i < groups->len && i < TEXT_MAX_GROUPS; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);
      g_autofree char *dev = tide_format_device (g->device);
      g_autofree char *bytes = tide_format_bytes (g->bytes);
      g_autofree char *head = kind == TIDE_GROUPS_SUSPECTS ? tide_group_describe_headline_via (g)
                                                           : tide_group_describe_headline (g);
      const char *indent;

      if (kind == TIDE_GROUPS_SUSPECTS)
        {
          g_autofree char *slope = tide_format_delta (tide_sat_from_double (g->bytes_per_step));

          /* The headline leads: the line a person opens first. */
          g_string_append_printf (out, "%3u. %s\n       %s/step since step %d, %s live at the "
                                  "last step, in %s (pid %" G_GINT64_FORMAT ") on %s\n", i + 1,
                                  head, slope, g->growth_step, bytes,
                                  g->process.role ? g->process.role : "?", g->process.pid, dev);
          if (g->scopes != NULL && g->scopes->len > 1)
            scopes_text (out, "       ", g, kind);
          else if (g->scope_path != NULL && g->frames->len > 0)
            g_string_append_printf (out, "       scope %s\n", g->scope_path);
          indent = "       ";
        }
      else
        {
          g_autofree char *resident = g->resident_bytes >= 0 ? tide_format_bytes (g->resident_bytes)
                                                             : g_strdup ("-");
          g_autofree char *since = g->growth_step ? g_strdup_printf ("step %d", g->growth_step)
                                                  : g_strdup ("-");

          g_string_append_printf (out, "%3u. %12s %9" G_GINT64_FORMAT " %12s %8s  %s%s%s\n",
                                  i + 1, bytes, g->count, resident, since, head,
                                  g->device >= 0 ? "  on " : "", g->device >= 0 ? dev : "");
          indent = "                                                    ";
          if (g->scopes != NULL && g->scopes->len > 1)
            scopes_text (out, indent, g, kind);
        }
      groups_text_frames (out, indent, g, detail);
    }
  if (groups->len > TEXT_MAX_GROUPS)
    g_string_append_printf (out, "… and %u more (use --format csv for all)\n",
                            groups->len - TEXT_MAX_GROUPS);
}

static char *
frames_joined (GPtrArray *frames)
{
  GString *s = g_string_new (NULL);

  for (guint f = 0; f < frames->len; f++)
    {
      g_autofree char *desc = tide_frame_describe (g_ptr_array_index (frames, f));
      if (f)
        g_string_append (s, ";");
      g_string_append (s, desc);
    }
  return g_string_free (s, FALSE);
}

/* "path=bytes;path=bytes": each scope's growth (suspects) or bytes. */
static void
scopes_csv (GString        *out,
            TideGroup      *g,
            TideGroupsKind  kind)
{
  g_autoptr(GString) cell = g_string_new (NULL);

  for (guint i = 0; g->scopes != NULL && i < g->scopes->len; i++)
    {
      const TideScopeShare *share = &g_array_index (g->scopes, TideScopeShare, i);

      g_string_append_printf (cell, "%s%s=%" G_GINT64_FORMAT, i ? ";" : "", share_path (share),
                              kind == TIDE_GROUPS_SUSPECTS ? share->growth_bytes : share->bytes);
    }
  csv_field (out, cell->str);
}

/* A class suspect's row in the stacks' columns, empty where a stack has
 * frames, then its kind, class, name and hint. */
static void
class_suspects_csv (GString   *out,
                    GPtrArray *classes,
                    guint      first_position)
{
  for (guint i = 0; classes != NULL && i < classes->len; i++)
    {
      const TideClassSuspect *s = g_ptr_array_index (classes, i);

      g_string_append_printf (out, "%u,%" G_GINT64_FORMAT ",", first_position + i, s->process.pid);
      csv_field (out, s->process.role);
      g_string_append_printf (out, ",,host,%" G_GINT64_FORMAT ",,,%d,%" G_GINT64_FORMAT
                              ",%" G_GINT64_FORMAT ",,,,,,,,,,,class,%s,", s->end_bytes,
                              s->growth_step, s->growth_bytes,
                              tide_sat_from_double (s->bytes_per_step),
                              tide_class_suspect_class (s));
      csv_field (out, s->name);
      g_string_append_c (out, ',');
      csv_field (out, s->hint);
      g_string_append_c (out, '\n');
    }
}

/* Suspects end in kind,class,name,hint, after the columns that were
 * there before them, so that a reader of those keeps working. */
static void
groups_csv (GString        *out,
            GPtrArray      *groups,
            TideGroupsKind  kind,
            GPtrArray      *classes)
{
  g_string_append (out, "position,pid,role,dist_rank,device,bytes,count,resident_bytes,"
                        "growth_start_step,growth_bytes,bytes_per_step,scope,function,file,line,"
                        "module,stack,headline,headline_file,headline_line,scopes");
  g_string_append (out, kind == TIDE_GROUPS_SUSPECTS ? ",kind,class,name,hint\n" : "\n");
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);
      TideFrame *top = g->frames->len ? g_ptr_array_index (g->frames, 0) : NULL;
      g_autofree char *dev = tide_format_device (g->device);
      g_autofree char *stack = frames_joined (g->frames);
      const TideFrame *headline = tide_group_get_headline (g);
      g_autofree char *headline_text = tide_group_describe_headline (g);

      g_string_append_printf (out, "%u,%" G_GINT64_FORMAT ",", i + 1, g->process.pid);
      csv_field (out, g->process.role);
      g_string_append_c (out, ',');
      csv_optional (out, g->process.dist_rank >= 0, g->process.dist_rank);
      g_string_append_printf (out, "%s,%" G_GINT64_FORMAT ",", dev, g->bytes);
      csv_optional (out, g->count >= 0, g->count);
      csv_optional (out, g->resident_bytes >= 0, g->resident_bytes);
      csv_optional (out, g->growth_step > 0, g->growth_step);
      csv_optional (out, g->growth_step > 0, g->growth_bytes);
      csv_optional (out, g->growth_step > 0, tide_sat_from_double (g->bytes_per_step));
      csv_field (out, g->scope_path);
      g_string_append_c (out, ',');
      csv_field (out, top ? top->function : NULL);
      g_string_append_c (out, ',');
      csv_field (out, top ? top->file : NULL);
      g_string_append_c (out, ',');
      csv_optional (out, top && top->line > 0, top ? top->line : 0);
      csv_field (out, top ? top->module : NULL);
      g_string_append_c (out, ',');
      csv_field (out, stack);
      g_string_append_c (out, ',');
      csv_field (out, headline_text);
      g_string_append_c (out, ',');
      csv_field (out, headline ? headline->file : NULL);
      g_string_append_c (out, ',');
      if (headline != NULL && headline->line > 0)
        g_string_append_printf (out, "%d", headline->line);
      g_string_append_c (out, ',');
      scopes_csv (out, g, kind);
      g_string_append (out, kind == TIDE_GROUPS_SUSPECTS ? ",stack,,,\n" : "\n");
    }
  class_suspects_csv (out, classes, groups->len + 1);
}

/* "headline": the text every report shows, and where it points: "frame"
 * indexes "frames"; null without frames. */
static void
json_headline (GString   *out,
               TideGroup *g)
{
  gint h = tide_frames_find_headline (g->frames);
  const TideFrame *headline = h >= 0 ? g_ptr_array_index (g->frames, h) : NULL;
  g_autofree char *text = NULL;

  if (headline == NULL)
    {
      g_string_append (out, ",\"headline\":null");
      return;
    }
  text = tide_frame_describe_source_first (headline);
  g_string_append (out, ",\"headline\":{\"text\":");
  json_string (out, text);
  g_string_append_printf (out, ",\"frame\":%d,\"kind\":\"%s\",\"function\":", h,
                          tide_frame_kind_name (headline));
  json_string (out, headline->function);
  g_string_append (out, ",\"file\":");
  json_string (out, headline->file);
  g_string_append_printf (out, ",\"line\":%d", headline->line);
  json_optional (out, "via_frame", tide_frames_find_via (g->frames, h) >= 0,
                 tide_frames_find_via (g->frames, h));
  g_string_append_c (out, '}');
}

/* "scopes": each scope's share of a stack group; null when grouped by
 * scope. */
static void
json_scopes (GString        *out,
             TideGroup      *g,
             TideGroupsKind  kind)
{
  if (g->scopes == NULL)
    {
      g_string_append (out, ",\"scopes\":null");
      return;
    }
  g_string_append (out, ",\"scopes\":[");
  for (guint i = 0; i < g->scopes->len; i++)
    {
      const TideScopeShare *share = &g_array_index (g->scopes, TideScopeShare, i);

      g_string_append (out, i ? ",{\"scope\":" : "{\"scope\":");
      json_string (out, share->path);
      g_string_append_printf (out, ",\"bytes\":%" G_GINT64_FORMAT, share->bytes);
      json_optional (out, "growth_bytes", kind == TIDE_GROUPS_SUSPECTS, share->growth_bytes);
      json_optional (out, "bytes_per_step", kind == TIDE_GROUPS_SUSPECTS,
                     llround (share->bytes_per_step));
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, ']');
}

/* A class suspect in the shape of a stack's, without frames, then its
 * kind, class, name and hint. */
static void
class_suspects_json (GString   *out,
                     GPtrArray *classes,
                     guint      first_position)
{
  for (guint i = 0; classes != NULL && i < classes->len; i++)
    {
      const TideClassSuspect *s = g_ptr_array_index (classes, i);

      g_string_append_printf (out, "%s{\"position\":%u,\"pid\":%" G_GINT64_FORMAT ",\"role\":",
                              first_position + i > 1 ? "," : "", first_position + i,
                              s->process.pid);
      json_string (out, s->process.role);
      g_string_append_printf (out, ",\"dist_rank\":null,\"device\":\"host\",\"bytes\":%"
                              G_GINT64_FORMAT ",\"count\":null,\"resident_bytes\":null,"
                              "\"growth_start_step\":%d,\"growth_bytes\":%" G_GINT64_FORMAT
                              ",\"bytes_per_step\":%" G_GINT64_FORMAT ",\"scope\":null,"
                              "\"frames\":[],\"headline\":null,\"scopes\":null,"
                              "\"kind\":\"class\",\"class\":\"%s\",\"name\":", s->end_bytes,
                              s->growth_step, s->growth_bytes,
                              tide_sat_from_double (s->bytes_per_step),
                              tide_class_suspect_class (s));
      json_string (out, s->name);
      g_string_append (out, ",\"hint\":");
      json_string (out, s->hint);
      g_string_append_c (out, '}');
    }
}

static void
groups_json (GString        *out,
             GPtrArray      *groups,
             TideGroupsKind  kind,
             GPtrArray      *classes)
{
  g_string_append_printf (out, "{\"%s\":[", kind == TIDE_GROUPS_SUSPECTS ? "suspects" : "retained");
  for (guint i = 0; i < groups->len; i++)
    {
      TideGroup *g = g_ptr_array_index (groups, i);
      g_autofree char *dev = tide_format_device (g->device);

      g_string_append_printf (out, "%s{\"position\":%u,\"pid\":%" G_GINT64_FORMAT ",\"role\":",
                              i ? "," : "", i + 1, g->process.pid);
      json_string (out, g->process.role);
      json_optional (out, "dist_rank", g->process.dist_rank >= 0, g->process.dist_rank);
      g_string_append_printf (out, ",\"device\":\"%s\",\"bytes\":%" G_GINT64_FORMAT, dev,
                              g->bytes);
      json_optional (out, "count", g->count >= 0, g->count);
      json_optional (out, "resident_bytes", g->resident_bytes >= 0, g->resident_bytes);
      json_optional (out, "growth_start_step", g->growth_step > 0, g->growth_step);
      json_optional (out, "growth_bytes", g->growth_step > 0, g->growth_bytes);
      json_optional (out, "bytes_per_step", g->growth_step > 0,
                     tide_sat_from_double (g->bytes_per_step));
      g_string_append (out, ",\"scope\":");
      json_string (out, g->scope_path);
      g_string_append (out, ",\"frames\":[");
      for (guint f = 0; f < g->frames->len; f++)
        {
          TideFrame *fr = g_ptr_array_index (g->frames, f);

          g_string_append (out, f ? ",{\"function\":" : "{\"function\":");
          json_string (out, fr->function);
          g_string_append (out, ",\"file\":");
          json_string (out, fr->file);
          g_string_append_printf (out, ",\"line\":%d,\"module\":", fr->line);
          json_string (out, fr->module);
          g_string_append_printf (out, ",\"offset\":%" G_GINT64_FORMAT ",\"kind\":\"%s\""
                                  ",\"plumbing\":%s,\"library\":%s}", fr->module_offset,
                                  tide_frame_kind_name (fr), fr->plumbing ? "true" : "false",
                                  fr->library ? "true" : "false");
        }
      g_string_append_c (out, ']');
      json_headline (out, g);
      json_scopes (out, g, kind);
      if (kind == TIDE_GROUPS_SUSPECTS)
        g_string_append (out, ",\"kind\":\"stack\",\"class\":null,\"name\":null,\"hint\":null");
      g_string_append_c (out, '}');
    }
  class_suspects_json (out, classes, groups->len + 1);
  g_string_append (out, "]}\n");
}

void
tide_format_groups_detailed (GString         *out,
                             GPtrArray       *groups,
                             TideGroupsKind   kind,
                             TideGroupBy      by,
                             gint             step,
                             TideFormat       format,
                             TideFrameDetail  detail)
{
  if (format == TIDE_FORMAT_CSV)
    groups_csv (out, groups, kind, NULL);
  else if (format == TIDE_FORMAT_JSON)
    groups_json (out, groups, kind, NULL);
  else
    groups_text (out, groups, kind, by, step, detail);
}

static void
class_suspects_text (GString   *out,
                     GPtrArray *classes)
{
  for (guint i = 0; classes != NULL && i < classes->len; i++)
    {
      const TideClassSuspect *s = g_ptr_array_index (classes, i);
      g_autofree char *line = tide_class_suspect_describe (s);

      g_string_append_printf (out, "%sclass: %s\n  %s\n",
                              i ? "" : "\nResident memory that grows step over step:\n",
                              line, s->hint);
    }
}

void
tide_format_suspects (GString         *out,
                      GPtrArray       *groups,
                      GPtrArray       *classes,
                      TideGroupBy      by,
                      TideFormat       format,
                      TideFrameDetail  detail)
{
  if (format == TIDE_FORMAT_CSV)
    groups_csv (out, groups, TIDE_GROUPS_SUSPECTS, classes);
  else if (format == TIDE_FORMAT_JSON)
    groups_json (out, groups, TIDE_GROUPS_SUSPECTS, classes);
  else
    {
      groups_text (out, groups, TIDE_GROUPS_SUSPECTS, by, 0, detail);
      class_suspects_text (out, classes);
    }
}

void
tide_format_groups (GString        *out,
                    GPtrArray      *groups,
                    TideGroupsKind  kind,
                    TideGroupBy     by,
                    gint            step,
                    TideFormat      format)
{
  tide_format_groups_detailed (out, groups, kind, by, step, format, TIDE_FRAMES_AROUND_HEADLINE);
}

/* ---- the job's processes ---------------------------------------------------- */

static gboolean
processes_have_hosts (GPtrArray *summaries)
{
  for (guint i = 0; i < summaries->len; i++)
    if (((TideProcessSummary *) g_ptr_array_index (summaries, i))->process->host != NULL)
      return TRUE;
  return FALSE;
}

static const char *
end_kind_name (TideEndKind kind)
{
  static const char * const names[] = { "unknown", "exited", "signaled", "exec", "running" };

  return kind <= TIDE_END_RUNNING ? names[kind] : "unknown";
}

/* The END column: "exit 0", "SIGKILL (OOM) step 29", "SIGSEGV core". */
static char *
end_cell (const TideProcessSummary *s)
{
  const TideProcessEnd *end = &s->process->end;
  g_autoptr(GString) cell = g_string_new (NULL);
  char name[16];

  switch (end->kind)
    {
    case TIDE_END_EXITED:
      g_string_append_printf (cell, "exit %d", end->exit_code);
      break;
    case TIDE_END_SIGNALED:
      g_string_append (cell, tide_signal_name (end->signal, name));
      if (end->oom != TIDE_OOM_NONE)
        g_string_append (cell, " (OOM)");
      else if (end->core_dumped)
        g_string_append (cell, " core");
      break;
    case TIDE_END_EXEC:
    case TIDE_END_RUNNING:
      g_string_append (cell, end_kind_name (end->kind));
      break;
    case TIDE_END_UNKNOWN:
    default:
      g_string_append (cell, "unknown");
      break;
    }
  if (end->device_oom && end->oom_device >= 0)
    g_string_append_printf (cell, " (cuda:%d OOM)", end->oom_device);
  else if (end->device_oom)
    g_string_append (cell, " (pinned OOM)");
  if (s->end_step > 0)
    g_string_append_printf (cell, " step %d", s->end_step);
  return g_string_free (g_steal_pointer (&cell), FALSE);
}

/* After the table, a line for each process that a signal killed or that
 * exited with an error: by what, in which step, and what the job held
 * then; one for each process whose RSS peaked between two readings; and
 * one for each device where its allocations failed. */
static void
processes_notes_text (GString   *out,
                      GPtrArray *summaries)
{
  for (guint i = 0; i < summaries->len; i++)
    {
      const TideProcessSummary *s = g_ptr_array_index (summaries, i);
      g_autofree char *line = tide_process_summary_describe_death (s);
      g_autofree char *unread = tide_process_summary_describe_unread_peak (s);

      if (line != NULL)
        g_string_append_printf (out, "%s\n", line);
      if (unread != NULL)
        g_string_append_printf (out, "%s\n", unread);
      for (guint k = 0; s->device_ooms != NULL && k < s->device_ooms->len; k++)
        {
          g_autofree char *oom = tide_device_oom_describe (g_ptr_array_index (s->device_ooms, k));

          g_string_append_printf (out, "%s\n", oom);
        }
    }
}

/* "main" for the job's first process and the images it exec'd into,
 * "child" for the others.  An exec'd image's parent is the image it
 * replaced, of the same pid: the walk goes back to the first. */
static const char *
command_role (GPtrArray                *summaries,
              const TideProcessSummary *s)
{
  for (guint hops = 0; hops < summaries->len && s->parent_pid == s->process->pid; hops++)
    {
      const TideProcessSummary *replaced = NULL;

      for (guint i = 0; i < summaries->len && replaced == NULL; i++)
        {
          const TideProcessSummary *t = g_ptr_array_index (summaries, i);

          if (t->process->id == s->process->parent_id && t != s)
            replaced = t;
        }
      if (replaced == NULL)
        break;
      s = replaced;
    }
  return s->parent_pid == 0 ? "main" : "child";
}

/* A process's role as the processes report gives it in every format: its
 * label where it has a role of its own ("rank 0", "DataLoader worker 1");
 * else it is named by its command already, and is the job's main process
 * or a child. */
static const char *
process_role (GPtrArray                *summaries,
              const TideProcessSummary *s)
{
  return s->process->role != TIDE_ROLE_COMMAND ? s->process->label : command_role (summaries, s);
}

static void
processes_text (GString   *out,
                GPtrArray *summaries)
{
  gboolean hosts = processes_have_hosts (summaries);
  const char *host = NULL;

  g_string_append_printf (out, "Processes of the job: %u\n%8s %8s  %-22s %5s %12s %12s %6s %8s  %-22s %s\n",
                          summaries->len, "PID", "PARENT", "ROLE", "RANK", "PEAK RSS",
                          "RSS GROWTH", "STEPS", "SUSPECTS", "END", "COMMAND");
  for (guint i = 0; i < summaries->len; i++)
    {
      TideProcessSummary *s = g_ptr_array_index (summaries, i);
      TideProcess *p = s->process;
      g_autofree char *parent = s->parent_pid ? g_strdup_printf ("%" G_GINT64_FORMAT, s->parent_pid)
                                              : g_strdup ("-");
      g_autofree char *rank = p->dist_rank >= 0 ? g_strdup_printf ("%d", p->dist_rank)
                                                : g_strdup ("-");
      g_autofree char *peak = s->has_rss ? tide_format_bytes (s->peak_rss) : g_strdup ("-");
      g_autofree char *growth = s->has_rss ? tide_format_delta (s->rss_growth) : g_strdup ("-");
      g_autofree char *end = end_cell (s);
      const char *role = process_role (summaries, s);

      /* A merged trace's processes come grouped by host (tide-trace-merge.h). */
      if (hosts && (i == 0 || g_strcmp0 (host, p->host) != 0))
        {
          host = p->host;
          g_string_append_printf (out, "host %s\n", host ? host : "(unknown)");
        }

      g_string_append_printf (out, "%8" G_GINT64_FORMAT " %8s  %-22s %5s %12s %12s %6u %8u  %-22s %s\n",
                              p->pid, parent, role, rank, peak, growth, s->n_steps,
                              s->n_suspects, end, p->command);
    }
  processes_notes_text (out, summaries);
}

/* How CSV and JSON name the memory that ran out: "cuda:0", or "pinned"
 * for page-locked host memory (-1). */
static char *
oom_device_label (gint device)
{
  return device >= 0 ? g_strdup_printf ("cuda:%d", device) : g_strdup ("pinned");
}

/* oom_device_label() or "" for the CSV column device_oom. */
static void
device_oom_csv (GString              *out,
                const TideProcessEnd *end)
{
  if (end->device_oom)
    {
      g_autofree char *label = oom_device_label (end->oom_device);

      g_string_append (out, label);
    }
  g_string_append_c (out, ',');
}

static void
processes_end_csv (GString                  *out,
                   const TideProcessSummary *s)
{
  const TideProcessEnd *end = &s->process->end;
  gboolean killed = end->kind == TIDE_END_SIGNALED;
  char name[16];

  g_string_append_printf (out, "%s,", end_kind_name (end->kind));
  csv_optional (out, end->kind == TIDE_END_EXITED, end->exit_code);
  csv_optional (out, killed, end->signal);
  g_string_append_printf (out, "%s,%d,%d,%s,", killed ? tide_signal_name (end->signal, name) : "",
                          killed && end->core_dumped, killed && end->oom != TIDE_OOM_NONE,
                          killed && end->oom != TIDE_OOM_NONE ? tide_oom_scope_name (end->oom) : "");
  csv_optional (out, killed && end->limit_bytes > 0, end->limit_bytes);
  csv_optional (out, s->end_step > 0, s->end_step);
  device_oom_csv (out, end);
}

/* Where its allocations failed: "device_ooms":[{"device":"cuda:0",
 * "failed":1,"fatal":true,"api":"cudaMalloc","bytes":..., the failure
 * named (tide-device-oom.h) and its headline frame}]. */
static void
device_ooms_json (GString   *out,
                  GPtrArray *ooms)
{
  g_string_append (out, ",\"device_ooms\":[");
  for (guint i = 0; ooms != NULL && i < ooms->len; i++)
    {
      const TideDeviceOom *oom = g_ptr_array_index (ooms, i);
      gint h = oom->frames != NULL ? tide_frames_find_headline (oom->frames) : -1;
      const TideFrame *head = h >= 0 ? g_ptr_array_index (oom->frames, h) : NULL;
      g_autofree char *device = oom_device_label (oom->device);

      g_string_append_printf (out, "%s{\"device\":\"%s\",\"failed\":%" G_GINT64_FORMAT
                              ",\"fatal\":%s,\"api\":", i ? "," : "", device, oom->n_failed,
                              oom->fatal ? "true" : "false");
      json_string (out, oom->api);
      g_string_append_printf (out, ",\"bytes\":%" G_GINT64_FORMAT ",\"allocated_bytes\":%"
                              G_GINT64_FORMAT ",\"ts_ns\":%" G_GINT64_FORMAT, oom->bytes,
                              oom->allocated_bytes, oom->ts_ns);
      json_optional (out, "step", oom->step > 0, oom->step);
      g_string_append (out, ",\"function\":");
      json_string (out, head ? head->function : NULL);
      g_string_append (out, ",\"file\":");
      json_string (out, head ? head->file : NULL);
      json_optional (out, "line", head != NULL && head->line > 0, head ? head->line : 0);
      json_optional (out, "kept_bytes", oom->keeper != NULL, oom->keeper_bytes);
      g_string_append (out, ",\"kept_by\":");
      json_string (out, oom->keeper);
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, ']');
}

static void
processes_end_json (GString                  *out,
                    const TideProcessSummary *s)
{
  const TideProcessEnd *end = &s->process->end;
  gboolean killed = end->kind == TIDE_END_SIGNALED;
  gboolean oom = killed && end->oom != TIDE_OOM_NONE;
  char name[16];

  g_string_append_printf (out, ",\"end\":\"%s\"", end_kind_name (end->kind));
  json_optional (out, "exit_code", end->kind == TIDE_END_EXITED, end->exit_code);
  json_optional (out, "signal", killed, end->signal);
  if (killed)
    g_string_append_printf (out, ",\"signal_name\":\"%s\"", tide_signal_name (end->signal, name));
  else
    g_string_append (out, ",\"signal_name\":null");
  g_string_append_printf (out, ",\"core_dumped\":%s,\"oom_killed\":%s",
                          killed && end->core_dumped ? "true" : "false", oom ? "true" : "false");
  if (oom)
    g_string_append_printf (out, ",\"oom_scope\":\"%s\"", tide_oom_scope_name (end->oom));
  else
    g_string_append (out, ",\"oom_scope\":null");
  json_optional (out, "oom_limit_bytes", oom && end->limit_bytes > 0, end->limit_bytes);
  json_optional (out, "end_step", s->end_step > 0, s->end_step);
  json_optional (out, "job_bytes_at_end", killed && s->job_bytes_at_end >= 0, s->job_bytes_at_end);
  device_ooms_json (out, s->device_ooms);
}

static void
processes_csv (GString   *out,
               GPtrArray *summaries)
{
  gboolean hosts = processes_have_hosts (summaries);

  g_string_append (out, "pid,parent_pid,role,dist_rank,peak_rss_bytes,peak_rss_read_bytes,"
                        "rss_growth_bytes,steps,suspects,end,exit_code,signal,signal_name,"
                        "core_dumped,oom_killed,oom_scope,oom_limit_bytes,end_step,device_oom,"
                        "command");
  g_string_append (out, hosts ? ",host\n" : "\n");
  for (guint i = 0; i < summaries->len; i++)
    {
      TideProcessSummary *s = g_ptr_array_index (summaries, i);

      g_string_append_printf (out, "%" G_GINT64_FORMAT ",", s->process->pid);
      csv_optional (out, s->parent_pid != 0, s->parent_pid);
      csv_field (out, process_role (summaries, s));
      g_string_append_c (out, ',');
      csv_optional (out, s->process->dist_rank >= 0, s->process->dist_rank);
      csv_optional (out, s->has_rss, s->peak_rss);
      csv_optional (out, s->has_rss, s->peak_rss_read);
      csv_optional (out, s->has_rss, s->rss_growth);
      g_string_append_printf (out, "%u,%u,", s->n_steps, s->n_suspects);
      processes_end_csv (out, s);
      csv_field (out, s->process->command);
      if (hosts)
        {
          g_string_append_c (out, ',');
          csv_field (out, s->process->host);
        }
      g_string_append_c (out, '\n');
    }
}

static void job_peak_json (GString           *out,
                           const TideJobPeak *peak);

static void
processes_json (GString           *out,
                GPtrArray         *summaries,
                const TideJobPeak *peak)
{
  gboolean hosts = processes_have_hosts (summaries);

  g_string_append (out, "{\"processes\":[");
  for (guint i = 0; i < summaries->len; i++)
    {
      TideProcessSummary *s = g_ptr_array_index (summaries, i);

      g_string_append_printf (out, "%s{\"pid\":%" G_GINT64_FORMAT, i ? "," : "", s->process->pid);
      json_optional (out, "parent_pid", s->parent_pid != 0, s->parent_pid);
      g_string_append (out, ",\"role\":");
      json_string (out, process_role (summaries, s));
      json_optional (out, "dist_rank", s->process->dist_rank >= 0, s->process->dist_rank);
      json_optional (out, "peak_rss_bytes", s->has_rss, s->peak_rss);
      json_optional (out, "peak_rss_read_bytes", s->has_rss, s->peak_rss_read);
      json_optional (out, "rss_growth_bytes", s->has_rss, s->rss_growth);
      g_string_append_printf (out, ",\"steps\":%u,\"suspects\":%u", s->n_steps, s->n_suspects);
      processes_end_json (out, s);
      g_string_append (out, ",\"command\":");
      json_string (out, s->process->command);
      if (hosts)
        {
          g_string_append (out, ",\"host\":");
          json_string (out, s->process->host);
        }
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, ']');
  if (peak != NULL)
    job_peak_json (out, peak);
  g_string_append (out, "}\n");
}

/* The job's peak after the table: a line of text, or a member of the
 * JSON object; CSV has a row per process only. */
static void
job_peak_text (GString           *out,
               const TideJobPeak *peak)
{
  g_autofree char *size = NULL;
  g_autofree char *rise = tide_job_peak_describe_rise (peak);

  if (!peak->known)
    {
      g_string_append (out, "Job peak: no memory readings\n");
      return;
    }
  size = tide_format_bytes (peak->bytes);
  g_string_append_printf (out, "Job peak %s: %s", peak->by_pss ? "PSS" : "RSS summed over processes",
                          size);
  if (peak->step >= 0)
    g_string_append_printf (out, ", in step %d", peak->step);
  if (rise != NULL)
    g_string_append_printf (out, "; %s", rise);
  g_string_append_c (out, '\n');
}

static void
job_peak_json (GString           *out,
               const TideJobPeak *peak)
{
  if (!peak->known)
    {
      g_string_append (out, ",\"job_peak\":null");
      return;
    }
  g_string_append_printf (out, ",\"job_peak\":{\"measure\":\"%s\",\"bytes\":%" G_GINT64_FORMAT
                          ",\"ts_ns\":%" G_GINT64_FORMAT, peak->by_pss ? "pss" : "rss_sum",
                          peak->bytes, peak->ts_ns);
  json_optional (out, "step", peak->step >= 0, peak->step);
  json_optional (out, "rss_rise_after_bytes", peak->rise_bytes > 0, peak->rise_bytes);
  json_optional (out, "rss_rise_step", peak->rise_bytes > 0 && peak->rise_step >= 0,
                 peak->rise_step);
  /* What rose: the RSS, or its anonymous part where the processes shared
   * pages (tide_report_job_peak()). */
  g_string_append (out, ",\"rise_of\":");
  json_string (out, peak->rise_bytes <= 0 ? NULL : peak->rise_anon ? "rss_anon" : "rss");
  g_string_append_c (out, '}');
}

/* @peak: (nullable): the job's peak, said after the processes */
void
tide_format_processes (GString           *out,
                       GPtrArray         *summaries,
                       const TideJobPeak *peak,
                       TideFormat         format)
{
  if (format == TIDE_FORMAT_CSV)
    processes_csv (out, summaries);
  else if (format == TIDE_FORMAT_JSON)
    processes_json (out, summaries, peak);
  else
    {
      processes_text (out, summaries);
      if (peak != NULL)
        job_peak_text (out, peak);
    }
}
