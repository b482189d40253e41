#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# The README screenshot: records examples/leaky-trainer with the built
# `tidemark record`, opens the trace in tidemark-gui under Xvfb with the
# first leaking step selected, and saves a PNG of the main window.
#
#   data/screenshot.sh [BUILD_DIR [OUTPUT.png]]     (default: _build, docs/screenshot.png)
#
# Needs xvfb-run (packages xvfb, xauth).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$src/_build"}
out=${2:-"$src/docs/screenshot.png"}
step=${TIDEMARK_SCREENSHOT_STEP:-4}

case $build in /*) ;; *) build="$PWD/$build" ;; esac
case $out in /*) ;; *) out="$PWD/$out" ;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

(cd "$tmp" && "$build/app/tidemark" record -q -o "$tmp/leaky-trainer.tide" -- \
  "$build/examples/leaky-trainer" > /dev/null)

mkdir -p "$(dirname "$out")"
env GTK_A11Y=none GSK_RENDERER=cairo GSETTINGS_BACKEND=memory \
    GSETTINGS_SCHEMA_DIR="$build/data" GTK_THEME=Adwaita \
  xvfb-run -a -s "-screen 0 1400x900x24" \
  "$build/app/tidemark-gui" --step "$step" --screenshot "$out" "$tmp/leaky-trainer.tide"

test -s "$out"
echo "wrote $out"
