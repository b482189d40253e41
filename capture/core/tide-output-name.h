/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Trace names for launchers: `srun tidemark record -o run-%h-%r.tide` gives
 * every rank of a job its own file.  %h is the host name, %p the pid of
 * the tidemark process, %r the rank the launcher set (RANK, SLURM_PROCID,
 * OMPI_COMM_WORLD_RANK or PMI_RANK, the first one set), %% a percent sign.
 *
 * A recording never replaces a trace unasked: the name it writes is
 * claimed before the program starts, as an empty file made only where
 * nothing is (memray's way, not perf's `perf.data.old`: a kept old file is
 * one more file to find, and a third recording would still lose it).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

const char *tide_output_rank_from_env     (void);
gboolean    tide_output_name_is_template  (const char  *name);
char       *tide_output_name_expand       (const char  *name,
                                           const char  *host,
                                           gint64       pid,
                                           const char  *rank,
                                           GError     **error);
char       *tide_output_name_resolve      (const char  *name,
                                           gboolean     force,
                                           GError     **error);
char       *tide_output_name_unique       (const char  *stem,
                                           GError     **error);
void        tide_output_name_release      (const char  *path);

G_END_DECLS
