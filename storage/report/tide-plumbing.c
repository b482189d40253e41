/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "tide-plumbing.h"
#include "tide-report-private.h"
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
  GArray    *patterns;  /* Pattern */
  GPtrArray *library;   /* GPatternSpec: more library files */
  GPtrArray *own;       /* GPatternSpec: files that are the user's own */
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
  self->library = g_ptr_array_new_with_free_func ((GDestroyNotify) g_pattern_spec_free);
  self->own = g_ptr_array_new_with_free_func ((GDestroyNotify) g_pattern_spec_free);
  return self;
}

void
tide_plumbing_free (TidePlumbing *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->patterns);
  g_ptr_array_unref (self->library);
  g_ptr_array_unref (self->own);
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

void
tide_plumbing_add_library (TidePlumbing *self,
                           const char   *glob)
{
  if (glob != NULL && *glob != '\0')
    g_ptr_array_add (self->library, g_pattern_spec_new (glob));
}

void
tide_plumbing_add_own (TidePlumbing *self,
                       const char   *glob)
{
  if (glob != NULL && *glob != '\0')
    g_ptr_array_add (self->own, g_pattern_spec_new (glob));
}

#define PLUMBING_SCHEMA_ID "dev.tidemark.Tidemark"

/* The strings of @key, or NULL where an older installed schema lacks it. */
static GStrv
settings_strv (GSettingsSchema *schema,
               const char      *key)
{
  g_autoptr(GSettings) settings = NULL;

  if (!g_settings_schema_has_key (schema, key))
    return NULL;
  settings = g_settings_new_full (schema, NULL, NULL);
  return g_settings_get_strv (settings, key);
}

void
tide_plumbing_add_from_settings (TidePlumbing *self)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;
  g_auto(GStrv) plumbing = NULL;
  g_auto(GStrv) library = NULL;
  g_auto(GStrv) own = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, PLUMBING_SCHEMA_ID, TRUE);
  if (schema == NULL)
    return;
  plumbing = settings_strv (schema, "plumbing-patterns");
  library = settings_strv (schema, "library-patterns");
  own = settings_strv (schema, "own-code-patterns");
  for (guint i = 0; plumbing != NULL && plumbing[i] != NULL; i++)
    tide_plumbing_add (self, plumbing[i], NULL);  /* an empty one is skipped */
  for (guint i = 0; library != NULL && library[i] != NULL; i++)
    tide_plumbing_add_library (self, library[i]);
  for (guint i = 0; own != NULL && own[i] != NULL; i++)
    tide_plumbing_add_own (self, own[i]);
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

static gboolean
any_glob_matches (GPtrArray  *globs,
                  const char *text)
{
  for (guint i = 0; i < globs->len; i++)
    if (g_pattern_spec_match_string (g_ptr_array_index (globs, i), text))
      return TRUE;
  return FALSE;
}

/* The path of an installed Python file below the folder it was installed
 * in: "torch/nn/modules/linear.py" of
 * ".../dist-packages/torch/nn/modules/linear.py", "json/decoder.py" of
 * "/usr/lib/python3.11/json/decoder.py"; NULL for other files. */
const char *
_tide_python_installed_name (const char *path)
{
  static const char *const roots[] = { "/site-packages/", "/dist-packages/" };
  const char *best = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (roots); i++)
    {
      const char *at = g_strrstr (path, roots[i]);

      if (at != NULL && (best == NULL || at + strlen (roots[i]) > best))
        best = at + strlen (roots[i]);
    }
  if (best != NULL)
    return best;
  for (const char *lib = strstr (path, "/lib/python"); lib != NULL; lib = strstr (lib + 1, "/lib/python"))
    {
      const char *p = lib + strlen ("/lib/python");

      while (g_ascii_isdigit (*p) || *p == '.')
        p++;
      if (p > lib + strlen ("/lib/python") && *p == '/')
        best = p + 1;
    }
  return best;
}

