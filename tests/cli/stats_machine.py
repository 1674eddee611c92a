#!/usr/bin/env python3
"""stats_machine.py - every report of `gtrace stats`, as a program reads it,
on several real traces: each CSV loads with pandas.read_csv and no options
(one table per output), each JSON with json.loads; numbers are numbers,
units sit in the column metadata, table names are unique, per-rank tables
carry a Rank column.  Exit 77 (skip) when pandas or a trace is missing.

Golden numbers come from the raw traces, counted here with json/gzip
(ProfilerStep spans per rank, kernel events), or from a peer's published
result (the TensorBoard plugin's Kernel 98,589 us of a 177,592 us step on
resnet50_num_workers_0, shared/testdata/MANIFEST.md).
"""
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import pandas as pd
except ImportError:
    print("pandas is not installed (Debian: python3-pandas)")
    sys.exit(77)

BUILD = os.environ.get("GTRACE_BUILD", "build")
TESTDATA = os.environ.get("GTRACE_TESTDATA", "../shared/testdata")
GTRACE = os.path.join(BUILD, "tui", "gtrace")
REPORTS = ["kernels", "memory", "api", "nvtx", "nccl", "summary", "steps", "breakdown",
           "pipeline", "gputime", "multigpu", "overview"]
REPORTS += ["ops", "memory-usage"]   # issue 15
TRACES = {
    "resnet": ["kineto/resnet50_num_workers_0.pt.trace.json.gz"],
    "two_ranks": ["hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz"],
    "nccl": ["hta/nccl_data.json.gz"],
    "qwen": ["tracelens/h100_qwen_inference.json.gz"],
    "nsys": ["nsys/a100_cloverleaf.nsys.sqlite"],
    "xplane": ["tf/tf_bert_multiworker.xplane.pb"],
}
# tables whose rows belong to one rank each (with several ranks they must say which)
PER_RANK = {"steps", "steps_gpu", "breakdown", "breakdown_pct", "pipeline", "gputime",
            "gputime_idle", "gputime_launch", "multigpu", "multigpu_copies", "overview_ranks",
            "overview_gpus", "summary_lanes", "summary_devices", "summary_ranks"}
