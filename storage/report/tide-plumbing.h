/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-plumbing.h: which frames are allocator and runtime plumbing, and so
 * which frame of a stack is its headline, the one a person would change.
 *
 * The list is data: data/plumbing.txt, compiled in as a resource, plus
 * what the user adds (`report --plumbing`, the plumbing-patterns key).
 * Every report, the CLI's and the GUI's, names a stack by the headline
 * computed here.
 */
#pragma once

#include "tide-frame.h"
#include "tide-trace.h"

G_BEGIN_DECLS

typedef struct _TidePlumbing TidePlumbing;

/* The shipped list (data/plumbing.txt). */
TidePlumbing *tide_plumbing_new_default (void);
void          tide_plumbing_free        (TidePlumbing    *self);
/* One more pattern, in the syntax of the shipped list: GLOB on the
 * function, module:GLOB on the ELF file's base name, file:GLOB on the
 * source file.  FALSE, with @error set, for an empty pattern. */
gboolean      tide_plumbing_add         (TidePlumbing    *self,
                                         const char      *pattern,
                                         GError         **error);
/* Library code: Python frames whose source file is under a site-packages
 * or dist-packages folder, or the interpreter's lib/pythonX.Y (or frozen
 * in it), and those matching a pattern added here (GLOB on the source
 * file's path); but never a file that matches an own-code pattern, for
 * people who work on the library itself. */
void          tide_plumbing_add_library (TidePlumbing    *self,
                                         const char      *glob);
void          tide_plumbing_add_own     (TidePlumbing    *self,
                                         const char      *glob);
/* Adds the patterns of the plumbing-patterns, library-patterns and
 * own-code-patterns keys of the app's settings, when its schema is
 * installed, so that the CLI and the GUI agree. */
void          tide_plumbing_add_from_settings (TidePlumbing *self);
gboolean      tide_plumbing_matches     (const TidePlumbing *self,
                                         const TideFrame    *frame);
gboolean      tide_plumbing_is_library  (const TidePlumbing *self,
                                         const TideFrame    *frame);

/* The index of the headline in @frames (TideFrame*, innermost first, their
 * plumbing and library flags set): the innermost Python frame of the
 * user's code that is not plumbing; else the innermost Python frame that
 * is not; else the innermost named native or inline frame that is not;
 * else the innermost unnamed one that is not; else frame 0.  -1 when
 * empty. */
gint          tide_frames_find_headline (GPtrArray       *frames);
/* Whether the outermost Python frame of @frames (TideFrame*, innermost
 * first), past the interpreter's frozen start-up, is Tidemark's own
 * package: a block allocated as the profiler started in the program,
 * whatever its headline, which skips those frames as plumbing.  (The
 * user's `import torch` runs through the package's import hook too, but
 * from the user's frame.) */
gboolean      tide_frames_from_tidemark_start (GPtrArray *frames);
/* The library frame that the user's headline @headline reached the
 * allocation through: the innermost Python frame that is not plumbing,
 * when it is library code and not the headline; else -1. */
gint          tide_frames_find_via      (GPtrArray       *frames,
                                         gint             headline);

/* The list every report on @trace uses: the shipped one and the settings'
 * patterns, created at first use, plus what was added to it below. */
const TidePlumbing *tide_plumbing_for_trace (TideTrace *trace);
/* Adds a plumbing pattern to the list of every report on @trace. */
gboolean      tide_trace_add_plumbing   (TideTrace       *trace,
                                         const char      *pattern,
                                         GError         **error);
/* A glob on Python source paths that are library code, or the user's own
 * code even where installed, for every report on @trace. */
void          tide_trace_add_library    (TideTrace       *trace,
                                         const char      *glob);
void          tide_trace_add_own_code   (TideTrace       *trace,
                                         const char      *glob);

/* The path of an installed Python file (a package's, the standard
 * library's) below the folder it was installed in; NULL for the user's own
 * files. */
const char   *_tide_python_installed_name (const char *path);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TidePlumbing, tide_plumbing_free)

G_END_DECLS
