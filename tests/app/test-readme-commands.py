#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
"""The README's commands, as written, on this build tree.

Reads README.md's "Set up" and "A five-minute tour" sections, takes every
line of their ```sh blocks as a command, and runs them the way a reader
would, in a copy of the checkout (links to the source, `_build` linked to
this build), with `_build/app` on PATH as the README says.  TAP on stdout.

- `tools/setup.sh demo` runs with no display, so that it ends by printing
  how to open the trace instead of opening a window; it is skipped when a
  package it would install is missing (a test installs nothing).
- `tools/setup.sh test` is what CI runs (.ci/run): running it here would
  run this suite inside itself, so the test checks that .ci/run runs
  exactly that command.
- `tidemark-gui` runs under the Xvfb of the test, through a wrapper that
  adds `--screenshot FILE`: the app draws the trace, saves it and quits.
- Commands that need PyTorch are skipped when /usr/bin/python3 has none,
  and so are the ones after them, which read their trace.
"""

import argparse
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

COMMAND_TIMEOUT_S = 300
SETUP_COMMANDS = ["tools/setup.sh demo", "tools/setup.sh test"]


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, passed, name, detail=""):
        self.n += 1
        print(f"{'ok' if passed else 'not ok'} {self.n} - {name}")
        if not passed:
            self.failed += 1
            for line in detail.splitlines()[-30:]:
                print(f"# {line}")
        sys.stdout.flush()

    def skip(self, name, why):
        self.n += 1
        print(f"ok {self.n} - {name} # SKIP {why}")
        sys.stdout.flush()

    def done(self):
        print(f"1..{self.n}")
        return 1 if self.failed else 0


def section(readme, title):
    """The text of the '## title' section, up to the next '## '."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if match is None:
        raise SystemExit(f"Bail out! README.md has no '## {title}' section")
    return match.group(1)


def sh_commands(text):
    """Every command line of the ```sh blocks, comments and all."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(line.strip())
    return commands


def without_comment(command):
    return " ".join(shlex.split(command, comments=True))


def has_torch():
    return subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def missing_packages(source_root):
    """What tools/setup.sh would install: the names in its packages=( )."""
    script = open(os.path.join(source_root, "tools", "setup.sh")).read()
    listed = re.search(r"^packages=\((.*?)^\)", script, re.M | re.S).group(1).split()
    missing = []
    for package in listed:
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                                capture_output=True, text=True).stdout
        if "install ok installed" not in status:
            missing.append(package)
    return missing


def make_checkout(source_root, build_root, where):
    """A checkout that is the source tree, with `_build` this build."""
    clone = os.path.join(where, "clone")
    os.mkdir(clone)
    for name in os.listdir(source_root):
        if name.startswith("_build") or name == ".git":
            continue
        os.symlink(os.path.join(source_root, name), os.path.join(clone, name))
    os.symlink(build_root, os.path.join(clone, "_build"))
    return clone


def gui_wrapper(clone, where, screenshot):
    """`tidemark-gui` that draws, saves a screenshot and quits."""
    bin_dir = os.path.join(where, "bin")
    os.mkdir(bin_dir)
    wrapper = os.path.join(bin_dir, "tidemark-gui")
    real = os.path.join(clone, "_build", "app", "tidemark-gui")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec {shlex.quote(real)} --screenshot {shlex.quote(screenshot)} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return bin_dir


def run(command, cwd, env):
    try:
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return 124, f"timed out after {COMMAND_TIMEOUT_S} s\n{e.stdout or ''}{e.stderr or ''}"
    return done.returncode, done.stdout + done.stderr


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def check_setup_commands(tap, setup, source_root):
    tap.ok([without_comment(c) for c in setup] == SETUP_COMMANDS,
           "the README's set-up commands are tools/setup.sh demo and test",
           f"found: {setup}")
    ci = open(os.path.join(source_root, ".ci", "run")).read()
    tap.ok(re.search(r"^exec tools/setup\.sh test$", ci, re.M) is not None,
           "tools/setup.sh test is the command CI runs (.ci/run)")


def run_demo(tap, clone, env, torch, source_root):
    name = "tools/setup.sh demo"
    missing = missing_packages(source_root)
    if missing:
        tap.skip(name, f"it would install {' '.join(missing)}")
        return
    if not torch:
        tap.skip(name, "no PyTorch for /usr/bin/python3")
        return
    demo_env = {k: v for k, v in env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    status, output = run(name, clone, demo_env)
    trace = os.path.join(clone, "leaky-training.tide")
    tap.ok(status == 0 and os.path.exists(trace) and "Probe.forward" in output and
           f"open the trace with: _build/app/tidemark-gui {trace}" in output,
           name + ": records the example, reports its suspect, says how to open it",
           f"exit status {status}\n{output}")


def check_outputs(tap, command, clone, screenshot):
    """What some commands leave behind, beyond their exit status."""
    words = shlex.split(command, comments=True)
    if words[:2] == ["tidemark", "export"]:
        size = png_size(os.path.join(clone, words[words.index("--png") + 1]))
        expected = (int(words[words.index("--width") + 1]), int(words[words.index("--height") + 1]))
        tap.ok(size == expected, f"{command}: the PNG is {expected[0]}x{expected[1]}",
               f"PNG size {size}")
        with open(os.path.join(clone, words[words.index("--csv") + 1])) as f:
            header = f.readline()
        tap.ok(header.startswith("pid,role,dist_rank,steps_pid,step,"),
               f"{command}: the CSV has the steps header", header)
    if words[0] == "tidemark-gui":
        size = png_size(screenshot) if os.path.exists(screenshot) else None
        tap.ok(size is not None and size[0] > 0 and size[1] > 0,
               f"{command}: the window drew the trace", f"screenshot {size}")


def run_tour(tap, tour, clone, env, torch, screenshot):
    needs_trace = False
    for command in tour:
        words = shlex.split(command, comments=True)
        if "python3" in words and not torch:
            needs_trace = True
            tap.skip(command, "no PyTorch for /usr/bin/python3")
            continue
        if needs_trace:
            tap.skip(command, "its trace was not recorded")
            continue
        if words[0] == "tidemark-gui" and not os.path.exists(os.path.join(clone, "_build", "app",
                                                                         "tidemark-gui")):
            tap.skip(command, "built without the GUI")
            continue
        status, output = run(command, clone, env)
        tap.ok(status == 0, command, f"exit status {status}\n{output}")
        if status == 0:
            check_outputs(tap, command, clone, screenshot)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-root", required=True)
    parser.add_argument("--build-root", required=True)
    args = parser.parse_args()

    readme = open(os.path.join(args.source_root, "README.md")).read()
    setup = sh_commands(section(readme, "Set up"))
    tour = sh_commands(section(readme, "A five-minute tour"))
    tap = Tap()
    tap.ok(any(c.startswith("tidemark record ") for c in tour) and
           any(c.startswith("tidemark-gui ") for c in tour),
           "the tour records a program and opens it in the app", f"found: {tour}")

    where = tempfile.mkdtemp(prefix="tide-readme-")
    try:
        clone = make_checkout(args.source_root, args.build_root, where)
        screenshot = os.path.join(where, "window.png")
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([gui_wrapper(clone, where, screenshot),
                                       os.path.join(clone, "_build", "app"), env.get("PATH", "")])
        env.setdefault("GTK_A11Y", "none")
        env.setdefault("GSK_RENDERER", "cairo")
        torch = has_torch()
        check_setup_commands(tap, setup, args.source_root)
        run_demo(tap, clone, env, torch, args.source_root)
        run_tour(tap, tour, clone, env, torch, screenshot)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
