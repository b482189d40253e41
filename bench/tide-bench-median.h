/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The median that the benches report.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

double tide_bench_median (double *values,
                          guint   n);

G_END_DECLS