# key columns: numbers in every table (a CSV Step column mixing "551" with
# "Average" reads as text in pandas; PID "4037" as a JSON string), trial 2
KEY_COLS = {"Rank", "GPU", "Step", "PID", "ID"}
UNIT_RE = re.compile(r"\((ns|us|ms|s|%|bytes|MB|GB/s|x)\)$")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def gtrace(*args):
    r = subprocess.run([GTRACE, "stats"] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def raw_events(path):
    with gzip.open(path, "rt") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def check_json_table(tag, t, seen):
    name = t["name"]
    check(name not in seen, "%s: table name %s twice" % (tag, name))
    seen.add(name)
    cols = t["columns"]
    for c in cols:
        check(c["name"] not in KEY_COLS or c["type"] == "int",
              "%s/%s: key column %s is typed %s, not int" % (tag, name, c["name"], c["type"]))
        check(set(c) >= {"name", "type", "unit"}, "%s/%s: column metadata %s" % (tag, name, c))
        m = UNIT_RE.search(c["name"])
        if m and c["type"] != "string":
            check(c["unit"] == m.group(1), "%s/%s: %s has unit %r" % (tag, name, c["name"], c["unit"]))
    for row in t["rows"]:
        check(list(row) == [c["name"] for c in cols], "%s/%s: row keys %s" % (tag, name, list(row)))
        for c in cols:
            v = row[c["name"]]
            if v is None:
                continue
            if c["type"] == "string":
                check(isinstance(v, str), "%s/%s: %s = %r not a string" % (tag, name, c["name"], v))
            else:
                check(isinstance(v, (int, float)) and not isinstance(v, bool),
                      "%s/%s: %s = %r not a number" % (tag, name, c["name"], v))
                if c["type"] == "int":
                    check(isinstance(v, int), "%s/%s: %s = %r not an integer" % (tag, name, c["name"], v))


def check_csv(tag, text, jt):
    """text: one CSV table; jt: the same table from the JSON output"""
    df = pd.read_csv(io.StringIO(text))
    names = [c["name"] for c in jt["columns"]]
    check(list(df.columns) == names, "%s/%s: CSV header %s != %s" % (tag, jt["name"], list(df.columns), names))
    check(len(df) == len(jt["rows"]), "%s/%s: %d CSV rows, %d JSON rows" % (tag, jt["name"], len(df), len(jt["rows"])))
    for c in jt["columns"]:
        if c["type"] != "string" and c["name"] in df.columns and len(df):
            check(pd.api.types.is_numeric_dtype(df[c["name"]]),
                  "%s/%s: CSV column %s is %s, not numeric" % (tag, jt["name"], c["name"], df[c["name"]].dtype))
    return df


def one_trace(tag, files):
    paths = [os.path.join(TESTDATA, f) for f in files]
    if not all(os.path.exists(p) for p in paths):
        return None
    allrep = ",".join(REPORTS)
    rc, out, err = gtrace(*paths, "--report", allrep, "--format", "json")
    check(rc == 0, "%s: json rc %d %s" % (tag, rc, err))
    doc = json.loads(out)
    check([d["report"] for d in doc] == REPORTS, "%s: reports %s" % (tag, [d["report"] for d in doc]))
    seen = set()
    tables = {}
    for d in doc:
        for t in d["tables"]:
            check_json_table(tag, t, seen)
            tables[t["name"]] = (d["report"], t)
    # -o DIR: one CSV per table, each loads on its own
    tmp = tempfile.mkdtemp(prefix="gtrace-stats-")
    try:
        rc, out, err = gtrace(*paths, "--report", allrep, "--format", "csv", "-o", tmp)
        check(rc == 0, "%s: -o rc %d %s" % (tag, rc, err))
        written = sorted(f[:-4] for f in os.listdir(tmp))
        check(written == sorted(tables), "%s: -o wrote %s, JSON has %s" % (tag, written, sorted(tables)))
        dfs = {}
        for name, (rep, jt) in tables.items():
            p = os.path.join(tmp, name + ".csv")
            if os.path.exists(p):
                with open(p) as f:
                    dfs[name] = check_csv(tag, f.read(), jt)
    finally:
        shutil.rmtree(tmp)
    # the default CSV of each report is its main (first) table, alone
    for d in doc:
        rc, out, err = gtrace(*paths, "--report", d["report"], "--format", "csv")
        check(rc == 0, "%s/%s: csv rc %d %s" % (tag, d["report"], rc, err))
        check_csv(tag + " default", out, d["tables"][0])
    # --table list names exactly the tables the JSON has
    rc, out, err = gtrace(*paths, "--report", allrep, "--table", "list")
    listed = sorted(l.split()[0] for l in out.splitlines() if l.strip())
    check(listed == sorted(tables), "%s: --table list %s" % (tag, listed))
    if len(files) > 1:
        for name in PER_RANK & set(tables):
            jt = tables[name][1]
            check(any(c["name"] == "Rank" for c in jt["columns"]), "%s/%s: no Rank column" % (tag, name))
    return tables, dfs


def main():
    if not os.access(GTRACE, os.X_OK):
        print("gtrace not built")
        return 77
    got = {}
    for tag, files in TRACES.items():
        r = one_trace(tag, files)
        if r:
            got[tag] = r
    if len(got) < len(TRACES) and os.environ.get("GTRACE_REQUIRE_TESTDATA", "0") not in ("", "0"):
        print("FAIL: GTRACE_REQUIRE_TESTDATA is set and traces are missing under", TESTDATA,
              "(found: %s)" % ", ".join(sorted(got)))
        return 1
    if len(got) < 3:
        print("SKIP: test data missing: fewer than 3 of the real traces found under", TESTDATA,
              "(the traces of ../shared/testdata are not beside this clone)")
        return 77

    if "resnet" in got:
        tables, dfs = got["resnet"]
        # MANIFEST.md: 8,772 kernels
        check(int(dfs["kernels"]["Instances"].sum()) == 8772, "resnet kernels %s" % dfs["kernels"]["Instances"].sum())
        # the TensorBoard plugin: Kernel 98,589 us of an average step of 177,592 us
        ov = tables["overview"][1]["rows"][0]
        check(abs(ov["Kernel (us)"] - 98589) < 1, "resnet Kernel (us) %s" % ov["Kernel (us)"])
        check(abs(ov["Average step (us)"] - 177592) < 1, "resnet step %s" % ov["Average step (us)"])

    if "two_ranks" in got:
        tables, dfs = got["two_ranks"]
        # ProfilerStep spans per rank file, counted in the raw JSON: each rank's
        # breakdown rows are its steps plus Average
        for rank, f in enumerate(TRACES["two_ranks"]):
            steps = {e["name"] for e in raw_events(os.path.join(TESTDATA, f))
                     if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")}
            for name in ("breakdown", "breakdown_pct", "pipeline"):
                df = dfs[name]
                mine = df[df["Rank"] == rank]
                want = sorted(int(s.split("#")[1]) for s in steps)
                got_steps = sorted(int(v) for v in mine[mine["Row"] == "step"]["Step"])
                check(got_steps == want,
                      "%s rank %d steps %s, raw trace %s" % (name, rank, got_steps, want))
                avg = mine[mine["Row"] == "average"]
                check(len(avg) == 1 and avg["Step"].isna().all(),
                      "%s rank %d: one average row, Step empty: %s" % (name, rank, avg))
                check(pd.api.types.is_numeric_dtype(df["Step"]), "%s: Step is %s" % (name, df["Step"].dtype))
        # each communication figure says whether it is exposed or total
        for name, word in (("breakdown", "exposed"), ("pipeline", "exposed"), ("overview", "exposed"),
                           ("overview_ranks", "Exposed"), ("multigpu", "total"), ("gputime_launch", "total")):
            notes = " ".join(tables[name][1]["notes"]) + " ".join(c["name"] for c in tables[name][1]["columns"])
            check(word in notes, "%s: does not say %s communication: %s" % (name, word, notes[:200]))
        # the headline names the largest non-GPU cost beside TensorFlow's verdict
        ov = tables["overview"][1]["rows"][0]
        check(ov["Largest non-GPU cost"] and isinstance(ov["Largest non-GPU cost (%)"], float),
              "overview largest non-GPU cost %r" % ov)
        # kernels per rank: the summary_lanes table sums to the raw count per file
        lanes = dfs["summary_lanes"]
        for rank, f in enumerate(TRACES["two_ranks"]):
            n = sum(1 for e in raw_events(os.path.join(TESTDATA, f))
                    if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel"))
            gpu = lanes[(lanes["Rank"] == rank) & (lanes["Type"] != "thread")]
            check(int(gpu["Events"].sum()) >= n, "rank %d GPU lane events %d < %d kernels" % (rank, gpu["Events"].sum(), n))

    # one table per CSV: several reports on stdout is a usage error, one line
    p = os.path.join(TESTDATA, TRACES["qwen"][0])
    rc, out, err = gtrace(p, "--report", "kernels,memory", "--format", "csv")
    check(rc == 2 and err.count("\n") == 1 and "-o DIR" in err, "several CSVs: rc %d %r" % (rc, err))
    rc, out, err = gtrace(p, "--report", "memory", "--table", "nope")
    check(rc == 1 and "memory_time" in err and err.count("\n") == 1, "unknown table: rc %d %r" % (rc, err))
    rc, out, err = gtrace(p, "--report", "memory", "--format", "csv", "-o", "/dev/null/x")
    check(rc == 1 and "/dev/null/x" in err, "bad -o: rc %d %r" % (rc, err))

    for f in failures:
        print("FAIL:", f)
    print("%d traces, %d failures" % (len(got), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
