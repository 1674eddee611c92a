#!/usr/bin/env python3
"""tmux tests of issue 15's viewer parts, beside tui_tmux.py whose helpers
they use.

groups: the Operators page's groupings: on ResNet-50 (workers 0), g groups by name + input
shapes, then name + call stack, then name again; the row counts, the rows of
aten::cudnn_convolution and the calls Enter lists for its top (name,
shapes) and its top (name, call stack) row (the count, the host total, the
last row of the list) are checked against an independent pass over the raw JSON
written here (Python's str() of the Input Dims / Call stack args, GPU time
of a call = the kernels, copies and memsets of the runtime calls on its
thread inside it, joined by correlation).

counters: the trace view's counter tracks of the allocator's totals (TraceLens
H100 trace): the rows "Total Allocated (GPU 0)" and "Total Reserved (GPU 0)"
are sparklines scaled to their peak; the last column of Total Allocated shows
the last sample over the peak, Total Reserved (constant in this trace) full
blocks, both from the raw JSON's [memory] args; the Memory page's allocator
line gives the peaks and the peak's operator as tests/analysis/mem_ref.py
--totals finds them.

compare: the two ResNet-50 runs opened together (gtrace open A B: ranks 0
and 1), Operators page, c: the operator delta table's top row is the
operator whose device self time changed most (tests/analysis/ops_ref.py on
each file); Enter on aten::cudnn_convolution lists its calls in both runs
(counts per run from the raw JSON) and Enter shows one in the trace view;
c again: the kernel delta table, its top row the kernel whose total time
changed most, Enter lists its instances in both runs (counts per run); c
again: the average step's breakdown of both runs, the DataLoader row as
tests/cli/breakdown_ref.py finds it in each file.

usage: tui_opsmem.py groups|counters|compare   (--list viewer: the case names)
"""
import collections
import csv
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops_truth   # noqa: E402
import tui_tmux as t   # noqa: E402


def truth(path, arg="Input Dims"):
    """for aten::cudnn_convolution per text of its `arg` (Input Dims: the input shapes,
    Call stack: the call stack), Python's str() as the plugin keys rows:
    [calls, host us, device us]"""
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
        r = conv.setdefault(str(e["args"].get(arg)), [0, 0.0, 0.0])
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
    # a shapes key longer than its column is cut in the middle, as names are:
    # both ends stay
    cell = row.strip()[:40]
    if not re.search(r"^\s*\S.*\s%d\s+%.1f\s+aten::cudnn_convolution" % (n, dev), row) or \
            not cell.startswith(shapes[:12]) or \
            (len(shapes) > 40 and not ("\u2026" in cell and shapes[-12:] in cell)):
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
    # Enter on a call-stack row lists exactly that stack's calls (the report's
    # drill-down hook): its count and host total from the raw JSON
    stacks = truth(path, "Call stack")
    stack, n, host, dev = max(((k, *v) for k, v in stacks.items()), key=lambda r: r[3])
    t.keys("/")
    t.type_text("^aten::cudnn_convolution$")
    t.keys("Enter")
    s = t.wait_for(r"%d of 376 rows" % len(stacks))
    row = s.splitlines()[3]
    if not re.search(r"\s%d\s+%.1f\s+aten::cudnn_convolution" % (n, dev), row):
        t.fail("top row %r, want stack %s..., %d calls, device self %.1f" % (row, stack[:40], n, dev), s)
    t.keys("Enter")
    s = t.wait_for(r"calls of aten::cudnn_convolution \(this call stack\)")
    title = "%d calls, host total %s" % (n, t.fmt_dur_us(host))
    if title not in s:
        t.fail("calls title: want %r" % title, s)
    t.keys("End")
    s = t.wait_for(r"^\s+%d\s+\S+\s+\S+\s+r0 thread" % n)
    if re.search(r"^\s+%d\s+\S+\s+\S+\s+r0 thread" % (n + 1), s, re.M):
        t.fail("more than %d calls listed" % n, s)
    t.keys("Escape", "Escape")
    t.wait_for(r"operators  \|  376 of 376 rows")
    t.keys("g")
    t.wait_for(r"operators  \|  76 of 76 rows  \|  by name  ")
    t.quit_ok()


SPARK = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"


