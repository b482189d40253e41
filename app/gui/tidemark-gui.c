/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#include "config.h"

#include "tide-application.h"

int
main (int   argc,
      char *argv[])
{
  g_autoptr(TideApplication) app = NULL;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);

  /* Run from the build tree, use the schema compiled there. */
  if (self != NULL && g_str_has_prefix (self, TIDE_BUILD_ROOT "/"))
    g_setenv ("GSETTINGS_SCHEMA_DIR", TIDE_BUILD_ROOT "/data", FALSE);

  app = tide_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
