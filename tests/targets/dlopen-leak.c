/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * dlopen-leak: dlopens libtide-test-plugin.so from the directory of this
 * executable and, in each of 5 steps, calls plugin_leak_rows (64): 64 blocks
 * of 4096 bytes leaked per step from code that was not mapped at startup.
 * The plugin stays loaded until exit.
 */
#include "tidemark.h"
#include "target-util.h"

#define DLOPEN_STEPS     5
#define ROWS_PER_STEP    64

int
main (void)
{
  char *path = target_sibling_path ("libtide-test-plugin.so");
  int (*leak_rows) (int);
  void *plugin;

  if (path == NULL)
    return 1;
  plugin = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  free (path);
  if (plugin == NULL)
    {
      fprintf (stderr, "dlopen-leak: %s\n", dlerror ());
      return 1;
    }
  *(void **) &leak_rows = dlsym (plugin, "plugin_leak_rows");
  if (leak_rows == NULL)
    return 1;

  for (int step = 1; step <= DLOPEN_STEPS; step++)
    {
      if (leak_rows (ROWS_PER_STEP) != ROWS_PER_STEP)
        return 1;
      tidemark_step (NULL);
    }

  printf ("dlopen-leak done\n");
  return 0;
}
