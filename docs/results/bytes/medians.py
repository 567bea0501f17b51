#!/usr/bin/env python3
"""Medians of interleaved runs: prev-N.json against new-N.json (u64_noslowdown.sh).
Prints one line per (index, workload) and writes OUTDIR/summary.json."""
import collections, glob, json, statistics, sys

out = sys.argv[1]
runs = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(out + '/*-*.json')):
    side = f.rsplit('/', 1)[-1].split('-')[0]
    if side not in ('prev', 'new'):
        continue
    for r in json.load(open(f))['results']:
        runs[(r['index'], r['workload'])][side].append(r['run']['mops'])
summary = []
for (index, workload), s in runs.items():
    p, n = statistics.median(s['prev']), statistics.median(s['new'])
    summary.append({'index': index, 'workload': workload, 'prev_mops': s['prev'], 'new_mops': s['new'],
                    'prev_median': p, 'new_median': n, 'ratio': n / p})
    print(f"{index:14s} {str(workload):14s} prev {p:7.3f} new {n:7.3f} ratio {n / p:5.3f}")
json.dump(summary, open(out + '/summary.json', 'w'), indent=1)
