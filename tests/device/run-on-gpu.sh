#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# tests/device/run-on-gpu.sh: device numbers on a real NVIDIA GPU.
# Never run by CI.  From the repository root:
#   tests/device/run-on-gpu.sh [BUILD_DIR]        (default _build_gpu)
#
# One CUDA: $CUDA_HOME (default /usr/local/cuda).  Its lib64 has the
# libcudart that gpu-check links and runs with, and its include folder is
# what the build checks Tidemark's own CUDA declarations against
# (-Dnvidia_include_dir, test-cuda-abi); nothing else is looked up.
# Builds (or reconfigures) BUILD_DIR, refuses to go on unless the preload
# has its CUDA hooks, then:
#  0. test-cuda-abi, where $CUDA_HOME/include has the headers;
#  1. gpu-check (real libcudart): our live device bytes at each step end
#     against cudaMemGetInfo's growth since the baseline, within 2%; the
#     transfers against the known copies exactly; the recorder's NVML
#     reading of gpu-check's own usage against gpu-check's own NVML
#     reading of itself at the same moment, within 2%;
#  2. if /usr/bin/python3 has torch with CUDA: a real training step; our
#     device bytes at each step end against torch.cuda.memory_reserved
#     (the caching allocator's segments), within 2%.
# Every check prints one PASS/FAIL line; a value that is missing on either
# side is a FAIL, never a comparison of two blanks.  Check 2 runs even when
# check 1 could not be built.  Exit status 1 if anything failed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/_build_gpu}
out=$(mktemp -d /tmp/tide-gpu-XXXXXX)
cuda=${CUDA_HOME:-/usr/local/cuda}
cudalib=$cuda/lib64
failed=0
# CUDA numbers devices as NVML does (the recorder assumes it, tide-nvml.c).
export CUDA_DEVICE_ORDER=PCI_BUS_ID

