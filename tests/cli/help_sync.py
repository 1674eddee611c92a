#!/usr/bin/env python3
"""help_sync.py - `gtrace --help` against each `gtrace CMD --help`:

- every subcommand (a cmd_NAME function declared in tui/cmd.h, read from the
  source, not from the binary) has a line `gtrace NAME ...` in the top help;
- every option a subcommand's own --help lists (--long or -x) is named in the
  top help's lines for that subcommand (`sim --live` has its own help and
  line);
- every such option is accepted: `gtrace CMD OPT @bad@ --zz-unknown` may fail
  on the value or on --zz-unknown, never with "unknown option 'OPT'".

Run by meson with GTRACE_BUILD and GTRACE_SRC set."""
import os
import re
import subprocess
import sys

BUILD = os.environ.get("GTRACE_BUILD", "build")
SRC = os.environ.get("GTRACE_SRC", ".")
GTRACE = os.path.join(BUILD, "tui", "gtrace")
bad = []


def run(args, timeout=20):
    r = subprocess.run([GTRACE] + args, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout, r.stderr


def own_text(help_text):
    """the help up to the first line that is another command's synopsis"""
    out = []
    for i, line in enumerate(help_text.splitlines()):
        if i and re.match(r"\s*gtrace \w", line):
            break
        out.append(line)
    return "\n".join(out)


def options(text):
    """the options a help text lists; another command quoted in it ('gtrace
    record --pid PID') is not this one's"""
    text = re.sub(r"'gtrace [^']*'", "", text)
    opts = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])", text))
    return sorted(opts - {"--help", "-h"})


def aliases(text):
    """{'--output': '-o'} for each '-o, --output' of a help text"""
    return {m.group(2): m.group(1) for m in re.finditer(r"(-[a-zA-Z]), (--[a-z][a-z0-9-]*)", text)}


def top_lines(top, prefix):
    """the top help's entry for `gtrace PREFIX` (its synopsis and the indented
    lines under it, up to the next `gtrace` line)"""
    lines, on = [], False
    for line in top.splitlines():
        m = re.match(r"\s*gtrace (\S+(?: --live)?)", line)
        if m:
            name = m.group(1)
            on = name == prefix or (prefix != "sim --live" and name == prefix.split()[0] and
                                    "--live" not in line.split()[:3])
        if on:
            lines.append(line)
    return "\n".join(lines)


rc, top, _ = run(["--help"])
if rc != 0:
    bad.append("gtrace --help exits with %d" % rc)
cmds = re.findall(r"^int cmd_([a-z]+)\(int argc", open(os.path.join(SRC, "tui", "cmd.h")).read(), re.M)
if len(cmds) < 9:
    bad.append("found only %d cmd_ functions in tui/cmd.h" % len(cmds))
checks = [[c] for c in cmds] + [["sim", "--live"]]
for argv in checks:
    name = " ".join(argv)
    if not re.search(r"^\s*gtrace %s\b" % re.escape(name), top, re.M):
        bad.append("'gtrace %s' is not in gtrace --help" % name)
        continue
    rc, h, err = run(argv + ["--help"])
    if rc != 0 or "usage: gtrace %s" % name not in h:
        bad.append("gtrace %s --help: exit %d, no usage line" % (name, rc))
        continue
    entry = top_lines(top, name)
    for opt in options(own_text(h)):
        if opt == "--live" and name == "sim --live":
            continue
        named = [opt] + ([aliases(h)[opt]] if opt in aliases(h) else [])
        if not any(re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(o), entry) for o in named):
            bad.append("gtrace --help lacks %s of 'gtrace %s' (its --help lists it)" % (opt, name))
        try:
            _, _, e = run(argv + [opt, "@bad@", "--zz-unknown"])
        except subprocess.TimeoutExpired:
            bad.append("gtrace %s %s @bad@ --zz-unknown did not end" % (name, opt))
            continue
        if re.search(r"unknown option[^'\n]*'%s'" % re.escape(opt), e):
            bad.append("gtrace %s does not accept %s: %s" % (name, opt, e.strip()))
for b in bad:
    print("FAIL: " + b)
if bad:
    print("---- gtrace --help ----\n" + top)
    sys.exit(1)
print("ok: %d commands" % len(checks))
