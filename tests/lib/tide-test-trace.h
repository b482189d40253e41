/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * A synthetic trace with exactly known counters for the timeline tests:
 * one process, TEST_N_STEPS steps of TEST_STEP_NS each from time 0, a leak
 * of 96 x 16 KiB per step from step TEST_LEAK_FROM on, and per step k the
 * counters (sampled every TEST_SAMPLE_NS, constant within the step):
 *   RSS          test_rss (k)     = 100 MiB + k * 10 MiB
 *   live heap    test_heap (k)    = k * 4 MiB
 *   cuda:0 used  test_device (k)   = 50 MiB + k * 5 MiB
 * and one host-to-device transfer of 64 MiB at the middle of step 5.
 */
#pragma once

#include <glib.h>

#define TEST_N_STEPS    10
#define TEST_STEP_NS    (100 * G_GINT64_CONSTANT (1000000))
#define TEST_SAMPLE_NS  (10 * G_GINT64_CONSTANT (1000000))
#define TEST_LEAK_FROM  4
#define TEST_MIB        G_GINT64_CONSTANT (1048576)

/* A two-rank job (tide_test_job_trace_write):
 *   rank 0 (pid 100, process 1): RSS 100 MiB, PSS 70 MiB throughout,
 *     JOB_N_STEPS steps, no leak;
 *   rank 1 (pid 101, process 2): RSS 60 MiB + k * 20 MiB and PSS 30 MiB +
 *     k * 20 MiB in its step k, of which 20 MiB file-backed, 10 MiB shmem,
 *     the rest anonymous with 8 MiB that the allocator holds free; and 64
 *     blocks of 16 KiB kept every step from step JOB_LEAK_FROM on.
 * Rank 1's steps start half a step later than rank 0's, so that two sets of
 * step bands drawn over each other would show in the strip.  Rank 0 comes
 * first, as the rank that does not leak did in a real job. */
#define JOB_N_STEPS     10
#define JOB_STEP_NS     (100 * G_GINT64_CONSTANT (1000000))
#define JOB_SAMPLE_NS   (10 * G_GINT64_CONSTANT (1000000))
#define JOB_LEAK_FROM   3
#define job_rank0_rss(k) (100 * TEST_MIB)
#define job_rank1_rss(k) (60 * TEST_MIB + (k) * 20 * TEST_MIB)
#define job_rank0_pss(k) (70 * TEST_MIB)
#define job_rank1_pss(k) (30 * TEST_MIB + (k) * 20 * TEST_MIB)
#define JOB_RANK1_FILE   (20 * TEST_MIB)
#define JOB_RANK1_SHMEM  (10 * TEST_MIB)
#define JOB_RANK1_FREE   (8 * TEST_MIB)

/* The same program half fixed (tide_test_fixed_trace_write, fixed.tide):
 * the same process, stacks, device counter and transfer, but steps of
 * TEST_FIXED_STEP_NS (half as long, so that aligning by step and by time
 * differ), half the leak (TEST_FIXED_LEAK_BLOCKS of 16 KiB a step from
 * TEST_LEAK_FROM on), and RSS and heap that grow half as fast. */
#define TEST_FIXED_STEP_NS   (50 * G_GINT64_CONSTANT (1000000))
#define TEST_FIXED_LEAK_BLOCKS 48
#define test_fixed_rss(k)    (100 * TEST_MIB + (k) * 5 * TEST_MIB)
#define test_fixed_heap(k)   ((k) * 2 * TEST_MIB)

#define test_rss(k)     (100 * TEST_MIB + (k) * 10 * TEST_MIB)
#define test_heap(k)    ((k) * 4 * TEST_MIB)
#define test_device(k)  (50 * TEST_MIB + (k) * 5 * TEST_MIB)

/* Writes the trace into @dir; finished (summaries built) or left open,
 * flushed but still being written, in which case *writer keeps it open. */
char *tide_test_trace_write (const char  *dir,
                             gboolean     finish,
                             gpointer    *writer);
char *tide_test_fixed_trace_write (const char *dir);
char *tide_test_job_trace_write (const char *dir);
void  tide_test_trace_remove (const char *dir,
                              const char *path);