def case_counters():
    path = os.path.join(t.TESTDATA, "tracelens", "h100_qwen_inference.json.gz")
    t.need_testdata(path)
    evs = ops_truth.load(path)
    recs = sorted((e for e in evs if e.get("name") == "[memory]" and
                   e.get("args", {}).get("Device Type") == 1 and
                   e["args"].get("Device Id") == 0), key=lambda e: float(e["ts"]))
    alloc = [e["args"]["Total Allocated"] for e in recs]
    reserved = {e["args"]["Total Reserved"] for e in recs}
    last = SPARK[min(7, int(8 * alloc[-1] / max(alloc)))]
    t.start(path, w=140, h=45)
    s = t.wait_for(r"Total Reserved \(GPU 0\)", 30)
    rows = {}
    for line in s.splitlines():
        m = re.match(r"^\s*(Total (Allocated|Reserved) \(GPU 0\))\s+(\S.*)$", line)
        if m:
            rows[m.group(1)] = m.group(3).rstrip()
    a, r = rows.get("Total Allocated (GPU 0)", ""), rows.get("Total Reserved (GPU 0)", "")
    if not a or set(a) - set(SPARK) or "\u2588" not in a:
        t.fail("Total Allocated row is not a sparkline reaching its peak: %r" % a, s)
    if a[-1] != last:
        t.fail("Total Allocated ends with %r, the last sample over the peak (%d / %d) is %r" %
               (a[-1], alloc[-1], max(alloc), last), s)
    if len(reserved) != 1 or set(r) != {"\u2588"}:
        t.fail("Total Reserved (constant %s) should be full blocks: %r" % (reserved, r), s)
    # the Memory page's allocator line: peaks and the peak's operator by mem_ref.py --totals
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "..", "analysis", "mem_ref.py"), path,
                          "--totals"], capture_output=True, text=True, check=True).stdout
    ref = next(row for row in csv.reader(out.splitlines()[1:]) if row[0] == "0")
    want = "r0 GPU 0 allocator: Total Allocated peak %.2f GiB at " % (int(ref[2]) / 2**30)
    t.keys("6")
    s = t.wait_for(r"allocator: Total Allocated peak")
    line = next((l for l in s.splitlines() if "allocator:" in l), "")
    if want not in line or ("operator %s;" % ref[4]) not in line or \
            ("Total Reserved peak %.2f GiB" % (int(ref[6]) / 2**30)) not in line:
        t.fail("allocator line %r, want %r, operator %s, reserved %s B" % (line, want, ref[4], ref[6]),
               s)
    t.quit_ok()


def ops_ref(path):
    """{name: device self us} of one run, by tests/analysis/ops_ref.py"""
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "..", "analysis", "ops_ref.py"), path],
                         capture_output=True, text=True, check=True).stdout
    r = {}
    for row in csv.reader(out.splitlines()[1:]):
        r[row[0]] = float(row[5])
    return r


def kernels_of(path):
    """{kernel name: [count, total dur us]} of one run"""
    r = collections.defaultdict(lambda: [0, 0.0])
    for e in ops_truth.load(path):
        if e.get("ph") == "X" and ops_truth.cat(e) == "kernel":
            r[e["name"]][0] += 1
            r[e["name"]][1] += float(e["dur"])
    return r


