/* SPDX-License-Identifier: GPL-3.0-or-later
 * Copyright 2026 The Tidemark authors
 */
#pragma once

extern void *symtest_captured_pc;
extern int (*symtest_beta_pointer) (int);

void symtest_capture_pc (void);
int  symtest_alpha      (int x);
int  symtest_mangled    (int x) __asm__ ("_ZN4tide7symtest7mangledEi");
