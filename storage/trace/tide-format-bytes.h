/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * Sizes as people read them: "512 B", "1.50 MiB", "-2.00 GiB"; deltas
 * with their sign, "+64.00 KiB".
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

char *tide_format_bytes (gint64 bytes);
char *tide_format_delta (gint64 bytes);

G_END_DECLS
