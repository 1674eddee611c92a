#!/usr/bin/env python3
"""tmux test of the live capture's allocated-bytes lanes (gtrace/mem_lane.h),
beside tui_tmux.py whose helpers it uses.

emulane: gtrace run on the CUDA/CUPTI emulator's stand-in trainer with
--allocs (cuMemAlloc / cuMemFree, CUPTI MEMORY2 records) and the emulated
CUPTI handing its buffers back newest first (CUDAEMU_SHUFFLE): while the
capture runs, the trace view shows the rows "Driver allocated (GPU 0)" and
"Driver allocated (GPU 1)" as sparklines; after the trainer exits (the viewer
still on the live store, following the end), each row's last column is the
value held at the end over the lane's peak, and the overview's memory rows
give each device's peak in MiB, both from the trainer's truth file (its A
lines summed here in time order).

usage: tui_memlane.py emulane
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tui_tmux as t   # noqa: E402

SPARK = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"


def truth(path):
    """{device: (end bytes, peak bytes)} from the trainer's A lines
    (`A device corr tid ts bytes op`, op 1 allocation, 2 free)"""
    recs = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] == "A":
            dev, ts, b, op = int(f[1]), int(f[4]), int(f[5]), int(f[6])
            recs.setdefault(dev, []).append((ts, b if op == 1 else -b))
    out = {}
    for dev, v in recs.items():
        v.sort(key=lambda r: r[0])
        s, peak = 0, None
        for _, b in v:
            s += b
            peak = s if peak is None or s > peak else peak
        out[dev] = (s, peak)
    return out


def rows(s):
    r = {}
    for line in s.splitlines():
        m = re.match(r"^\s*Driver allocated \(GPU (\d)\)\s+(\S.*)$", line)
        if m:
            r[int(m.group(1))] = m.group(2).rstrip()
    return r


def case_emulane():
    emu = os.path.abspath(os.path.join(t.BUILD, "tests", "cudaemu"))
    trainer = os.path.join(emu, "cudaemu_trainer")
    if not os.path.exists(trainer):
        t.fail("no emulator trainer at " + trainer)
    d = tempfile.mkdtemp(prefix="gtrace-emulane-")
    cmd = ("cd %s && env LANG=C.UTF-8 TERM=xterm-256color CUDAEMU_SHUFFLE=64 LD_LIBRARY_PATH=%s "
           "%s run -- %s --out truth.tsv --threads 2 --work 12000 --rate 2000 --allocs 40; "
           "echo EXIT=$?; sleep 600" % (d, emu, os.path.abspath(t.GTRACE), trainer))
    t.tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "140", "-y", "45", cmd)
    t.tmux("set-option", "-t", "t", "status", "off", check=False)
    t.wait_for(r"live: 1 proc capturing", 20)
    # both GPUs' lanes (the first allocation of one GPU can arrive a frame
    # after the other's: under CI's load the screen held GPU 1's alone)
    s = t.wait_for(r"(?s)\A(?=.*Driver allocated \(GPU 0\))(?=.*Driver allocated \(GPU 1\))", 15)
    if "live: 1 proc capturing" not in s:
        t.fail("the lanes appeared only after the capture ended", s)
    r = rows(s)
    for dev in (0, 1):
        if not r.get(dev) or set(r[dev]) - set(SPARK + " "):
            t.fail("Driver allocated (GPU %d) is not a sparkline while capturing: %r" % (dev, r.get(dev)), s)
    s = t.wait_for(r"live: 1 proc target exited", 40)
    if not re.search(r"events, 0 lost", s):
        t.fail("the live capture lost events", s)
    want = truth(os.path.join(d, "truth.tsv"))
    if sorted(want) != [0, 1]:
        t.fail("the trainer's truth has allocations on devices %s" % sorted(want))
    r = rows(s)
    for dev in (0, 1):
        end, peak = want[dev]
        last = SPARK[min(7, int(8 * end / peak))]
        if not r.get(dev) or r[dev][-1] != last:
            t.fail("Driver allocated (GPU %d) ends with %r; the end over the peak (%d / %d) is %r" %
                   (dev, r.get(dev, " ")[-1:], end, peak, last), s)
    t.keys("4")
    s = t.wait_for(r"mem r0 GPU1", 10)
    for dev in (0, 1):
        mib = "%.0fMiB" % (want[dev][1] / 2**20)
        if not re.search(r"mem r0 GPU%d\s+%s" % (dev, re.escape(mib)), s):
            t.fail("overview: GPU %d's peak is not %s" % (dev, mib), s)
    t.keys("q")
    t.wait_for(r"EXIT=0", 20)
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    cases = {"emulane": case_emulane}
    if len(sys.argv) != 2 or sys.argv[1] not in cases:
        print("usage: tui_memlane.py emulane")
        sys.exit(2)
    t.CASES = cases
    sys.exit(t.main())
