#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Regenerates the committed vmlinux.h from the running kernel's BTF:
#   ninja -C _build update-vmlinux-h
# The build never does this by itself, so that it does not depend on the
# kernel of the machine that builds.
set -eu
bpftool="$1"
out="$2"
btf=/sys/kernel/btf/vmlinux
if [ ! -r "$btf" ]; then
  echo "update-vmlinux-h: $btf is missing: this kernel has no BTF" >&2
  exit 1
fi
"$bpftool" btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "update-vmlinux-h: wrote $out ($(wc -c < "$out") bytes, kernel $(uname -r))"
