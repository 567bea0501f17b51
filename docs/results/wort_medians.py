#!/usr/bin/env python3
"""Medians over repeated wort_bench.sh runs (docs/results/wort.md, quiet-machine table).
usage: wort_medians.py OUT.json RUN_DIR [RUN_DIR ...]"""
import json, os, statistics, sys

cells = {}
for d in sys.argv[2:]:
    for u in ['dense', 'sparse', 'clustered']:
        for tag in ['read', 'read-w300', 'scan10', 'scan100']:
            f = f'{d}/{u}-{tag}.json'
            if not os.path.exists(f):
                continue
            for r in json.load(open(f))['results']:
                c = cells.setdefault((r['index'], u, tag), {'insert_ns': [], 'op_ns_cpu': [], 'flushes': []})
                c['insert_ns'].append(1e3 / r['load']['mops'])
                c['op_ns_cpu'].append(1e3 / r['run']['mops_cpu'])
                c['flushes'].append(r['load']['flushes_per_insert'])
med = lambda v: round(statistics.median(v), 1)
out = {f'{i}/{u}/{t}': {'runs': len(c['insert_ns']), 'insert_ns_wall': med(c['insert_ns']),
                        'op_ns_cpu': med(c['op_ns_cpu']), 'flushes_per_insert': round(statistics.median(c['flushes']), 2)}
       for (i, u, t), c in cells.items()}
json.dump({'command': 'docs/results/wort_bench.sh <release build> <dir>, 3 times; then this script', 'medians': out},
          open(sys.argv[1], 'w'), indent=1)
for tag, what in [('read', 'insert ns (wall) / search ns (CPU)'), ('read-w300', 'same, --pm-write-ns 300'),
                  ('scan10', 'range query of 10 keys: ns (CPU)'), ('scan100', 'range query of 100 keys: ns (CPU)')]:
    print(f'\n### {what}\n\n| index | dense | sparse | clustered |\n|---|---|---|---|')
    for idx in ['wort', 'woart', 'artcow', 'permart', 'fptree', 'canary']:
        row = []
        for u in ['dense', 'sparse', 'clustered']:
            e = out.get(f'{idx}/{u}/{tag}')
            row.append('-' if not e else (f"{e['insert_ns_wall']:.0f} / {e['op_ns_cpu']:.0f}" if tag.startswith('read')
                                          else f"{e['op_ns_cpu']:.0f}") + (f" (n={e['runs']})" if e and e['runs'] < 3 else ''))
        print(f'| {idx} | ' + ' | '.join(row) + ' |')
