/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * test-plugin.c: libtide-test-plugin.so, dlopen'ed by dlopen-leak.
 * plugin_leak_rows(n) leaks n blocks of 4096 bytes.
 */
#include <stdlib.h>
#include <string.h>

#define PLUGIN_ROW_SIZE 4096

typedef struct Row
{
  struct Row *next;
} Row;

static Row *plugin_rows;

int plugin_leak_rows (int n);

__attribute__ ((noinline)) int
plugin_leak_rows (int n)
{
  for (int i = 0; i < n; i++)
    {
      Row *row = malloc (PLUGIN_ROW_SIZE);

      if (row == NULL)
        return -1;
      memset (row, 'r', PLUGIN_ROW_SIZE);
      row->next = plugin_rows;
      plugin_rows = row;
    }
  return n;
}
