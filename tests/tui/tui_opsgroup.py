#!/usr/bin/env python3
"""tmux test of the Operators page's groupings (issue 15), beside tui_tmux.py
whose helpers it uses: on ResNet-50 (workers 0), g groups by name + input
shapes, then name + call stack, then name again; the row counts, the rows of
aten::cudnn_convolution and the calls Enter lists for its top (name,
shapes) row are checked against an independent pass over the raw JSON
written here (Python's str() of the Input Dims / Call stack args, GPU time
of a call = the kernels, copies and memsets of the runtime calls on its
thread inside it, joined by correlation).

usage: tui_opsgroup.py groups
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops_truth   # noqa: E402
import tui_tmux as t   # noqa: E402


def truth(path):
    """(distinct (name, shapes) keys, distinct (name, stack) keys, for aten::cudnn_convolution
    per shapes text: [calls, host us, device us])"""
    evs = ops_truth.load(path)
    ops = [e for e in evs if e.get("ph") == "X" and ops_truth.cat(e) in ops_truth.OPS]
    gpu = collections.defaultdict(float)
    for e in evs:
        if e.get("ph") == "X" and ops_truth.cat(e) in ops_truth.GPU:
            gpu[e.get("args", {}).get("correlation")] += float(e["dur"])
    rt = collections.defaultdict(list)
    for e in evs:
        if e.get("ph") == "X" and ops_truth.cat(e) in ops_truth.RUNTIME:
            rt[(e.get("pid"), e.get("tid"))].append((float(e["ts"]), e.get("args", {}).get("correlation")))
    conv = {}
    for e in ops:
        if e["name"] != "aten::cudnn_convolution":
            continue
        t0, t1 = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        dev = sum(gpu.get(c, 0.0) for ts, c in rt[(e.get("pid"), e.get("tid"))] if t0 <= ts < t1)
        r = conv.setdefault(str(e["args"].get("Input Dims")), [0, 0.0, 0.0])
        r[0] += 1
        r[1] += float(e["dur"])
        r[2] += dev
    return conv


def case_groups():
    path = t.resnet()
    conv = truth(path)
    shapes, n, host, dev = max(((k, *v) for k, v in conv.items()), key=lambda r: r[3])
    t.start(path)
    t.wait_for(r"GPU 0", 30)
    t.keys("5")
    t.wait_for(r"Device Self Duration \(us\) (▼|v)")
    t.keys("g")
    # 577 (name, shapes) rows: tests/analysis/ops_ref.py --group shape on this trace
    s = t.wait_for(r"operators  \|  577 of 577 rows  \|  by name \+ input shapes")
    if "Input Shape" not in s:
        t.fail("no Input Shape column", s)
    t.keys("/")
    t.type_text("^aten::cudnn_convolution$")
    t.keys("Enter")
    s = t.wait_for(r"%d of 577 rows" % len(conv))
    row = s.splitlines()[3]
    if not re.search(r"^\s*\S.*\s%d\s+%.1f\s+aten::cudnn_convolution" % (n, dev), row) or \
            not row.strip().startswith(shapes[:30]):
        t.fail("top row %r, want shapes %s, %d calls, device self %.1f" % (row, shapes, n, dev), s)
    t.keys("Enter")
    s = t.wait_for(r"calls of aten::cudnn_convolution \(these input shapes\)")
    title = "%d calls, host total %s" % (n, t.fmt_dur_us(host))
    if title not in s:
        t.fail("calls title: want %r" % title, s)
    t.keys("Escape", "Escape")
    t.wait_for(r"operators  \|  577 of 577 rows")
    t.keys("g")
    # 376 (name, stack) rows: ops_ref.py --group stack
    s = t.wait_for(r"operators  \|  376 of 376 rows  \|  by name \+ call stack")
    if "Call Stack" not in s:
        t.fail("no Call Stack column", s)
    t.keys("g")
    t.wait_for(r"operators  \|  76 of 76 rows  \|  by name  ")
    t.quit_ok()


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] != "groups":
        print("usage: tui_opsgroup.py groups")
        sys.exit(2)
    t.CASES = {"groups": case_groups}
    sys.argv = [sys.argv[0], "groups"]
    sys.exit(t.main())
