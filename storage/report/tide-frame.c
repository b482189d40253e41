/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * TideFrame: one frame of a recorded stack as reports show it, and the
 * names it goes by.
 */
#include "config.h"

#include <string.h>

#include "tide-frame.h"
#include "tide-plumbing.h"
#include "tide-schema.h"

/* A deep copy of @frame into @copy. */
void
tide_frame_copy_into (TideFrame       *copy,
                      const TideFrame *frame)
{
  *copy = *frame;
  copy->function = g_strdup (frame->function);
  copy->file = g_strdup (frame->file);
  copy->file_name = g_strdup (frame->file_name);
  copy->module = g_strdup (frame->module);
}

/* Frees what tide_frame_copy_into() copied, not @frame itself. */
void
tide_frame_clear (TideFrame *frame)
{
  g_clear_pointer (&frame->function, g_free);
  g_clear_pointer (&frame->file, g_free);
  g_clear_pointer (&frame->file_name, g_free);
  g_clear_pointer (&frame->module, g_free);
}

TideFrame *
tide_frame_copy (const TideFrame *frame)
{
  TideFrame *copy = g_new (TideFrame, 1);

  tide_frame_copy_into (copy, frame);
  return copy;
}

void
tide_frame_free (TideFrame *frame)
{
  if (frame == NULL)
    return;
  tide_frame_clear (frame);
  g_free (frame);
}

/* The name a frame's source file goes by: an installed package's file by
 * its path in the package (torch/nn/modules/linear.py: several packages
 * have a module.py); another by its base name, with its folder where the
 * base name says nothing of its own, as "__init__.py" or "__main__.py". */
char *
tide_frame_file_name (const char *path)
{
  g_autofree char *base = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *package = NULL;
  const char *installed = _tide_python_installed_name (path);

  if (installed != NULL && *installed != '\0')
    return g_strdup (installed);
  base = g_path_get_basename (path);

  if (strcmp (base, "__init__.py") != 0 && strcmp (base, "__main__.py") != 0)
    return g_steal_pointer (&base);
  dir = g_path_get_dirname (path);
  package = g_path_get_basename (dir);
  if (strcmp (package, ".") == 0 || strcmp (package, G_DIR_SEPARATOR_S) == 0)
    return g_steal_pointer (&base);
  return g_build_filename (package, base, NULL);
}

/* The name of @frame's file: the trace's, unique in it, else
 * tide_frame_file_name()'s. */
char *
tide_frame_dup_file_name (const TideFrame *frame)
{
  return frame->file_name != NULL ? g_strdup (frame->file_name) : tide_frame_file_name (frame->file);
}

/* "function (file:line)", "function (module+0x1f0)" or "module+0x1f0". */
char *
tide_frame_describe (const TideFrame *frame)
{
  g_autofree char *base = NULL;

  if (frame->kind == TIDE_FRAME_MISSING)
    return g_strdup ("[frames missing]");
  if (frame->module != NULL)
    base = g_path_get_basename (frame->module);

  if (frame->function != NULL && frame->file != NULL && frame->line > 0)
    {
      g_autofree char *file = tide_frame_dup_file_name (frame);
      return g_strdup_printf ("%s (%s:%d)", frame->function, file, frame->line);
    }
  if (frame->function != NULL)
    return base ? g_strdup_printf ("%s (%s)", frame->function, base) : g_strdup (frame->function);
  return g_strdup_printf ("%s+0x%" G_GINT64_MODIFIER "x", base ? base : "??",
                          frame->module_offset);
}

/* "file:line function" when the source is known, so that a headline leads
 * with the line to open; else as tide_frame_describe(). */
char *
tide_frame_describe_source_first (const TideFrame *frame)
{
  if (frame->kind != TIDE_FRAME_MISSING && frame->function != NULL && frame->file != NULL &&
      frame->line > 0)
    {
      g_autofree char *file = tide_frame_dup_file_name (frame);
      return g_strdup_printf ("%s:%d %s", file, frame->line, frame->function);
    }
  return tide_frame_describe (frame);
}

/* The kind as JSON and the GUI name it. */
const char *
tide_frame_kind_name (const TideFrame *frame)
{
  switch (frame->kind)
    {
    case TIDE_FRAME_PYTHON:
      return "python";
    case TIDE_FRAME_INLINE:
      return "inline";
    case TIDE_FRAME_KERNEL:
      return "kernel";
    case TIDE_FRAME_MISSING:
      return "missing";
    default:
      return "native";
    }
}