/* Where an installation keeps code that is not the user's: a package
 * folder, the standard library's lib/pythonX.Y, or a module frozen into
 * the interpreter ("<frozen importlib._bootstrap>"). */
static gboolean
python_file_is_installed (const char *file)
{
  return g_str_has_prefix (file, "<frozen ") || _tide_python_installed_name (file) != NULL;
}

gboolean
tide_plumbing_is_library (const TidePlumbing *self,
                          const TideFrame    *frame)
{
  if (frame->kind != TIDE_FRAME_PYTHON || frame->file == NULL ||
      any_glob_matches (self->own, frame->file))
    return FALSE;
  return python_file_is_installed (frame->file) || any_glob_matches (self->library, frame->file);
}

typedef enum
{
  PASS_OWN_PYTHON,
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
  if (pass == PASS_OWN_PYTHON)
    return frame->kind == TIDE_FRAME_PYTHON && !frame->library;
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
  for (HeadlinePass pass = PASS_OWN_PYTHON; pass < N_PASSES; pass++)
    for (guint i = 0; i < frames->len; i++)
      if (frame_fits_pass (g_ptr_array_index (frames, i), pass))
        return (gint) i;
  return 0;
}

gboolean
tide_frames_from_tidemark_start (GPtrArray *frames)
{
  /* As data/plumbing.txt names them, in the build tree and installed. */
  static const char *const globs[] = { "*/python/tidemark/*", "*/python/sitecustomize.py" };

  for (guint i = frames != NULL ? frames->len : 0; i > 0; i--)
    {
      const TideFrame *frame = g_ptr_array_index (frames, i - 1);

      if (frame->kind != TIDE_FRAME_PYTHON || frame->file == NULL ||
          g_str_has_prefix (frame->file, "<frozen "))
        continue;
      for (guint k = 0; k < G_N_ELEMENTS (globs); k++)
        if (g_pattern_match_simple (globs[k], frame->file))
          return TRUE;
      return FALSE;
    }
  return FALSE;
}

gint
tide_frames_find_via (GPtrArray *frames,
                      gint       headline)
{
  if (frames == NULL || headline <= 0 || (guint) headline >= frames->len)
    return -1;
  for (gint i = 0; i < headline; i++)
    {
      const TideFrame *frame = g_ptr_array_index (frames, i);

      if (frame_fits_pass (frame, PASS_PYTHON))
        return frame->library ? i : -1;
    }
  return -1;
}

/* Each trace's list, kept on the trace so that every report on it (and
 * what tide_trace_add_plumbing() added) uses the same one. */
static G_DEFINE_QUARK (tide-plumbing, plumbing)

static TidePlumbing *
plumbing_for_trace (TideTrace *trace)
{
  TidePlumbing *self = g_object_get_qdata (G_OBJECT (trace), plumbing_quark ());

  if (self == NULL)
    {
      self = tide_plumbing_new_default ();
      tide_plumbing_add_from_settings (self);
      g_object_set_qdata_full (G_OBJECT (trace), plumbing_quark (), self,
                               (GDestroyNotify) tide_plumbing_free);
    }
  return self;
}

const TidePlumbing *
tide_plumbing_for_trace (TideTrace *trace)
{
  g_return_val_if_fail (TIDE_IS_TRACE (trace), NULL);
  return plumbing_for_trace (trace);
}

gboolean
tide_trace_add_plumbing (TideTrace   *trace,
                         const char  *pattern,
                         GError     **error)
{
  g_return_val_if_fail (TIDE_IS_TRACE (trace), FALSE);
  return tide_plumbing_add (plumbing_for_trace (trace), pattern, error);
}

void
tide_trace_add_library (TideTrace  *trace,
                        const char *glob)
{
  g_return_if_fail (TIDE_IS_TRACE (trace));
  tide_plumbing_add_library (plumbing_for_trace (trace), glob);
}

void
tide_trace_add_own_code (TideTrace  *trace,
                         const char *glob)
{
  g_return_if_fail (TIDE_IS_TRACE (trace));
  tide_plumbing_add_own (plumbing_for_trace (trace), glob);
}
