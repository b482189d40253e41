#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# The two set-up commands of the README, for a fresh Debian 12 machine:
#
#   tools/setup.sh demo   install what is missing, build, record the bundled
#                         leaky PyTorch training example and open it in the app
#   tools/setup.sh test   install what is missing, build, run every test, then
#                         build again with ASan+UBSan and run every test again;
#                         beside the plain tests, run the trace fuzzer (clang,
#                         libFuzzer) for 60 s, and beside the ASan+UBSan tests,
#                         a build with the CUDA toolkit hidden that runs the
#                         device suite (tools/build-without-cuda.sh); says how
#                         long each part took, and ends with one line
#                         "N passed, N failed, N skipped", counted by sub-test
#
# Run as root (or with sudo) when packages are missing; it only installs what
# is not there yet.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

packages=(
  meson ninja-build pkg-config gcc clang
  libglib2.0-dev libgtk-4-dev libadwaita-1-dev libsqlite3-dev sqlite3
  libdw-dev libelf-dev libunwind-dev libbpf-dev bpftool libclang-rt-14-dev
  xvfb xauth desktop-file-utils appstream shared-mime-info
  python3 python3-torch python3-numpy
  libjemalloc2 libtcmalloc-minimal4
)

install_missing () {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: these Debian packages are missing; run as root or with sudo" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# build DIR [meson options...]
build () {
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@"
  fi
  ninja -C "$dir"
}

# Counts one build dir's results from meson's own test log, by sub-test:
# meson calls a TAP program with a skipped sub-test OK, so the TAP lines
# that each program printed are counted instead: "ok" passed, "not ok"
# failed, and "ok ... # SKIP" and "not ok ... # TODO" (incomplete) skipped.  A program that printed no
# TAP lines counts once, by its result; one that failed without a
# "not ok" (a crash, a timeout, a short plan) counts one failure more.
# Each failure is also named on stderr, with the first line that says why,
# so that the tail of a CI log tells which test to look at.
count_results () {
  python3 - "$1/meson-logs/testlog.json" "$1" <<'PY'
import json, re, sys
tap = re.compile(r"^(not )?ok\b[^#]*(#\s*(\w+))?", re.IGNORECASE)
why = re.compile(r"^(Bail out!|\*\*|ERROR|.*(ERROR|assertion|Assertion|FATAL)).*")
passed = failed = skipped = 0

def reason(test):
    for out in ((test.get("stdout") or "") + "\n" + (test.get("stderr") or "")).splitlines():
        if why.match(out):
            return out.strip()[:300]
    return "result " + test["result"]

for line in open(sys.argv[1]):
    test = json.loads(line)
    p = f = s = 0
    for out in (test.get("stdout") or "").splitlines():
        m = tap.match(out)
        if m is None:
            continue
        directive = (m.group(3) or "").upper()
        if directive == "SKIP" or (m.group(1) and directive == "TODO"):
            s += 1
        elif m.group(1):
            f += 1
            print("failed: %s: %s: %s" % (sys.argv[2], test["name"], out.strip()), file=sys.stderr)
        else:
            p += 1
    result = test["result"]
    if p + f + s == 0:
        if result in ("OK", "EXPECTEDFAIL"):
            p = 1
        elif result == "SKIP":
            s = 1
    if result not in ("OK", "EXPECTEDFAIL", "SKIP") and f == 0:
        f = 1
    if result not in ("OK", "EXPECTEDFAIL", "SKIP"):
        print("failed: %s: %s: %s" % (sys.argv[2], test["name"], reason(test)), file=sys.stderr)
    passed += p
    failed += f
    skipped += s
print(passed, failed, skipped)
PY
}

# test_dir DIR: runs the whole suite headless; never stops the script.
test_dir () {
  local dir=$1
  xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" \
    meson test -C "$dir" --print-errorlogs --num-processes 2 || true
}

# The main job: a PyTorch training run with two DataLoader workers, one of
# whose modules keeps a tensor per step.  Debian's torch serves
# /usr/bin/python3 only, whatever python3 comes first on PATH.
demo () {
  install_missing
  build _build
  local trace="$top/leaky-training.tide"
  # The demo's own trace: a second run replaces the first.
  _build/app/tidemark record --torch --force -o "$trace" -- /usr/bin/python3 examples/leaky-training.py
  _build/app/tidemark report "$trace" --suspects
  if [ -x _build/app/tidemark-gui ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    exec _build/app/tidemark-gui "$trace"
  fi
  echo "setup: no display here; open the trace with: _build/app/tidemark-gui $trace"
}

# fuzz_dir DIR: builds the libFuzzer target with clang (and only it: the
# rest of the project is tested above), on one core, and runs it for its
# bounded time.
fuzz_dir () {
  local dir=$1
  if [ ! -f "$dir/build.ninja" ]; then
    CC=clang meson setup "$dir" -Dfuzzer=true -Db_sanitize=address,undefined -Db_lundef=false
  fi
  ninja -C "$dir" -j 1 tests/hostile/fuzz-trace
  meson test -C "$dir" --no-rebuild --print-errorlogs --suite fuzz || true
}

# phase NAME COMMAND...: runs a phase of the test command and notes how
# long it took, for the timing line at the end.
phase_times=()
phase () {
  local name=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  phase_times+=("$name $((SECONDS - start)) s")
  return "$status"
}

# beside NAME COMMAND...: runs a part of the test command in the
# background, into _build-logs/NAME.log, for wait_beside.  Each test phase
# opens with the bpf suites, which run alone and leave the other core
# idle; a part beside it takes that core.
declare -A beside_pids
beside () {
  local name=$1
  shift
  mkdir -p _build-logs
  (
    start=$SECONDS status=0
    "$@" >"_build-logs/$name.log" 2>&1 || status=$?
    echo "$((SECONDS - start))" >"_build-logs/$name.time"
    exit "$status"
  ) &
  beside_pids[$name]=$!
}

# wait_beside NAME: waits for it, shows its log, notes how long it took
# and returns its status.
wait_beside () {
  local name=$1 status=0
  wait "${beside_pids[$name]}" || status=$?
  cat "_build-logs/$name.log"
  phase_times+=("$name $(cat "_build-logs/$name.time") s beside")
  return "$status"
}

# The fuzzer's result is counted from its build's test log; the build
# without CUDA's from its status, which this returns.
wait_besides () {
  wait_beside fuzzer || true
  wait_beside nocuda
}

run_tests () {
  local nocuda=0
  install_missing
  phase "plain build" build _build
  phase "ASan+UBSan build" build _build-asan -Db_sanitize=address,undefined -Db_lundef=false
  beside fuzzer fuzz_dir _build-fuzz
  phase "plain tests" test_dir _build
  beside nocuda env TIDE_BUILD_JOBS=1 tools/build-without-cuda.sh _build-nocuda
  phase "ASan+UBSan tests" test_dir _build-asan
  phase "waiting for what ran beside" wait_besides || nocuda=1
  read -r p1 f1 s1 < <(count_results _build)
  read -r p2 f2 s2 < <(count_results _build-asan)
  read -r p3 f3 s3 < <(count_results _build-fuzz)
  # One more result: device capture built and tested without CUDA headers.
  if [ "$nocuda" -eq 0 ]; then p2=$((p2 + 1)); else
    f2=$((f2 + 1))
    echo "failed: _build-nocuda: tools/build-without-cuda.sh: $(tail -n 1 _build-logs/nocuda.log)" >&2
  fi
  local IFS=,
  echo "time: ${phase_times[*]}" | sed 's/,/, /g'
  echo "plain build: $p1 passed, $f1 failed, $s1 skipped; ASan+UBSan build: $p2 passed, $f2 failed, $s2 skipped; fuzzer: $p3 passed, $f3 failed, $s3 skipped"
  echo "$((p1 + p2 + p3)) passed, $((f1 + f2 + f3)) failed, $((s1 + s2 + s3)) skipped"
  [ $((f1 + f2 + f3)) -eq 0 ]
}

case "${1:-}" in
  demo) demo ;;
  test) run_tests ;;
  *) echo "usage: tools/setup.sh demo|test" >&2; exit 2 ;;
esac
