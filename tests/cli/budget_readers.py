#!/usr/bin/env python3
"""budget_readers.py - the memory budget holds while reports read the whole
capture even when the trimmer thread never gets its turn (issue 16).

A loaded machine can leave the store's trimmer thread waiting while the
reports' scans map the cache file at gigabytes a second; the scans then
check the budget themselves (gt_store_read_tick: they drop what they read,
and everything at half the allowance over).  Here the thread is put to
sleep for an hour (GTRACE_STORE_TRIM_MS), which is what a starved thread
looks like, and each report over a 3M-event capture (about 150 MB of events
decoded) runs under --memory 16M, all twelve in one process.  The budget
must save at least half of what the store itself takes with no budget (peak
RSS as the kernel counts it, wait4's ru_maxrss: the unbudgeted run less the
run under 16M, against the unbudgeted `nvtx` report, which reads next to
nothing, less a 1,000-event capture's run): with the readers' checks the
run saves about 70 %; without them the scans map the store again (run one
at a time, nine of the twelve reports saved 12-18 %, api 38 %, nccl 67 %).
On a failure each report runs alone to name the ones at fault.  Outputs still
equal the unbudgeted ones (JSON).
"""
import os
import subprocess
import tempfile

BUILD = os.environ.get("GTRACE_BUILD", "build")
GTRACE = os.path.join(BUILD, "tui", "gtrace")
REPORTS = ["summary", "kernels", "memory", "api", "nccl", "steps", "breakdown", "pipeline",
           "gputime", "multigpu", "overview", "ops"]
STARVED = dict(os.environ, GTRACE_STORE_TRIM_MS="3600000")


def run_peak(args, env):
    """exit code, stdout and peak RSS (kB) of gtrace ARGS"""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen([GTRACE] + args, stdout=out, stderr=subprocess.PIPE, env=env)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return p.returncode, out.read(), err, ru.ru_maxrss


def saved_by(f, reps, store):
    """peak RSS of REPS in one run under 16M (trimmer asleep) and with no budget:
    (saved kB, budgeted kB, unbudgeted kB); outputs equal"""
    args = ["stats", f, "--report", ",".join(reps), "--format", "json"]
    rc0, a, e0, unb = run_peak(args + ["--memory", "0"], STARVED)
    assert rc0 == 0, (reps, e0)
    rc1, b, e1, bud = run_peak(args + ["--memory", "16M"], STARVED)
    assert rc1 == 0, (reps, e1)
    assert a == b, f"{reps}: the output differs under --memory 16M"
    return unb - bud, bud, unb


def main():
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "big.gtrace")
        tiny = os.path.join(tmp, "tiny.gtrace")
        for out, ev in ((f, "3M"), (tiny, "1000")):
            p = subprocess.run([GTRACE, "sim", "-o", out, "--ranks", "16", "--gpus", "8",
                                "--events", ev], capture_output=True)
            assert p.returncode == 0, p.stderr
        base = run_peak(["stats", tiny, "--report", "nvtx", "--memory", "0"], STARVED)[3]
        store = run_peak(["stats", f, "--report", "nvtx", "--memory", "0"], STARVED)[3] - base
        print(f"the store of 3M events: {store} kB at peak (a 1,000-event run: {base} kB)")
        assert store > 50000, (store, base)
        # every report in one run (one process: its peak is the worst scan's)
        saved, bud, unb = saved_by(f, REPORTS, store)
        print(f"{len(REPORTS)} reports in one run: peak RSS {bud} kB under 16M with the trimmer "
              f"thread asleep, {unb} kB with no budget: {saved} kB saved, "
              f"{100 * saved // store} % of the store")
        if saved * 2 >= store:
            return
        # name the reports that map the store back
        bad = []
        for rep in REPORTS:
            sv, b1, u1 = saved_by(f, [rep], store)
            print(f"  {rep}: {b1} kB under 16M, {u1} kB with none: {100 * sv // store} %")
            if sv * 2 < store:
                bad.append(rep)
        assert not bad, f"the budget did not hold while these reports read: {bad}"
        assert False, "the budget did not hold while the reports read in one run"


if __name__ == "__main__":
    main()
