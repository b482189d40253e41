#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# tools/build-without-cuda.sh [BUILD_DIR]   (default _build-nocuda)
# TIDE_BUILD_JOBS=N in the environment builds with ninja -j N.
#
# Builds Tidemark from scratch as on a machine without the CUDA toolkit,
# and runs the device suite there: device capture must not depend on
# /usr/local/cuda (capture/wire/tide-cuda-abi.h).  The toolkit is hidden by an
# empty folder mounted over /usr/local/cuda in a private mount namespace
# (as root; otherwise in a user namespace), so nothing outside this script
# sees a change.  Fails unless the preload exports its CUDA hooks and the
# device suite passes.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-_build-nocuda}
cd "$top"

if [ "${TIDE_CUDA_HIDDEN:-}" != 1 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    exec unshare --mount --propagation private env TIDE_CUDA_HIDDEN=1 "$0" "$dir"
  fi
  exec unshare --mount --map-root-user --propagation private env TIDE_CUDA_HIDDEN=1 "$0" "$dir"
fi

if [ -e /usr/local/cuda ]; then
  empty=$(mktemp -d /tmp/tide-no-cuda-XXXXXX)
  trap 'umount /usr/local/cuda; rmdir "$empty"' EXIT
  mount --bind "$empty" /usr/local/cuda
fi
for h in /usr/local/cuda/include/cuda.h /usr/include/cuda.h /usr/include/cuda_runtime_api.h; do
  if [ -e "$h" ]; then
    echo "build-without-cuda: $h is still visible" >&2
    exit 1
  fi
done

rm -rf "$dir"
meson setup "$dir" >/dev/null
# Only what the device suite runs: the other builds build and test the rest.
targets=$(meson introspect "$dir" --tests --targets | python3 -c '
import json, os, sys
info = json.load(sys.stdin)
files = {t["id"]: t["filename"] for t in info["targets"]}
needed = {d for t in info["tests"] if "tidemark:device" in t["suite"] for d in t["depends"]}
print(" ".join(os.path.relpath(f, sys.argv[1]) for d in sorted(needed) for f in files[d]))
' "$dir")
# TIDE_BUILD_JOBS: ninja's -j, where the build runs beside other work.
ninja -C "$dir" ${TIDE_BUILD_JOBS:+-j "$TIDE_BUILD_JOBS"} $targets >/dev/null
for hook in cudaMalloc cuMemAlloc_v2 cuGetProcAddress_v2 InitializeInjectionNvtx2; do
  if ! nm -D --defined-only "$dir/capture/preload/libtidemark-preload.so" | grep -qw "$hook"; then
    echo "build-without-cuda: the preload has no $hook" >&2
    exit 1
  fi
done
tests=$(meson test -C "$dir" --list 2>/dev/null)
if ! grep -q 'test-cuda-record' <<<"$tests" || grep -q 'test-cuda-abi' <<<"$tests"; then
  echo "build-without-cuda: the device suite is not what a machine without CUDA gets" >&2
  exit 1
fi
meson test -C "$dir" --suite device --no-rebuild --print-errorlogs
echo "build-without-cuda: device capture built and tested without the CUDA toolkit"
