#!/usr/bin/env python3
"""Independent pass over a raw Kineto JSON trace: the TensorBoard PyTorch
profiler plugin's operator table (torch_tb_profiler op_tree/op_agg rules),
written from the rules in docs/analyses.md, not from gtrace's code.

usage: ops_ref.py TRACE.json[.gz]   -> CSV: name,calls,host_total_us,
host_self_us,device_total_us,device_self_us (sorted by name)
       ops_ref.py TRACE.json[.gz] --mem DEV   (DEV: cpu or a CUDA ordinal)
  -> the plugin's memory statistics of that device per operator name (rows
  with any non-zero figure): name,calls,self_increase,self_alloc_count,
  self_alloc_bytes,increase,alloc_count,alloc_bytes; then a line
  "#records,N,unattributed,U"
       ops_ref.py TRACE.json[.gz] --group shape|stack
  -> the plugin's other groupings (op_agg.aggregate_ops keys name + str(input
  shape) / name + str(call stack), str(None) when the arg is absent), one
  tab-separated line per row: name, key, calls, host_total_us, host_self_us,
  device_total_us, device_self_us (sorted by name, key)
The name table also ends each line with has_call_stack (1 when some call of
the name has a non-empty "Call stack", the plugin's has_call_stack).
"""
import collections
import gzip
import json
import sys

OPS = {'cpu_op', 'operator'}
RUNTIME = {'runtime', 'cuda_runtime'}
DEVICE = {'kernel', 'memcpy', 'gpu_memcpy', 'memset', 'gpu_memset'}


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        d = json.load(f)
    return d['traceEvents'] if isinstance(d, dict) else d


def ext_of(e):
    a = e.get('args', {})
    x = a.get('external id')
    return a.get('External id') if x is None else x


def mem_device(e):
    a = e.get('args', {})
    return 'cpu' if a.get('Device Type') != 1 else str(a.get('Device Id'))


def group_key(e, group):
    a = e.get('args', {})
    return str(a.get('Input Dims') if group == 'shape' else a.get('Call stack'))


