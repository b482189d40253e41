/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * tide-application.h: the app: one window per trace.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define TIDE_TYPE_APPLICATION (tide_application_get_type ())

G_DECLARE_FINAL_TYPE (TideApplication, tide_application, TIDE, APPLICATION, AdwApplication)

TideApplication *tide_application_new (void);

G_END_DECLS