def case_compare():
    a = t.resnet()
    b = os.path.join(t.TESTDATA, "kineto", "resnet50_num_workers_4.pt.trace.json.gz")
    t.need_testdata(b)
    oa, ob = ops_ref(a), ops_ref(b)
    top_op = max(set(oa) | set(ob), key=lambda n: abs(ob.get(n, 0) - oa.get(n, 0)))
    na = ops_truth.op_calls(ops_truth.load(a), "aten::cudnn_convolution")[0]
    nb = ops_truth.op_calls(ops_truth.load(b), "aten::cudnn_convolution")[0]
    ka, kb = kernels_of(a), kernels_of(b)
    top_k = max(set(ka) | set(kb), key=lambda n: abs(kb[n][1] - ka[n][1]))
    t.start("%s %s" % (a, b), w=300, h=40)
    t.wait_for(r"GPU 0", 40)
    t.keys("5")
    t.wait_for(r"Device Self Duration \(us\) (▼|v)")
    t.keys("c")
    s = t.wait_for(r"compare operators  \|  r0 baseline vs r1 experiment")
    row = s.splitlines()[3]
    d = ob.get(top_op, 0) - oa.get(top_op, 0)
    if not row.rstrip().endswith(top_op) or " %.1f " % d not in row:
        t.fail("top delta row %r, want %s with delta %.1f" % (row, top_op, d), s)
    t.keys("/")
    t.type_text("^aten::cudnn_convolution$")
    t.keys("Enter")
    t.wait_for(r"1 of \d+ rows")
    t.keys("Enter")
    s = t.wait_for(r"calls of aten::cudnn_convolution  \|  r0 baseline (\d+), r1 experiment (\d+)")
    if "r0 baseline %d, r1 experiment %d" % (na, nb) not in s:
        t.fail("want %d and %d calls" % (na, nb), s)
    if not re.search(r"^\s+\d+\s+\S+\s+\S+\s+r0 thread", s, re.M) or \
            not re.search(r"^\s+\d+\s+\S+\s+\S+\s+r1 thread", s, re.M):
        t.fail("the list should hold calls of both runs", s)
    t.keys("Enter")
    t.wait_for(r"\[cpu_op\] aten::cudnn_convolution")
    t.keys("5")
    t.wait_for(r"calls of aten::cudnn_convolution")
    t.keys("Escape", "Escape")
    t.wait_for(r"compare operators  \|  r0 baseline vs r1 experiment  \|  (\d+) of \1 rows")
    t.keys("c")
    s = t.wait_for(r"compare kernels  \|")
    row = s.splitlines()[3]   # the name column is shortened: the figures identify it
    dk = kb[top_k][1] - ka[top_k][1]
    if not re.match(r"^\s*%.1f\s+%.1f\s+%.1f\s+%d\s+%d\s" % (ka[top_k][1], kb[top_k][1], dk,
                                                             ka[top_k][0], kb[top_k][0]), row):
        t.fail("top kernel delta row %r, want %s (%.1f us)" % (row, top_k, dk), s)
    t.keys("Enter")
    s = t.wait_for(r"instances of .*  \|  r0 baseline \d+, r1 experiment \d+")
    want = "instances of %s  |  r0 baseline %d, r1 experiment %d" % (top_k, ka[top_k][0], kb[top_k][0])
    if want not in s:
        t.fail("want %r" % want, s)
    # c again: the average step's breakdown of both runs, the DataLoader row as
    # tests/cli/breakdown_ref.py finds it in each file
    ba, bb = breakdown_ref(a), breakdown_ref(b)
    t.keys("Escape")
    t.wait_for(r"compare kernels  \|")
    t.keys("c")
    s = t.wait_for(r"compare step breakdown  \|  r0 baseline vs r1 experiment")
    row = next((l for l in s.splitlines() if l.startswith("DataLoader")), "")
    want = r"^DataLoader\s+%.1f\s+%.1f\s+%.1f\s" % (ba["DataLoader"], bb["DataLoader"],
                                                    bb["DataLoader"] - ba["DataLoader"])
    if not re.match(want, row):
        t.fail("DataLoader row %r, want %s" % (row, want), s)
    t.keys("c")
    t.wait_for(r"operators  \|  \d+ of \d+ rows  \|  by name")
    t.quit_ok()


def breakdown_ref(path):
    """{category: average us} of one run, by tests/cli/breakdown_ref.py"""
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "..", "cli", "breakdown_ref.py"), path],
                         capture_output=True, text=True, check=True).stdout
    return {row[0]: float(row[1]) for row in csv.reader(out.splitlines()[1:]) if len(row) == 2}


if __name__ == "__main__":
    # the cases, written once: tests/tui/meson.build registers `--list viewer` as tui-opsNAME
    cases = {"groups": case_groups, "counters": case_counters, "compare": case_compare}
    if not (len(sys.argv) == 3 and sys.argv[1] == "--list") and \
            (len(sys.argv) != 2 or sys.argv[1] not in cases):
        print("usage: tui_opsmem.py groups|counters|compare\n       tui_opsmem.py --list viewer")
        sys.exit(2)
    t.CASES = cases
    sys.exit(t.main())
