#!/usr/bin/env python3
"""Independent pass over a raw Kineto JSON trace: allocated memory per
device from the [memory] events' Bytes (running sum in time order, file
order on equal times), as docs/analyses.md "Memory" defines it.

usage: mem_ref.py TRACE.json[.gz] -> CSV: device,records,allocs,alloc_bytes,
frees,freed_bytes,peak_bytes,peak_ts_us,end_bytes  (device: cpu or ordinal)
"""
import collections
import gzip
import json
import sys


def main(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        d = json.load(f)
    evs = d['traceEvents'] if isinstance(d, dict) else d
    by_dev = collections.defaultdict(list)
    for e in evs:
        if e.get('ph') == 'i' and e.get('name') == '[memory]' and 'Bytes' in e.get('args', {}):
            a = e['args']
            dev = str(a.get('Device Id')) if a.get('Device Type') == 1 else 'cpu'
            by_dev[dev].append((e['ts'], a['Bytes']))
    print('device,records,allocs,alloc_bytes,frees,freed_bytes,peak_bytes,peak_ts_us,end_bytes')
    for dev in sorted(by_dev):
        recs = sorted(by_dev[dev], key=lambda r: r[0])   # stable: file order on ties
        s = 0
        peak, peak_ts = None, None
        for ts, b in recs:
            s += b
            if peak is None or s > peak:
                peak, peak_ts = s, ts
        al = [b for _, b in recs if b > 0]
        fr = [b for _, b in recs if b < 0]
        print('%s,%d,%d,%d,%d,%d,%d,%d,%d' % (dev, len(recs), len(al), sum(al), len(fr),
                                              -sum(fr), peak, peak_ts, s))


if __name__ == '__main__':
    main(sys.argv[1])
