/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 *
 * The sizes cuda-trainer uses, shared with test-cuda-record.c.
 */
#pragma once

#define KiB 1024
#define LAYERS             4
#define LAYER_BYTES        (1024 * KiB)
#define OPT_BYTES          (2048 * KiB)
#define STAGING_BYTES      (256 * KiB)
#define ACT_BYTES          (512 * KiB)
#define GRAD_BYTES         (128 * KiB)
#define SCRATCH_BYTES      (64 * KiB)
#define H2D_RT_BYTES       (64 * KiB)
#define H2D_DRV_BYTES      (16 * KiB)
#define D2H_BYTES          (32 * KiB)
#define LEAK_BYTES         (300 * KiB)
#define PINNED_LEAK_BYTES  (96 * KiB)
#define STEPS              6

/* cuda-oom, on a device of OOM_DEVICE_MIB. */
#define OOM_DEVICE_MIB     100
#define OOM_WEIGHT_BYTES   (24 * 1024 * KiB)
#define OOM_BUCKET_BYTES   (8 * 1024 * KiB)
#define OOM_ACT_BYTES      (16 * 1024 * KiB)
#define OOM_FAIL_STEP      8
#define OOM_PINNED_MIB     40   /* cuda-oom pinned: fails in step 6 */
