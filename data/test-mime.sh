#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# The MIME type recognises a trace by its content (SQLite header with
# application_id "TIDE" at offset 68), whatever the file is called, and
# does not claim other SQLite files.  Usage: test-mime.sh MIME_XML
set -eu

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/mime/packages"
cp "$1" "$tmp/mime/packages/"
update-mime-database "$tmp/mime" > /dev/null 2>&1

header () {
  printf 'SQLite format 3\000' > "$2"
  head -c 52 /dev/zero >> "$2"
  printf '%s' "$1" >> "$2"
  head -c 400 /dev/zero >> "$2"
}
header TIDE "$tmp/renamed.bin"
header ABCD "$tmp/other.bin"

type_of () {
  XDG_DATA_HOME="$tmp" XDG_DATA_DIRS="$tmp:/usr/share" \
    gio info -a standard::content-type "$1" | sed -n 's/.*content-type: //p'
}
echo "1..2"
t1=$(type_of "$tmp/renamed.bin")
if [ "$t1" = application/x-tidemark-trace ]; then echo "ok 1 trace by magic"; else echo "not ok 1 trace by magic: $t1"; fi
t2=$(type_of "$tmp/other.bin")
if [ "$t2" != application/x-tidemark-trace ]; then echo "ok 2 other SQLite file: $t2"; else echo "not ok 2 other SQLite file"; fi
