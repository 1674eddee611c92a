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

stepcmp: the same pair, c to "steps side by side": each aligned step of both
runs per category with its delta; filtered to DataLoader, every step's row
equals `gtrace diff A B --report breakdown --format csv` (read here with the
csv module) and carries the difference (below -40 ms in each step); Enter on
step 6 opens the trace view over step 6 of both runs (the message gives both
windows' lengths, the CSV's Total of that step); c: the overview verdicts
side by side, the input verdicts as each file's own `gtrace stats --report
overview` says.

stepsim: a simulator pair with a planted per-step change (tests/tui/simpair:
the same balanced run twice, the second with step 3's DataLoader 5 ms
longer): on "steps side by side" filtered to DataLoader and Total, the
planted step's rows show +5000.0 us and every other step 0.0; Enter on it
gives both windows, the experiment's 5.000 ms longer.

usage: tui_opsmem.py groups|counters|compare|stepcmp|stepsim   (--list viewer: the case names)
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
    row = next((l for l in s.splitlines() if l.rstrip().endswith("DataLoader")), "")
    want = r"^\s*n/a\s+average\s+n/a\s+%.1f\s+%.1f\s+%.1f\s" % (
        ba["DataLoader"], bb["DataLoader"], bb["DataLoader"] - ba["DataLoader"])
    if not re.match(want, row):
        t.fail("DataLoader row %r, want %s" % (row, want), s)
    t.keys("c", "c", "c")
    t.wait_for(r"operators  \|  \d+ of \d+ rows  \|  by name")
    t.quit_ok()


def diff_csv(a, b):
    """{(step, category): row} of `gtrace diff A B --format csv`'s per-step rows"""
    out = subprocess.run([t.GTRACE, "diff", a, b, "--format", "csv"], capture_output=True,
                         text=True, check=True).stdout
    return {(int(r["Step"]), r["Category"]): r for r in csv.DictReader(out.splitlines())
            if r["Row"] == "step"}


STEP_ROW = r"^\s*(\d+)\s+step\s+(\d+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(\S+)\s+(%s)\s*$"


def step_rows(s, cats):
    """the per-step rows on the screen: (step, exp step, base, exp, delta, cat)"""
    return [(int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4)),
             float(m.group(5)), m.group(7)) for m in re.finditer(STEP_ROW % cats, s, re.M)]


def to_steps(filt):
    """from the Operators page: c to the steps side by side, filtered by regex filt"""
    t.keys("5")
    t.wait_for(r"Device Self Duration \(us\) (▼|v)")
    for page in ["operators", "kernels", "step breakdown", "steps side by side"]:
        t.keys("c")
        t.wait_for(r"compare %s  \|  r0 baseline vs r1 experiment" % page, 30)
    t.keys("/")
    t.type_text(filt)
    t.keys("Enter")
    return t.wait_for(r"filter /%s/" % re.escape(filt))


def overview_verdict(path):
    out = subprocess.run([t.GTRACE, "stats", path, "--report", "overview", "--format", "csv"],
                         capture_output=True, text=True, check=True).stdout
    return next(csv.DictReader(out.splitlines()))["Input verdict"]


def case_stepcmp():
    a = os.path.join(t.TESTDATA, "kineto", "resnet50_num_workers_0.pt.trace.json.gz")
    t.need_testdata(a)
    b = os.path.join(t.TESTDATA, "kineto", "resnet50_num_workers_4.pt.trace.json.gz")
    t.need_testdata(b)
    ref = diff_csv(a, b)
    t.start("%s %s" % (a, b), w=160, h=40)
    t.wait_for(r"GPU 0", 40)
    s = to_steps("^DataLoader$")
    rows = step_rows(s, "DataLoader")
    steps = sorted({k[0] for k in ref})
    if [r[0] for r in rows] != steps:
        t.fail("DataLoader rows of steps %s, the CSV has %s" % ([r[0] for r in rows], steps), s)
    for st, xs, base, exp, d, cat in rows:
        c = ref[(st, cat)]
        want = (int(c["Experiment Step"]), float(c["Baseline (us)"]), float(c["Experiment (us)"]),
                float(c["Delta (us)"]))
        if (xs, base, exp, d) != want:
            t.fail("step %d DataLoader %s, the CSV %s" % (st, (xs, base, exp, d), want), s)
        if d > -40000:
            t.fail("step %d: the DataLoader should carry the difference (%.1f)" % (st, d), s)
    t.keys("j", "Enter")
    tot = ref[(6, "Total")]
    want = "step 6: r0 baseline %.3f ms, step 6: r1 experiment %.3f ms" % (
        float(tot["Baseline (us)"]) / 1e3, float(tot["Experiment (us)"]) / 1e3)
    s = t.wait_for(re.escape(want))
    if not re.search(r"^\s*steps\s.*\|#6\b", s, re.M) or "rank 1" not in s:
        t.fail("the trace view should show step 6 of both ranks", s)
    t.keys("5")
    t.wait_for(r"compare steps side by side")
    t.keys("Escape", "c")
    s = t.wait_for(r"compare overview verdicts  \|")
    va, vb = overview_verdict(a), overview_verdict(b)
    if not re.search(r"^%s\s+%s\s+n/a\s+Input verdict\s*$" % (re.escape(va), re.escape(vb)), s, re.M):
        t.fail("Input verdict row: want %r next to %r" % (va, vb), s)
    t.keys("c")
    t.wait_for(r"operators  \|  \d+ of \d+ rows  \|  by name")
    t.quit_ok()


def case_stepsim():
    pa, pb = os.path.join(t.TMP, "a.gtrace"), os.path.join(t.TMP, "b.gtrace")
    simpair = os.path.join(t.BUILD, "tests", "tui", "simpair")
    r = subprocess.run([simpair, pa, pb, "6", "3", "5000"], capture_output=True, text=True)
    if r.returncode:
        t.fail("simpair: " + r.stderr)
    planted = int(r.stdout)
    t.start("%s %s" % (pa, pb), w=160, h=40)
    t.wait_for(r"GPU 0", 40)
    s = to_steps("^(DataLoader|Total)$")
    rows = step_rows(s, "DataLoader|Total")
    if len(rows) != 12:
        t.fail("want 6 steps x DataLoader, Total: %d rows" % len(rows), s)
    for st, xs, base, exp, d, cat in rows:
        want = 5000.0 if st == planted else 0.0
        if d != want or xs != st or round(exp - base, 1) != want:
            t.fail("step %d %s: delta %.1f, want %.1f" % (st, cat, d, want), s)
    sel = [i for i, r in enumerate(rows) if r[0] == planted and r[5] == "Total"][0]
    t.keys(*(["j"] * sel))
    t.keys("Enter")
    tot = rows[sel]
    want = "step %d: r0 baseline %.3f ms, step %d: r1 experiment %.3f ms" % (
        planted, tot[2] / 1e3, planted, tot[2] / 1e3 + 5.0)
    t.wait_for(re.escape(want))
    t.quit_ok()


def breakdown_ref(path):
    """{category: average us} of one run, by tests/cli/breakdown_ref.py"""
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "..", "cli", "breakdown_ref.py"), path],
                         capture_output=True, text=True, check=True).stdout
    return {row[0]: float(row[1]) for row in csv.reader(out.splitlines()[1:]) if len(row) == 2}


if __name__ == "__main__":
    # the cases, written once: tests/tui/meson.build registers `--list viewer` as tui-opsNAME
    cases = {"groups": case_groups, "counters": case_counters, "compare": case_compare,
             "stepcmp": case_stepcmp, "stepsim": case_stepsim}
    if not (len(sys.argv) == 3 and sys.argv[1] == "--list") and \
            (len(sys.argv) != 2 or sys.argv[1] not in cases):
        print("usage: tui_opsmem.py groups|counters|compare|stepcmp|stepsim\n"
              "       tui_opsmem.py --list viewer")
        sys.exit(2)
    t.CASES = cases
    sys.exit(t.main())
