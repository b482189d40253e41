/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-cli.h: the tidemark command's subcommands, one entry point each.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Exit statuses of the tidemark command besides the target's own. */
#define TIDE_EXIT_OK        0
#define TIDE_EXIT_FAILURE   1
#define TIDE_EXIT_BAD_INPUT 2   /* bad usage, or a trace that cannot be read */
#define TIDE_EXIT_NEW_SUSPECTS 3 /* diff --fail-on-new-suspects: AFTER has a new suspect */

int tide_cli_record (int argc, char **argv);
int tide_cli_report (int argc, char **argv);
int tide_cli_export (int argc, char **argv);
int tide_cli_diff   (int argc, char **argv);
int tide_cli_merge  (int argc, char **argv);
int tide_cli_attach (int argc, char **argv);

int tide_cli_fail   (int         status,
                     const char *format,
                     ...) G_GNUC_PRINTF (2, 3);

int tide_cli_storage_failure (GError *error);

char *tide_cli_find_part (const char *override_var,
                          const char *built_path,
                          const char *installed_path);

G_END_DECLS
