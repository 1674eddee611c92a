#!/usr/bin/env python3
"""livemem.py - the live status line's `mem USED/BUDGET` counts the store's
own pages only (trial 4).

`gtrace demo --gpus 2 --memory 8M` showed `mem 36.1M/8.0M` while
/proc/PID/smaps had the store's cache file at 0 kB resident: the figure took
the ring's shared memory (a memfd, mapped by gtrace to read it) for the
store's, and the trimmer, working against that figure, dropped the whole
cache file.  Here the demo records headless (a status line per second on
stderr) under an 8M budget with $TMPDIR a directory of the test's own, so
its cache file is the mapping under it in smaps.  Truth: smaps, sampled
every 0.2 s (the cache file's Rss, the ring's memfd Rss).  Checks: the ring
is resident beyond the budget (the scenario that misled the figure), every
mem figure stays within the budget plus 50 % (the heap's share and a trim's
lag), and the cache file keeps resident pages (the trimmer no longer drops
it all).

Run by meson with GTRACE_BUILD set."""
import os
import re
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


def smaps_rss(pid, d):
    """(Rss of mappings under d, Rss of the ring memfd) in bytes"""
    cache = ring = 0
    cur = None
    try:
        with open("/proc/%d/smaps" % pid) as f:
            for line in f:
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    parts = line.split(None, 5)
                    path = parts[5].strip() if len(parts) > 5 else ""
                    cur = "cache" if path.startswith(d + "/") else \
                          "ring" if "gtrace-ring" in path else None
                elif line.startswith("Rss:") and cur:
                    kb = int(line.split()[1])
                    if cur == "cache":
                        cache += kb * 1024
                    else:
                        ring += kb * 1024
    except OSError:
        pass
    return cache, ring


def size(text):
    m = re.match(r"([0-9.]+)([kMG]?)$", text)
    return float(m.group(1)) * {"": 1, "k": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]


def main():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        env = dict(os.environ, TMPDIR=d)
        out = os.path.join(d, "demo.gtrace")
        p = subprocess.Popen([G, "demo", "--gpus", "2", "--memory", "8M", "--record", out,
                              "--seconds", "8"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             env=env)
        cache_max = ring_max = 0
        t0 = time.monotonic()
        while p.poll() is None and time.monotonic() - t0 < 60:
            c, r = smaps_rss(p.pid, d)
            cache_max, ring_max = max(cache_max, c), max(ring_max, r)
            time.sleep(0.2)
        err = p.communicate(timeout=60)[1]
        figs = re.findall(r"mem ([0-9.]+[kMG]?)/8\.0M", err)
        used = [size(x) for x in figs]
        print("mem figures: %s; smaps peaks: cache file %.1f MB, ring %.1f MB"
              % (" ".join(figs), cache_max / 1e6, ring_max / 1e6))
        check(p.returncode == 0 and len(used) >= 3, "demo recorded headless with status lines "
              "(%d lines with a mem figure)" % len(used))
        check(ring_max > (8 << 20), "the ring is resident beyond the budget (%.1f MB)"
              % (ring_max / 1e6))
        check(used and max(used) <= 1.5 * (8 << 20),
              "every mem figure within the budget + 50 %%: max %.1f MB" % (max(used or [0]) / 1e6))
        check(cache_max >= (1 << 20), "the cache file keeps resident pages (peak %.1f MB)"
              % (cache_max / 1e6))
    print("%d failed" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
