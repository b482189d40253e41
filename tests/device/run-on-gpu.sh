#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# tests/device/run-on-gpu.sh: device numbers on a real NVIDIA GPU (issue 4).
# Never run by CI.  From the repository root:
#   tests/device/run-on-gpu.sh [BUILD_DIR]        (default _build_gpu)
# Builds if needed, then:
#  1. gpu-check (real libcudart): our live device bytes at each step end
#     against cudaMemGetInfo's growth since the baseline, within 2%; the
#     transfers against the known copies exactly; NVML's device_process
#     counter (when NVML is there) against cudaMemGetInfo, within 2%.
#  2. if /usr/bin/python3 has torch with CUDA: a real training step; our
#     device bytes at each step end against torch.cuda.memory_reserved
#     (the caching allocator's segments), within 2%.
# Prints one PASS/FAIL line per check; exit status 1 if any failed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/_build_gpu}
out=$(mktemp -d /tmp/tide-gpu-XXXXXX)
cuda=${CUDA_HOME:-/usr/local/cuda}
failed=0

say () { echo "run-on-gpu: $*"; }
check () {  # name ours theirs tolerance(fraction)
  awk -v n="$1" -v a="$2" -v b="$3" -v t="$4" 'BEGIN {
    d = a - b; if (d < 0) d = -d; lim = t * (b > 0 ? b : 1);
    printf "%s %s: ours %d, reference %d, off by %.3f%%\n", (d <= lim ? "PASS" : "FAIL"), n, a, b,
           (b > 0 ? 100 * d / b : 0); exit (d <= lim ? 0 : 1) }' || failed=1
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || say "no nvidia-smi"
if [ ! -x "$build/app/tidemark" ]; then
  (cd "$root" && meson setup "$build" >/dev/null && ninja -C "$build" >/dev/null) || { say "build failed"; exit 1; }
fi
tidemark=$build/app/tidemark

# --- 1. a real CUDA program ---
cc -O1 -g -I"$cuda/include" -I"$root/capture/include" "$root/tests/device/gpu-check.c" \
   -L"$cuda/lib64" -lcudart -ldl -Wl,-rpath,"$cuda/lib64" -o "$out/gpu-check" || { say "cannot build gpu-check"; exit 1; }
"$tidemark" record -q --all -o "$out/c.tide" -- "$out/gpu-check" > "$out/c.out" || failed=1
"$tidemark" report "$out/c.tide" --steps --format csv > "$out/c.csv" || failed=1
base=$(awk '/^baseline/ {print $3}' "$out/c.out")
col=$(head -1 "$out/c.csv" | tr , '\n' | grep -n '^cuda0_end_bytes$' | cut -d: -f1)
h2d=$(head -1 "$out/c.csv" | tr , '\n' | grep -n '^h2d_bytes$' | cut -d: -f1)
d2h=$(head -1 "$out/c.csv" | tr , '\n' | grep -n '^d2h_bytes$' | cut -d: -f1)
for step in 4 8; do
  theirs=$(awk -v s=$step '$1 == "step" && $2 == s {print $4}' "$out/c.out")
  ours=$(awk -F, -v s=$step -v c="$col" 'NR > 1 && $2 == s {print $c}' "$out/c.csv")
  check "gpu-check step $step: device bytes vs cudaMemGetInfo growth" "$ours" "$((theirs - base))" 0.02
  check "gpu-check step $step: H2D bytes" "$(awk -F, -v s=$step -v c="$h2d" 'NR > 1 && $2 == s {print $c}' "$out/c.csv")" $((64 << 20)) 0
  check "gpu-check step $step: D2H bytes" "$(awk -F, -v s=$step -v c="$d2h" 'NR > 1 && $2 == s {print $c}' "$out/c.csv")" $((64 << 20)) 0
done
if command -v sqlite3 >/dev/null; then
  nvml=$(sqlite3 "$out/c.tide" "SELECT max (value) FROM counters WHERE counter = 8 AND device = 0")
  last=$(awk '$1 == "step" {v = $4} END {print v}' "$out/c.out")
  if [ -n "$nvml" ]; then
    check "gpu-check: NVML process usage (max) vs cudaMemGetInfo at the last step" "$nvml" "$last" 0.02
  else
    say "no NVML per-process counter in the trace (no NVML, or pid namespace)"
  fi
fi

# --- 2. PyTorch, if it has CUDA ---
if /usr/bin/python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  "$tidemark" record -q --all -o "$out/t.tide" -- /usr/bin/python3 "$root/tests/device/gpu-torch-step.py" > "$out/t.out" || failed=1
  "$tidemark" report "$out/t.tide" --steps --format csv > "$out/t.csv" || failed=1
  col=$(head -1 "$out/t.csv" | tr , '\n' | grep -n '^cuda0_end_bytes$' | cut -d: -f1)
  for step in 1 3 6; do
    theirs=$(awk -v s=$step '$1 == "step" && $2 == s {print $4}' "$out/t.out")
    ours=$(awk -F, -v s=$step -v c="$col" 'NR > 1 && $2 == s {print $c}' "$out/t.csv")
    check "torch step $step: device bytes vs torch.cuda.memory_reserved" "${ours:-0}" "${theirs:-0}" 0.02
  done
else
  say "no PyTorch with CUDA on /usr/bin/python3: torch check skipped"
fi
say "files in $out"
exit $failed
