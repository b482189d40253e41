/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "tide-plumbing.h"
#include "tide-schema.h"
#include "tide-storage-resources.h"

#define PLUMBING_RESOURCE "/dev/tidemark/Tidemark/plumbing.txt"

typedef enum
{
  MATCH_FUNCTION,
  MATCH_MODULE,
  MATCH_FILE,
} MatchOn;

typedef struct
{
  MatchOn       on;
  GPatternSpec *glob;
} Pattern;

struct _TidePlumbing
{
  GArray *patterns;  /* Pattern */
};

static void
pattern_clear (Pattern *pattern)
{
  g_pattern_spec_free (pattern->glob);
}

static TidePlumbing *
tide_plumbing_new_empty (void)
{
  TidePlumbing *self = g_new0 (TidePlumbing, 1);

  self->patterns = g_array_new (FALSE, FALSE, sizeof (Pattern));
  g_array_set_clear_func (self->patterns, (GDestroyNotify) pattern_clear);
  return self;
}

void
tide_plumbing_free (TidePlumbing *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->patterns);
  g_free (self);
}

gboolean
tide_plumbing_add (TidePlumbing  *self,
                   const char    *pattern,
                   GError       **error)
{
  Pattern p = { MATCH_FUNCTION, NULL };

  if (g_str_has_prefix (pattern, "module:"))
    {
      p.on = MATCH_MODULE;
      pattern += strlen ("module:");
    }
  else if (g_str_has_prefix (pattern, "file:"))
    {
      p.on = MATCH_FILE;
      pattern += strlen ("file:");
    }
  if (*pattern == '\0')
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "empty plumbing pattern");
      return FALSE;
    }
  p.glob = g_pattern_spec_new (pattern);
  g_array_append_val (self->patterns, p);
  return TRUE;
}

/* Lines of the shipped list; comments and blank lines are skipped, and the
 * surrounding blanks of a pattern are not part of it. */
static void
add_lines (TidePlumbing *self,
           const char   *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *line = g_strstrip (lines[i]);

      if (*line != '\0' && *line != '#')
        tide_plumbing_add (self, line, NULL);
    }
}

TidePlumbing *
tide_plumbing_new_default (void)
{
  TidePlumbing *self = tide_plumbing_new_empty ();
  /* Looked up in the resource itself rather than the global set: a static
   * library's registration constructor is not linked in when nothing
   * refers to it. */
  g_autoptr(GBytes) bytes = g_resource_lookup_data (tide_storage_get_resource (),
                                                    PLUMBING_RESOURCE,
                                                    G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  g_autofree char *text = NULL;

  /* Compiled in: missing only if the build is broken. */
  g_return_val_if_fail (bytes != NULL, self);
  text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  add_lines (self, text);
  return self;
}

#define PLUMBING_SCHEMA_ID "dev.tidemark.Tidemark"
#define PLUMBING_KEY       "plumbing-patterns"

void
tide_plumbing_add_from_settings (TidePlumbing *self)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;
  g_autoptr(GSettings) settings = NULL;
  g_auto(GStrv) patterns = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, PLUMBING_SCHEMA_ID, TRUE);
  /* An older installed schema may lack the key. */
  if (schema == NULL || !g_settings_schema_has_key (schema, PLUMBING_KEY))
    return;
  settings = g_settings_new_full (schema, NULL, NULL);
  patterns = g_settings_get_strv (settings, PLUMBING_KEY);
  for (guint i = 0; patterns[i] != NULL; i++)
    tide_plumbing_add (self, patterns[i], NULL);  /* an empty one is skipped */
}

static gboolean
glob_matches (GPatternSpec *glob,
              const char   *text)
{
  return text != NULL && g_pattern_spec_match_string (glob, text);
}

gboolean
tide_plumbing_matches (const TidePlumbing *self,
                       const TideFrame    *frame)
{
  g_autofree char *module = frame->module ? g_path_get_basename (frame->module) : NULL;

  for (guint i = 0; i < self->patterns->len; i++)
    {
      const Pattern *p = &g_array_index (self->patterns, Pattern, i);
      const char *text = p->on == MATCH_FUNCTION ? frame->function
                       : p->on == MATCH_MODULE ? module : frame->file;

      if (glob_matches (p->glob, text))
        return TRUE;
    }
  return FALSE;
}

typedef enum
{
  PASS_PYTHON,
  PASS_NAMED_NATIVE,
  PASS_ANY_NATIVE,
  N_PASSES,
} HeadlinePass;

static gboolean
frame_fits_pass (const TideFrame *frame,
                 HeadlinePass     pass)
{
  if (frame->plumbing)
    return FALSE;
  if (pass == PASS_PYTHON)
    return frame->kind == TIDE_FRAME_PYTHON;
  if (frame->kind != TIDE_FRAME_NATIVE && frame->kind != TIDE_FRAME_INLINE)
    return FALSE;
  return pass == PASS_ANY_NATIVE || frame->function != NULL;
}

gint
tide_frames_find_headline (GPtrArray *frames)
{
  if (frames == NULL || frames->len == 0)
    return -1;
  for (HeadlinePass pass = PASS_PYTHON; pass < N_PASSES; pass++)
    for (guint i = 0; i < frames->len; i++)
      if (frame_fits_pass (g_ptr_array_index (frames, i), pass))
        return (gint) i;
  return 0;
}
