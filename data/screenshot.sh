#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# The README screenshot: records the PyTorch example
# (examples/leaky-training.py, with two DataLoader workers) with the built
# `tidemark record --torch`, opens the trace in tidemark-gui under Xvfb with
# a leaking step selected, and saves a PNG of the main window.
#
#   data/screenshot.sh [BUILD_DIR [OUTPUT.png]]     (default: _build, docs/screenshot.png)
#
# TIDEMARK_SCREENSHOT_STEP picks the step (default 4), TIDEMARK_SCREENSHOT_VIEW
# the detail view (drilldown, flame or suspects; default: the one the app
# opens on).  docs/flame-graph.png is
#   TIDEMARK_SCREENSHOT_STEP=1 TIDEMARK_SCREENSHOT_VIEW=flame data/screenshot.sh _build docs/flame-graph.png
#
# Needs xvfb-run (packages xvfb, xauth) and python3-torch.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$src/_build"}
out=${2:-"$src/docs/screenshot.png"}
step=${TIDEMARK_SCREENSHOT_STEP:-4}
view=${TIDEMARK_SCREENSHOT_VIEW:+--view=$TIDEMARK_SCREENSHOT_VIEW}

case $build in /*) ;; *) build="$PWD/$build" ;; esac
case $out in /*) ;; *) out="$PWD/$out" ;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

(cd "$tmp" && "$build/app/tidemark" record -q --torch -o "$tmp/leaky-training.tide" -- \
  /usr/bin/python3 "$src/examples/leaky-training.py" --steps 20 > /dev/null)

mkdir -p "$(dirname "$out")"
env GTK_A11Y=none GSK_RENDERER=cairo GSETTINGS_BACKEND=memory \
    GSETTINGS_SCHEMA_DIR="$build/data" GTK_THEME=Adwaita \
  xvfb-run -a -s "-screen 0 1400x900x24" \
  "$build/app/tidemark-gui" --step "$step" $view --screenshot "$out" "$tmp/leaky-training.tide"

test -s "$out"
echo "wrote $out"
