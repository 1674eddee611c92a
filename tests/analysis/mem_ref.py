#!/usr/bin/env python3
"""Independent pass over a raw Kineto JSON trace: allocated memory per
device from the [memory] events' Bytes (running sum in time order, file
order on equal times), as docs/analyses.md "Memory" defines it.

usage: mem_ref.py TRACE.json[.gz] -> CSV: device,records,allocs,alloc_bytes,
frees,freed_bytes,peak_bytes,peak_ts_us,end_bytes  (device: cpu or ordinal)
       mem_ref.py TRACE.json[.gz] --totals -> CSV: device,samples,
peak_allocated,peak_minus_bytes_peak_ns,peak_op,reserved_samples,
peak_reserved,end_allocated,end_reserved: the records' Total Allocated /
Total Reserved args (first highest in time order; the time of that peak
minus the time of the Bytes running sum's peak, in ns; the operator = the
innermost cpu_op open on the record's thread then, latest start then
shortest; end = the last in time order, file order on ties)
"""
import collections
import decimal
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


def totals(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        d = json.load(f, parse_float=decimal.Decimal)
    evs = d['traceEvents'] if isinstance(d, dict) else d
    recs = collections.defaultdict(list)
    ops = collections.defaultdict(list)
    for e in evs:
        if e.get('ph') == 'X' and e.get('cat', '').lower() in ('cpu_op', 'operator'):
            ops[(e['pid'], str(e['tid']))].append(e)
        if e.get('ph') == 'i' and e.get('name') == '[memory]' and 'Bytes' in e.get('args', {}):
            a = e['args']
            dev = str(a.get('Device Id')) if a.get('Device Type') == 1 else 'cpu'
            recs[dev].append(e)
    print('device,samples,peak_allocated,peak_minus_bytes_peak_ns,peak_op,reserved_samples,'
          'peak_reserved,end_allocated,end_reserved')
    for dev in sorted(recs):
        v = sorted(recs[dev], key=lambda e: e['ts'])
        s, bpeak, bts = 0, None, None
        for e in v:
            s += e['args']['Bytes']
            if bpeak is None or s > bpeak:
                bpeak, bts = s, e['ts']
        al = [e for e in v if 'Total Allocated' in e['args']]
        rs = [e for e in v if 'Total Reserved' in e['args']]
        if not al:
            continue
        pk = None
        for e in al:
            if pk is None or e['args']['Total Allocated'] > pk['args']['Total Allocated']:
                pk = e
        best = None
        for o in ops[(pk['pid'], str(pk['tid']))]:
            if o['ts'] <= pk['ts'] < o['ts'] + o['dur'] and (
                    best is None or o['ts'] > best['ts'] or
                    (o['ts'] == best['ts'] and o['dur'] < best['dur'])):
                best = o
        print('%s,%d,%d,%d,%s,%d,%d,%d,%d' % (
            dev, len(al), pk['args']['Total Allocated'], int((pk['ts'] - bts) * 1000),
            best['name'] if best else '', len(rs),
            max(e['args']['Total Reserved'] for e in rs) if rs else 0,
            al[-1]['args']['Total Allocated'], rs[-1]['args']['Total Reserved'] if rs else 0))


if __name__ == '__main__':
    if len(sys.argv) > 2 and sys.argv[2] == '--totals':
        totals(sys.argv[1])
    else:
        main(sys.argv[1])
