#!/usr/bin/env python3
"""Median of the run medians of repeated `pmindex substrate-bench --json` runs (docs/results/substrate.md).
usage: substrate_medians.py OUT.json RUN.json [RUN.json ...]"""
import json, statistics, sys

runs = [json.load(open(f)) for f in sys.argv[2:]]
figs = []
for i, f in enumerate(runs[0]['figures']):
    meds = [r['figures'][i]['median'] for r in runs]
    assert all(r['figures'][i]['name'] == f['name'] for r in runs)
    figs.append({'group': f['group'], 'name': f['name'], 'unit': f['unit'],
                 'median': round(statistics.median(meds), 3), 'run_medians': meds})
ctx = dict(runs[0]['context'])
ctx.pop('loadavg_1min', None)
ctx['loadavg_1min_per_run'] = [r['context'].get('loadavg_1min') for r in runs]
json.dump({'context': ctx,
           'command': 'pmindex substrate-bench --repeat 5 --clock wall --json runN.json (release build, 3 runs); '
                      'docs/results/substrate_medians.py docs/results/substrate.json run1.json run2.json run3.json',
           'figures': figs}, open(sys.argv[1], 'w'), indent=1)
for f in figs:
    print(f"{f['group']:8} {f['name']:55} {f['median']:10.2f} {f['unit']}  {f['run_medians']}")
