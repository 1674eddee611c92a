#!/usr/bin/env python3
"""Independent pass over a raw Kineto JSON trace: the PyTorch TensorBoard
plugin's step-time breakdown of the average step (the rules in
../shared/testdata/MANIFEST.md and docs/analyses.md), written from the
rules, not from gtrace's code.

usage: breakdown_ref.py TRACE.json[.gz] -> CSV Category,Average (us)
       breakdown_ref.py --steps TRACE.json[.gz] -> CSV Step,Category,Time (us),
       one row per kept step and category (Kernel ... Other, Total)
"""
import gzip
import json
import sys

CATS = ['Kernel', 'Memcpy', 'Memset', 'Communication', 'Runtime', 'DataLoader', 'CPU Exec', 'Other']


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        d = json.load(f)
    return d['traceEvents'] if isinstance(d, dict) else d


def cat_of(e):
    c = e.get('cat', '').lower()
    n = e.get('name', '')
    if c == 'kernel':
        return 3 if n.startswith('nccl') else 0
    if c in ('memcpy', 'gpu_memcpy'):
        return 1
    if c in ('memset', 'gpu_memset'):
        return 2
    if c in ('runtime', 'cuda_runtime'):
        return 4
    if c in ('operator', 'cpu_op', 'python_function'):
        if n.startswith('ProfilerStep#'):
            return None
        if n.startswith('enumerate(DataLoader)#') and n.endswith('.__next__'):
            return 5
        return 6
    return None


def main(path, per_step=False):
    evs = [e for e in load(path) if e.get('ph') == 'X']
    steps = sorted((e['ts'], e['ts'] + e['dur'], int(e['name'].split('#')[1])) for e in evs
                   if e.get('name', '').startswith('ProfilerStep#'))
    gpu_by_corr = {}
    for e in evs:
        if cat_of(e) in (0, 1, 2, 3):
            c = e['args'].get('correlation')
            gpu_by_corr.setdefault(c, []).append(e['ts'] + e['dur'])
    rts = [e for e in evs if cat_of(e) == 4]
    win = []
    prev_end = None
    acts = []
    for s, t, n in steps:
        last, na = None, 0
        for r in rts:
            if r['ts'] >= s and r['ts'] + r['dur'] <= t:
                ends = gpu_by_corr.get(r['args'].get('correlation'), [])
                na += len(ends)
                if ends:
                    last = max(ends) if last is None else max(last, max(ends))
        a = s if prev_end is None else max(prev_end, s)
        b = t if last is None else max(t, last)
        win.append((a, b, n))
        acts.append(na)
        prev_end = b
    while acts and acts[-1] == 0:
        acts.pop()
        win.pop()
    if len(acts) > 1 and acts[-1] < 0.8 * acts[-2]:
        acts.pop()
        win.pop()
    ivs = [(e['ts'], e['ts'] + e['dur'], cat_of(e)) for e in evs if cat_of(e) is not None]
    tot = [0.0] * 8
    rows = []
    for a, b, n in win:
        before = list(tot)
        pts = {a, b}
        cl = []
        for s, t, c in ivs:
            s, t = max(s, a), min(t, b)
            if s < t:
                cl.append((s, t, c))
                pts.add(s)
                pts.add(t)
        pts = sorted(pts)
        idx = {p: i for i, p in enumerate(pts)}
        delta = [[0] * 7 for _ in pts]
        for s, t, c in cl:
            delta[idx[s]][c] += 1
            delta[idx[t]][c] -= 1
        act = [0] * 7
        for i in range(len(pts) - 1):
            for c in range(7):
                act[c] += delta[i][c]
            seg = pts[i + 1] - pts[i]
            k = next((c for c in range(7) if act[c] > 0), 7)
            tot[k] += seg
        rows += [(n, CATS[k], tot[k] - before[k]) for k in range(8)]
        rows.append((n, 'Total', sum(tot) - sum(before)))
    if per_step:
        print('Step,Category,Time (us)')
        for n, c, v in rows:
            print('%d,%s,%.3f' % (n, c, v))
        return
    print('Category,Average (us)')
    for k in range(8):
        print('%s,%.3f' % (CATS[k], tot[k] / len(win)))
    print('Total,%.3f' % (sum(tot) / len(win)))


if __name__ == '__main__':
    if sys.argv[1] == '--steps':
        main(sys.argv[2], True)
    else:
        main(sys.argv[1])
