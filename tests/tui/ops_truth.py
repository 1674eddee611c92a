"""ops_truth.py - an independent pass over a raw Kineto JSON trace for the
viewer's Operators page test (tui_tmux.py case 'ops'): the calls of one
operator name and the GPU work its longest call launched, counted from the
JSON alone (no gtrace code):

  calls   = cpu_op ("Operator") events (ph X) of that name, a call lying inside a call of
            the same name on its thread not counted again
  longest = the call with the largest dur
  work    = kernel / gpu_memcpy / gpu_memset events whose args.correlation is
            that of a cuda_runtime event on the longest call's thread
            starting inside the call
"""
import gzip
import json


# categories of the older and the newer Kineto spelling
OPS = ("cpu_op", "operator")
RUNTIME = ("cuda_runtime", "runtime")
GPU = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")


def cat(e):
    return str(e.get("cat", "")).lower()


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def op_calls(evs, name):
    """(number of calls, total dur us, longest call event)"""
    by_thread = {}
    for e in evs:
        if e.get("ph") == "X" and cat(e) in OPS and e.get("name") == name:
            by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    n, total, longest = 0, 0.0, None
    for calls in by_thread.values():
        calls.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
        cover = None
        for e in calls:
            ts, dur = float(e["ts"]), float(e["dur"])
            if cover is not None and ts < cover and ts + dur <= cover:
                continue
            cover = ts + dur
            n += 1
            total += dur
            if longest is None or dur > float(longest["dur"]):
                longest = e
    return n, total, longest


def call_work(evs, call):
    """(count, total dur us) of the GPU work launched inside `call`"""
    t0, t1 = float(call["ts"]), float(call["ts"]) + float(call["dur"])
    corr = set()
    for e in evs:
        if (e.get("ph") == "X" and cat(e) in RUNTIME and
                e.get("pid") == call.get("pid") and e.get("tid") == call.get("tid") and
                t0 <= float(e["ts"]) < t1 and "correlation" in e.get("args", {})):
            corr.add(e["args"]["correlation"])
    n, total = 0, 0.0
    for e in evs:
        if (e.get("ph") == "X" and cat(e) in GPU and
                e.get("args", {}).get("correlation") in corr):
            n += 1
            total += float(e["dur"])
    return n, total
