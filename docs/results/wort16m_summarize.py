#!/usr/bin/env python3
"""Medians over wort16m_bench.sh repetitions -> JSON + the markdown tables of docs/results/wort.md ("16M keys").
usage: wort16m_summarize.py OUT.json RUN_DIR"""
import glob, json, re, statistics, sys

out_path, d = sys.argv[1], sys.argv[2]
cells = {}  # (index, universe) -> figure -> [values over repetitions]
def add(idx, u, k, v):
    cells.setdefault((idx, u), {}).setdefault(k, []).append(v)

for f in sorted(glob.glob(f'{d}/r*-*.json')):
    m = re.search(r'/r(\d+)-(dense|sparse|clustered)(-w300)?\.json$', f)
    if not m:
        continue
    u, w300 = m.group(2), bool(m.group(3))
    for r in json.load(open(f))['results']:
        idx, wl = r['index'], r['workload']
        assert r['check'].get('ok', True) is not False, (f, idx, wl)
        if wl == 'read=1':
            pre = 'w300_' if w300 else ''
            add(idx, u, pre + 'insert_ns', 1e3 / r['load']['mops'])
            add(idx, u, pre + 'search_ns', 1e3 / r['run']['mops'])
            if not w300:
                add(idx, u, 'flushes_per_insert', r['load']['flushes_per_insert'])
                add(idx, u, 'fences_per_insert', r['load']['fences_per_insert'])
                if 'leaf_depth_avg' in r['space']:
                    add(idx, u, 'leaf_depth', r['space']['leaf_depth_avg'])
                add(idx, u, 'pm_bytes_per_record', r['space']['pm_bytes_per_record'])
                add(idx, u, 'records', r['load']['records'])
        elif wl.startswith('scan=1:'):
            add(idx, u, 'scan%s_ns' % wl.split(':')[1], 1e3 / r['run']['mops'])

med = {f'{i}/{u}': {k: {'median': statistics.median(v), 'runs': [round(x, 3) for x in v]} for k, v in c.items()}
       for (i, u), c in cells.items()}
json.dump({'command': 'docs/results/wort16m_bench.sh build/release /tmp/w16 3; '
                      'docs/results/wort16m_summarize.py docs/results/wort16m.json /tmp/w16',
           'machine': '2-core KVM guest, Intel Xeon (family 6 model 167), clwb, pools on /dev/shm; quiet (load < 1)',
           'notes': 'wall-clock ns per operation, one thread, persist mode; medians of the repetitions; '
                    'insert = the prefill in random order; scans of 0.001% and 0.01% of the keys',
           'medians': med}, open(out_path, 'w'), indent=1)

idxs = ['wort', 'woart', 'artcow', 'permart', 'fptree']
us = ['dense', 'sparse', 'clustered']
g = lambda i, u, k: med.get(f'{i}/{u}', {}).get(k, {}).get('median')
fmt = lambda v, p=0: '-' if v is None or v != v else f'{v:.{p}f}'
scans = sorted({k for c in med.values() for k in c if k.startswith('scan')}, key=lambda k: int(k[4:-3]))
print('| index | keys | insert ns | search ns | flush/insert | fence/insert | leaf depth | PM B/record | '
      'insert ns, 300 ns media | search ns, 300 ns media | ' + ' | '.join(f'scan {k[4:-3]} ns' for k in scans) + ' |')
print('|---' * (10 + len(scans)) + '|')
for u in us:
    for i in idxs:
        print(f'| {i} | {u} | {fmt(g(i,u,"insert_ns"))} | {fmt(g(i,u,"search_ns"))} | {fmt(g(i,u,"flushes_per_insert"),2)} | '
              f'{fmt(g(i,u,"fences_per_insert"),2)} | {fmt(g(i,u,"leaf_depth"),2)} | {fmt(g(i,u,"pm_bytes_per_record"),1)} | '
              f'{fmt(g(i,u,"w300_insert_ns"))} | {fmt(g(i,u,"w300_search_ns"))} | '
              + ' | '.join(fmt(g(i, u, k)) for k in scans) + ' |')
