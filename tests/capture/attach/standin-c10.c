/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * standin-c10.c: a libc10.so without PyTorch's functions, as a torch
 * built otherwise or stripped would be: attach finds the library by name
 * and none of the symbols it probes.
 */
int tide_standin_c10 (void);

int
tide_standin_c10 (void)
{
  return 10;
}
