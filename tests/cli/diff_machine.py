#!/usr/bin/env python3
"""diff_machine.py - `gtrace diff` as a program reads it, on the two ResNet-50
runs: every report's JSON (json.loads: numbers are numbers, key columns int,
the units in the column metadata) and CSV (pandas.read_csv with no options,
the default CSV and every table of -o DIR); the per-step rows of the
breakdown in all three formats, keys Step and Row in every row (Step an
int, empty only on the average rows), the same numbers in each.
Uses stats_machine.py's checks.  Exit 77 (skip) without pandas or the traces.
"""
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats_machine as sm  # noqa: E402  (exits 77 without pandas)

pd = sm.pd
RUNS = ["kineto/resnet50_num_workers_0.pt.trace.json.gz",
        "kineto/resnet50_num_workers_4.pt.trace.json.gz"]


def diff(*args):
    paths = [os.path.join(sm.TESTDATA, f) for f in RUNS]
    r = subprocess.run([sm.GTRACE, "diff"] + paths + list(args), capture_output=True, text=True)
    sm.check(r.returncode == 0, "diff %s: rc %d %s" % (args, r.returncode, r.stderr))
    return r.stdout


def main():
    if not os.access(sm.GTRACE, os.X_OK):
        print("gtrace not built")
        return 77
    if not all(os.path.exists(os.path.join(sm.TESTDATA, f)) for f in RUNS):
        print("no ../shared/testdata")
        return 77
    for rep in ["breakdown", "kernels", "ops", "overview"]:
        doc = json.loads(diff("--report", rep, "--format", "json"))
        seen = set()
        for t in doc["tables"]:
            sm.check_json_table(rep, t, seen)
        sm.check_csv(rep + " default", diff("--report", rep, "--format", "csv"), doc["tables"][0])
        tmp = tempfile.mkdtemp(prefix="gtrace-diff-")
        try:
            diff("--report", rep, "--format", "csv", "-o", tmp)
            for t in doc["tables"]:
                with open(os.path.join(tmp, t["name"] + ".csv")) as f:
                    sm.check_csv(rep + " -o", f.read(), t)
        finally:
            shutil.rmtree(tmp)
    # the breakdown's per-step rows in JSON, CSV and text, keyed
    jt = json.loads(diff("--format", "json"))["tables"][0]
    rows = jt["rows"]
    sm.check(jt["name"] == "diff_breakdown", "main table %s" % jt["name"])
    for r in rows:
        sm.check(isinstance(r["Row"], str), "Row %r" % r)
        sm.check((r["Step"] is None) == (r["Row"] == "average"), "Step %r" % r)
        sm.check(r["Step"] is None or isinstance(r["Step"], int), "Step not an int: %r" % r)
    steps = [r for r in rows if r["Row"] == "step"]
    sm.check(len(steps) == 6 * 9 and sorted({r["Step"] for r in steps}) == list(range(5, 11)),
             "%d step rows" % len(steps))
    df = pd.read_csv(io.StringIO(diff("--format", "csv")))
    sm.check(list(df.columns[:3]) == ["Step", "Row", "Category"], "CSV keys %s" % list(df.columns))
    sm.check(df["Step"].isna().sum() == 9 and (df["Row"] == "step").sum() == 54, "CSV rows")
    for r in steps:
        m = df[(df["Step"] == r["Step"]) & (df["Category"] == r["Category"])]
        sm.check(len(m) == 1 and abs(float(m["Delta (us)"].iloc[0]) - r["Delta (us)"]) < 1e-9,
                 "CSV step %s %s" % (r["Step"], r["Category"]))
    text = diff()
    for r in steps:
        pat = r"^\s*%d\s+step\s+%s\s+%d\s+%s\s+%s\s+%s\s" % (
            r["Step"], re.escape(r["Category"]), r["Experiment Step"],
            *("{:,.1f}".format(r[k]) for k in ("Baseline (us)", "Experiment (us)", "Delta (us)")))
        sm.check(re.search(pat, text, re.M) is not None, "text row %s %s" % (r["Step"], r["Category"]))
    for f in sm.failures:
        print("FAIL:", f)
    print("%d failures" % len(sm.failures))
    return 1 if sm.failures else 0


if __name__ == "__main__":
    sys.exit(main())
