/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * nofp-leak: a leak four calls under main in code built as distributions
 * build their libraries, at -O2 without frame pointers, for attach's
 * DWARF unwinding.  Every call is followed by work of its caller, so none
 * becomes a jump (a tail call leaves no frame of its caller).
 *
 * With --wait it first reads one line from stdin (the test says "go" once
 * attached).  Then main -> nofp_build_model -> nofp_add_layer (LAYERS
 * times) -> nofp_alloc_weights -> nofp_fill_weights mallocs WEIGHT_BYTES
 * and fills them with memset, and keeps them all until it exits.
 */
#include "target-util.h"

#define LAYERS        3
#define WEIGHT_BYTES  (1u << 20)

static char *weights[LAYERS];

TARGET_NOINLINE char *
nofp_fill_weights (size_t size,
                   int    value)
{
  char *block = malloc (size);

  if (block != NULL)
    memset (block, value, size);  /* LEAK-LINE */
  target_keep (block);
  return block;
}

TARGET_NOINLINE size_t
nofp_alloc_weights (int layer)
{
  char *block = nofp_fill_weights (WEIGHT_BYTES, layer + 1);

  weights[layer] = block;
  target_keep (block);
  return block != NULL ? WEIGHT_BYTES : 0;
}

TARGET_NOINLINE size_t
nofp_add_layer (int layer)
{
  size_t bytes = nofp_alloc_weights (layer);

  target_keep (&bytes);
  return bytes;
}

TARGET_NOINLINE size_t
nofp_build_model (int layers)
{
  size_t total = 0;

  for (int layer = 0; layer < layers; layer++)
    total += nofp_add_layer (layer);
  target_keep (&total);
  return total;
}

int
main (int    argc,
      char **argv)
{
  char line[64];
  size_t kept;

  if (argc > 1 && strcmp (argv[1], "--wait") == 0)
    {
      fprintf (stderr, "nofp-leak: waiting\n");
      if (fgets (line, sizeof line, stdin) == NULL)
        return 3;
    }
  kept = nofp_build_model (LAYERS);
  printf ("nofp-leak: %d layers, %zu MiB kept, first byte %d\n", LAYERS, kept >> 20,
          weights[LAYERS - 1] != NULL ? weights[LAYERS - 1][0] : -1);
  return kept == (size_t) LAYERS * WEIGHT_BYTES ? 0 : 1;
}
