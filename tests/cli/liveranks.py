#!/usr/bin/env python3
"""liveranks.py - a live process that publishes several ranks keeps them.

`gtrace sim --live --ranks 2` is one process publishing two ranks; the
recording filed both as rank 0 (one rank per connection), so their kernels
overlapped on the same lanes.  The reference is the simulator's own offline
output (`gtrace sim -o`, same seed and steps, written by the file writer,
not through the live channel): every (rank, lane) holds the same events.
Two stand-in nodes (RANK=0 and RANK=2, --ranks 2 each) through
`record --from` must give ranks 0..3 with their hosts.

Also: `record --from` where no node delivers data exits non-zero and says
so; when one node fails and another delivers, exit 0 naming the failed node.
`gtrace demo` without a terminal refuses at once as `open` does (it ran
until killed, printing status lines and saving nothing).

Run by meson with GTRACE_BUILD set."""
import json
import os
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(os.environ.get("GTRACE_BUILD", "build"))
G = os.path.join(BUILD, "tui", "gtrace")
bad = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        bad.append(what)


def stats(path):
    r = subprocess.run([G, "stats", path, "--report", "summary", "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("stats %s: %s" % (path, r.stderr))
    return {t["name"]: t["rows"] for t in json.loads(r.stdout)["tables"]}


def lanes(s, rank_add=0):
    """(rank, type, gpu, id) -> events"""
    return {(r["Rank"] + rank_add, r["Type"], r["GPU"], r["ID"]): r["Events"]
            for r in s["summary_lanes"]}


def one_process(d):
    live, off = os.path.join(d, "l2.gtrace"), os.path.join(d, "off.gtrace")
    # --wait: each rank steps once the recorder attached (events are
    # published only while it is: a recorder slow to attach, as under the
    # sanitizers on a loaded machine, would miss the first steps)
    r = subprocess.run([G, "record", "-q", "-o", live, "--", G, "sim", "--live", "--ranks", "2",
                        "--gpus", "2", "--steps", "5", "--wait", "--linger", "0"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "record sim --live --ranks 2: exit 0 (%s)" % r.stderr.strip()[-200:])
    subprocess.run([G, "sim", "-o", off, "--ranks", "2", "--gpus", "2", "--steps", "5"],
                   capture_output=True, timeout=120, check=True)
    sl, so = stats(live), stats(off)
    ranks = sorted(x["Rank"] for x in sl["summary_ranks"])
    check(ranks == [0, 1], "live: 2 ranks: %s" % ranks)
    devs = sorted((x["Rank"], x["GPU"]) for x in sl["summary_devices"])
    check(devs == [(0, 0), (0, 1), (1, 0), (1, 1)], "live: 2 ranks x 2 GPUs: %s" % devs)
    got, want = lanes(sl), lanes(so)
    check(got == want, "live: each rank's lanes hold the simulator's events (%d lanes, %d/%d)"
          % (len(want), sum(got.values()), sum(want.values())))
    for rk in (0, 1):
        check(sum(v for k, v in got.items() if k[0] == rk) == sum(v for k, v in want.items() if k[0] == rk),
              "live: rank %d event count equals the simulator's" % rk)
    return want


def node(host, rank):
    return ("GTRACE_HOSTNAME=%s RANK=%d %s record -q -o - -- %s sim --live --ranks 2 --gpus 2 "
            "--steps 5 --wait --linger 0 2>/dev/null" % (host, rank, G, G))


def two_nodes(d, want):
    out = os.path.join(d, "m.gtrace")
    r = subprocess.run([G, "record", "-o", out, "--from", node("nodeA", 0), "--from", node("nodeB", 2)],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "two nodes: exit 0 (%s)" % r.stderr.strip()[-200:])
    s = stats(out)
    ranks = {x["Rank"]: x["Host"] for x in s["summary_ranks"]}
    check(ranks == {0: "nodeA", 1: "nodeA", 2: "nodeB", 3: "nodeB"}, "two nodes: ranks 0..3 with hosts: %s" % ranks)
    got = lanes(s)
    check(got == dict(list(want.items()) + list(lanes({"summary_lanes": [
        {"Rank": k[0], "Type": k[1], "GPU": k[2], "ID": k[3], "Events": v} for k, v in want.items()]}, 2).items())),
        "two nodes: every rank's lanes hold the simulator's events")


def no_data(d):
    out = os.path.join(d, "bad.gtrace")
    r = subprocess.run([G, "record", "-o", out, "--from", "echo hello world", "--from", "true"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0, "no node delivered data: exit %d" % r.returncode)
    check(not os.path.exists(out), "no node delivered data: no 0-event file left")
    check("no node delivered" in r.stderr, "no node delivered data: says so (%s)" % r.stderr.strip()[-300:])
    out2 = os.path.join(d, "half.gtrace")
    r = subprocess.run([G, "record", "-o", out2, "--from", node("nodeA", 0), "--from", "echo hello world"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "one node failed, one delivered: exit 0 (%s)" % r.stderr.strip()[-300:])
    check("node echo failed: not a gtrace stream" in r.stderr, "the failed node is named on stderr: %s"
          % r.stderr.strip()[-300:])


def demo_no_terminal():
    try:
        r = subprocess.run([G, "demo"], capture_output=True, text=True, timeout=20,
                           stdin=subprocess.DEVNULL)
        rc, err = r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, "still running after 20 s"
    check(rc == 1 and "the viewer needs a terminal" in err,
          "demo without a terminal: refused (rc %s, %s)" % (rc, err.strip()[-200:]))


def main():
    with tempfile.TemporaryDirectory(prefix="gtrace-liveranks-") as d:
        want = one_process(d)
        two_nodes(d, want)
        no_data(d)
    demo_no_terminal()
    if bad:
        print("%d check(s) failed" % len(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
