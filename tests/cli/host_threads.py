#!/usr/bin/env python3
"""host_threads.py TRACE.json.gz - the OS threads (pid, tid, both numbers)
that hold CPU events (cat Operator/cpu_op, Runtime/cuda_runtime) in a Kineto
trace: the golden of cli_stats host_threads_real_only (ResNet-50: 2)."""
import collections, gzip, json, sys

d = json.load(gzip.open(sys.argv[1]))
cpu = {"operator", "cpu_op", "runtime", "cuda_runtime", "python_function", "user_annotation"}
t = collections.Counter()
for e in d["traceEvents"]:
    if e.get("ph") == "X" and str(e.get("cat", "")).lower() in cpu and \
       isinstance(e.get("pid"), int) and str(e.get("tid")).isdigit():
        t[(e["pid"], int(e["tid"]))] += 1
for k, v in sorted(t.items()):
    print("pid %d tid %d: %d events" % (k[0], k[1], v))
print("threads", len(t))