say () { echo "run-on-gpu: $*"; }
fail () { echo "FAIL $*"; failed=1; }
is_number () { [[ ${1:-} =~ ^-?[0-9]+$ ]]; }
check () {  # name ours theirs tolerance(fraction)
  if ! is_number "${2:-}" || ! is_number "${3:-}"; then
    fail "$1: a value is missing (ours '${2:-}', reference '${3:-}')"
    return
  fi
  awk -v n="$1" -v a="$2" -v b="$3" -v t="$4" 'BEGIN {
    d = a - b; if (d < 0) d = -d; lim = t * (b > 0 ? b : 1);
    printf "%s %s: ours %d, reference %d, off by %.3f%%\n", (d <= lim ? "PASS" : "FAIL"), n, a, b,
           (b > 0 ? 100 * d / b : 0); exit (d <= lim ? 0 : 1) }' || failed=1
}
# csv_column FILE NAME: the 1-based index of column NAME in FILE's header.
csv_column () { head -1 "$1" | tr , '\n' | grep -n "^$2\$" | cut -d: -f1; }
# csv_value FILE STEP COLUMN: the value of COLUMN in the row of STEP.
csv_value () {
  [ -n "$3" ] || return 0
  awk -F, -v s="$2" -v c="$3" 'NR > 1 && $2 == s {print $c}' "$1"
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || say "no nvidia-smi"
say "CUDA: $cuda"

# --- build ---
if [ -f "$build/build.ninja" ]; then
  meson configure "$build" -Dnvidia_include_dir="$cuda/include" >/dev/null
else
  meson setup "$build" "$root" -Dnvidia_include_dir="$cuda/include" >/dev/null
fi || { say "cannot configure $build"; exit 1; }
ninja -C "$build" >/dev/null || { say "build failed"; exit 1; }
tidemark=$build/app/tidemark
preload=$build/capture/preload/libtidemark-preload.so
for hook in cudaMalloc cudaFree cudaMemcpy cuMemAlloc_v2 cuGetProcAddress_v2; do
  if ! nm -D --defined-only "$preload" 2>/dev/null | grep -qw "$hook"; then
    say "$preload has no $hook hook: device capture is not built, nothing to check"
    exit 1
  fi
done

# --- 0. our CUDA declarations against this CUDA's headers ---
if meson test -C "$build" --list 2>/dev/null | grep -q test-cuda-abi; then
  if meson test -C "$build" --no-rebuild test-cuda-abi >/dev/null; then
    echo "PASS tide-cuda-abi.h agrees with $cuda/include"
  else
    fail "tide-cuda-abi.h against $cuda/include (see $build/meson-logs/testlog.txt)"
  fi
else
  say "no CUDA headers in $cuda/include: declarations not checked"
fi

# --- 1. a real CUDA program ---
if cc -O1 -g -I"$root/capture" -I"$root/capture/include" "$root/tests/device/gpu-check.c" \
      -L"$cudalib" -lcudart -ldl -Wl,-rpath,"$cudalib" -o "$out/gpu-check"; then
  "$tidemark" record -q --all -o "$out/c.tide" -- "$out/gpu-check" > "$out/c.out" \
    || fail "gpu-check under tidemark record (status $?)"
  "$tidemark" report "$out/c.tide" --steps --format csv > "$out/c.csv" \
    || fail "tidemark report of gpu-check's trace"
  base=$(awk '$1 == "baseline" {print $3}' "$out/c.out")
  col=$(csv_column "$out/c.csv" cuda0_end_bytes)
  h2d=$(csv_column "$out/c.csv" h2d_bytes)
  d2h=$(csv_column "$out/c.csv" d2h_bytes)
  for step in 4 8; do
    theirs=$(awk -v s=$step '$1 == "step" && $2 == s {print $4}' "$out/c.out")
    growth=
    if is_number "$theirs" && is_number "$base"; then growth=$((theirs - base)); fi
    check "gpu-check step $step: device bytes vs cudaMemGetInfo growth" \
          "$(csv_value "$out/c.csv" $step "$col")" "$growth" 0.02
    check "gpu-check step $step: H2D bytes" "$(csv_value "$out/c.csv" $step "$h2d")" $((64 << 20)) 0
    check "gpu-check step $step: D2H bytes" "$(csv_value "$out/c.csv" $step "$d2h")" $((64 << 20)) 0
  done
  # NVML: gpu-check's own usage as NVML reports it to gpu-check, against
  # the recorder's NVML reading of the same process, in effect half a
  # second into the HOLD_MS that gpu-check keeps its final state.
  final_ns=$(awk '$1 == "final" {print $3}' "$out/c.out")
  own=$(awk '$1 == "final" {print $5}' "$out/c.out")
  if [ "$own" = none ]; then
    say "NVML cannot tell gpu-check its own usage (no NVML, or a pid namespace): NVML check skipped"
  elif ! command -v sqlite3 >/dev/null; then
    fail "NVML check: no sqlite3 command to read the trace"
  elif ! is_number "$final_ns"; then
    fail "NVML check: gpu-check printed no final line"
  else
    nvml=$(sqlite3 "$out/c.tide" "SELECT value FROM counters c JOIN processes p
             ON p.id = c.process_id WHERE c.counter = 8 AND c.device = 0
             AND p.parent_id IS NULL AND c.ts_ns <= $final_ns + 500000000
             ORDER BY c.ts_ns DESC LIMIT 1")
    check "gpu-check: NVML usage of this process, recorder's reading vs its own" "$nvml" "$own" 0.02
  fi
else
  fail "cannot build gpu-check against $cudalib/libcudart"
fi

# --- 2. PyTorch, if it has CUDA (its wheel brings its own libcudart) ---
if /usr/bin/python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  "$tidemark" record -q --all -o "$out/t.tide" -- /usr/bin/python3 "$root/tests/device/gpu-torch-step.py" > "$out/t.out" \
    || fail "gpu-torch-step.py under tidemark record (status $?)"
  "$tidemark" report "$out/t.tide" --steps --format csv > "$out/t.csv" \
    || fail "tidemark report of the torch trace"
  col=$(csv_column "$out/t.csv" cuda0_end_bytes)
  for step in 1 3 6; do
    theirs=$(awk -v s=$step '$1 == "step" && $2 == s {print $4}' "$out/t.out")
    check "torch step $step: device bytes vs torch.cuda.memory_reserved" \
          "$(csv_value "$out/t.csv" $step "$col")" "$theirs" 0.02
  done
else
  say "no PyTorch with CUDA on /usr/bin/python3: torch check skipped"
fi
say "files in $out"
exit $failed
