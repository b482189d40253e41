/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * preload-target.h: what preload-target allocates, shared with the test
 * that checks the records.
 */
#pragma once

#define KNOWN_BASE       30011
#define KNOWN_N          8
#define KNOWN_FREED      4
#define SCOPED_SIZE      40009
#define THREAD_BASE      50021
#define THREAD_N         3
#define THREAD_ALLOCS    5
#define CHILD_SIZE       60013
#define CHILD_ALLOCS     3
#define STORM_BASE       20000
#define STORM_THREADS    8
#define STORM_PER_THREAD 4000
#define KILL_SIZE        70001
#define FIGURES_SIZE     71003
/* family: run with TIDEMARK_SAMPLE_BYTES=FAMILY_SAMPLE_BYTES, so that every
 * block of FAMILY_BASE.. bytes is recorded. */
#define FAMILY_SAMPLE_BYTES 4096
#define FAMILY_BASE      80021
#define FAMILY_CHURN     20000
#define FAMILY_FORK_SIZE 88019
#define FAMILY_CHILD_SIZE 88037
/* fold: run with TIDEMARK_SAMPLE_BYTES=FAMILY_SAMPLE_BYTES too. */
#define FOLD_SAME        91009
#define FOLD_CROSS       91019
#define FOLD_STEP        91033
#define FOLD_REUSE       91039
/* memo: run with TIDEMARK_ALL=1 and TIDEMARK_UNWIND_CHECK=1. */
#define MEMO_ROUNDS      200
#define MEMO_RUN         32     /* allocations in a row from one caller */
#define MEMO_A_SIZE      4001
#define MEMO_B_SIZE      4003
#define MEMO_DEPTH_SIZE  5000   /* + the depth of the recursion */
#define MEMO_SIGNAL_SIZE 4007
/* memo-unload: run with TIDEMARK_SAMPLE_BYTES=MEMO_UNLOAD_SIZE (so that
 * only its blocks are sampled) and TIDEMARK_UNWIND_CHECK=1. */
#define MEMO_UNLOAD_ROUNDS 16
#define MEMO_UNLOAD_RUN    16
#define MEMO_UNLOAD_SIZE   (64u << 20)
/* sampler: run with TIDEMARK_SAMPLE_BYTES=SAMPLER_MEAN and a seed.
 * SAMPLER_ROUNDS rounds of one malloc and free of each size below, in
 * this order, in the main thread; the last is above the mean. */
#define SAMPLER_MEAN     4096
#define SAMPLER_ROUNDS   40000
#define SAMPLER_N_SIZES  5
#define SAMPLER_SIZES    { 17, 101, 1003, 3001, 5003 }
/* sampler-realloc: the same, but each round is one block grown by realloc
 * through the sizes below, then freed. */
#define SAMPLER_REALLOC_N_SIZES 3
#define SAMPLER_REALLOC_SIZES   { 24, 48, 96 }
