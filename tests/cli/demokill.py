#!/usr/bin/env python3
"""demokill.py - a `gtrace demo` killed with SIGKILL takes its trainer along
(trial 4).

The demo forks its simulated trainer (`gtrace demo --trainer ... --seconds
3600`); `q`, Ctrl-C and SIGTERM stop it, but a demo killed with SIGKILL left
it running, idle, for the rest of its hour.  Truth: the trainer is the demo's
child (/proc/PID/task/PID/children); after the SIGKILL it must be gone (or a
zombie waiting for its new parent) within 5 s.

Run by meson with GTRACE_BUILD set."""
import os
import signal
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(os.environ.get("GTRACE_BUILD", "build"))
G = os.path.join(BUILD, "tui", "gtrace")
bad = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        bad.append(what)


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "demo.gtrace")
        p = subprocess.Popen([G, "demo", "--gpus", "1", "--record", out],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        kids = []
        t0 = time.time()
        while not kids and time.time() - t0 < 30 and p.poll() is None:
            time.sleep(0.1)
            kids = [k for k in children(p.pid) if alive(k)]
        check(len(kids) == 1, "the demo started its trainer: %s" % kids)
        time.sleep(0.5)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        t0 = time.time()
        while kids and time.time() - t0 < 5:
            kids = [k for k in kids if alive(k)]
            time.sleep(0.1)
        check(not kids, "SIGKILL of the demo: its trainer ended within 5 s (left: %s)" % kids)
        for k in kids:          # ours: do not leave it behind on a failure
            os.kill(k, signal.SIGKILL)
    print("%d failed" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
