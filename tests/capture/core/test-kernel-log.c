/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The OOM killer's victim in a record of the kernel's log, as the kernels
 * since 5.x print it for a machine's OOM and for a memory cgroup's, and
 * the records that name none.
 */
#include "config.h"

#include <glib.h>

#include "tide-kernel-log.h"

static void
test_parse_victims (void)
{
  g_assert_cmpint (tide_kernel_log_parse_oom_victim (
                       "Out of memory: Killed process 4242 (python3) total-vm:8123456kB, "
                       "anon-rss:7000000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:14000kB "
                       "oom_score_adj:0"), ==, 4242);
  g_assert_cmpint (tide_kernel_log_parse_oom_victim (
                       "Memory cgroup out of memory: Killed process 17 (dying-steps) total-vm:"
                       "101000kB, anon-rss:98304kB, file-rss:1200kB, shmem-rss:0kB, UID:0 "
                       "pgtables:240kB oom_score_adj:0"), ==, 17);
  /* A comm with spaces and parentheses is after the pid. */
  g_assert_cmpint (tide_kernel_log_parse_oom_victim ("Out of memory: Killed process 9 (a (b) c)"),
                   ==, 9);
}

static void
test_parse_others (void)
{
  const char *records[] = {
    "oom_reaper: reaped process 4242 (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
    "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
    "Killed process (python3)",
    "Killed process 12abc (x)",
    "Killed process -4 (x)",
    "Killed process 0 (x)",
    "Killed process 99999999999999999999 (x)",
    "Killed process 12",
    "Killed process 12 x",
    "",
  };

  for (guint i = 0; i < G_N_ELEMENTS (records); i++)
    g_assert_cmpint (tide_kernel_log_parse_oom_victim (records[i]), ==, -1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture/kernel-log/parse-victims", test_parse_victims);
  g_test_add_func ("/capture/kernel-log/parse-others", test_parse_others);
  return g_test_run ();
}