def main(path, mem=None, group=None):
    allev = load(path)
    evs = [e for e in allev if e.get('ph') == 'X']
    recs = collections.defaultdict(list)
    for e in allev:
        if e.get('ph') == 'i' and e.get('name') == '[memory]' and mem is not None \
           and mem_device(e) == mem:
            recs[(e['pid'], str(e['tid']))].append((e['ts'], e['args'].get('Bytes', 0)))
    nrec = sum(len(v) for v in recs.values())
    unatt = 0
    dev_by_corr = collections.defaultdict(int)      # correlation -> device time
    for e in evs:
        if e.get('cat', '').lower() in DEVICE:
            dev_by_corr[e['args'].get('correlation')] += e['dur']
    rt_by_ext = collections.defaultdict(list)        # external id -> [(dur, device)]
    for e in evs:
        if e.get('cat', '').lower() in RUNTIME:
            rt_by_ext[ext_of(e)].append((e['dur'], dev_by_corr.get(e['args'].get('correlation'), 0)))
    threads = collections.defaultdict(list)
    for e in evs:
        if e.get('cat', '').lower() in OPS:
            threads[(e['pid'], str(e['tid']))].append(e)
    for k in recs:
        if k not in threads:
            unatt += len(recs[k])
    agg = {}
    for key, ops in threads.items():
        ops.sort(key=lambda e: (e['ts'], -(e['ts'] + e['dur'])))
        # nest by containment; a partial overlap is dropped
        nodes = []
        stack = [{'end': float('inf'), 'kids': []}]
        for e in ops:
            n = {'e': e, 'name': e['name'], 'start': e['ts'], 'end': e['ts'] + e['dur'], 'kids': [],
                 'rts': []}
            while n['start'] >= stack[-1]['end']:
                stack.pop()
            if n['end'] > stack[-1]['end']:
                continue
            stack[-1]['kids'].append(n)
            stack.append(n)
            nodes.append(n)
        for n in nodes:     # runtimes by external id, first op with that id takes them
            n['rts'] = rt_by_ext.pop(ext_of(n['e']), [])

        def dedup(n):       # a lone child of the same name merges into its parent
            while len(n['kids']) == 1 and n['kids'][0]['name'] == n['name']:
                c = n['kids'][0]
                n['kids'], n['rts'] = c['kids'], c['rts']
                c['gone'] = True
            for c in n['kids']:
                dedup(c)
        for n in stack[0]['kids']:
            dedup(n)

        # records: to the innermost remaining node open at their time
        for n in nodes:
            n['ms'] = [0, 0, 0]
        live = [n for n in nodes if not n.get('gone')]
        items = sorted([(n['start'], 0, -n['end'], i) for i, n in enumerate(live)] +
                       [(ts, 1, 0, b) for ts, b in recs.get(key, [])])
        st = []
        for t, isrec, negend, x in items:
            while st and t >= st[-1]['end']:
                st.pop()
            if not isrec:
                st.append(live[x])
                continue
            n = st[-1] if st else None
            if n is None or not is_op(n['name']):
                unatt += 1
                continue
            n['ms'][0] += x
            if x > 0:
                n['ms'][1] += 1
                n['ms'][2] += x

        def fill(n):
            hs = n['end'] - n['start']
            dt = ds = 0
            n['mt'] = list(n['ms'])
            for c in n['kids']:
                fill(c)
                hs -= c['end'] - c['start']
                dt += c['dt']
                for k in range(3):
                    n['mt'][k] += c['mt'][k]
            for d, dv in n['rts']:
                hs -= d
                dt += dv
                ds += dv
            n['hs'], n['dt'], n['ds'] = hs, dt, ds
        for n in stack[0]['kids']:
            fill(n)
        for n in nodes:
            nm = n['name']
            if n.get('gone') or not is_op(nm):
                continue
            k = (nm, group_key(n['e'], group)) if group else nm
            a = agg.setdefault(k, [0] * 12)
            a[11] |= bool(n['e'].get('args', {}).get('Call stack'))
            a[0] += 1
            a[1] += n['end'] - n['start']
            a[2] += n['hs']
            a[3] += n['dt']
            a[4] += n['ds']
            for k in range(3):
                a[5 + k] += n['ms'][k]
                a[8 + k] += n['mt'][k]
    if group:
        for k in sorted(agg):
            print('%s\t%s\t%d\t%d\t%d\t%d\t%d' % (k[0], k[1], *agg[k][:5]))
        return
    if mem is None:
        print('name,calls,host_total_us,host_self_us,device_total_us,device_self_us,'
              'has_call_stack')
        for nm in sorted(agg):
            print('"%s",%d,%d,%d,%d,%d,%d' % (nm.replace('"', '""'), *agg[nm][:5], agg[nm][11]))
        return
    print('name,calls,self_increase,self_alloc_count,self_alloc_bytes,increase,alloc_count,'
          'alloc_bytes')
    for nm in sorted(agg):
        a = agg[nm]
        if any(a[5:11]):
            print('"%s",%d,%d,%d,%d,%d,%d,%d' % (nm.replace('"', '""'), a[0], *a[5:11]))
    print('#records,%d,unattributed,%d' % (nrec, unatt))


def is_op(nm):
    return not (nm.startswith('ProfilerStep#') or nm.startswith('Optimizer.')
                or (nm.startswith('enumerate(DataLoader)#') and nm.endswith('.__next__'))
                or nm.startswith('enumerate(DataPipe)#')
                or nm in ('DataParallel.forward', 'DistributedDataParallel.forward'))


if __name__ == '__main__':
    opt = sys.argv[2] if len(sys.argv) > 3 else None
    main(sys.argv[1], sys.argv[3] if opt == '--mem' else None,
         sys.argv[3] if opt == '--group' else None)
