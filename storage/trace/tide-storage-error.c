/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-storage-error.h"

G_DEFINE_QUARK (tide-storage-error-quark, tide_storage_error)
